/** What a forge is to service-ci: each forge's own file holds everything particular to it. */

import type { CiContext, CiMetadata } from "../ci/detect.ts";
import type { Read } from "../ci/provider.ts";
import type { Config } from "../config/load.ts";
import type { FailureKind } from "../http/failure.ts";
import type { Concurrency } from "../http/slots.ts";
import type { AgentOutcome, RunReport } from "../report/outcome.ts";
import type { Exchange, ExchangeSetup, ForgeHttp, RequestOptions } from "./http.ts";
export type ForgeUse = "comment" | "statuses" | "insights";

/** The forge's settings (its token and address options) and the CI's variables. */
export type ForgeConfig = Partial<Config>;

export interface ForgeTarget {
  /** {@linkcode Forge.name} */
  readonly forge: string;
  /** The API root, or the commit's API address through a proxy. */
  readonly apiUrl: string;
  /** The token and the variable it came from; none through a proxy that signs. */
  readonly token: { readonly value: string; readonly variable: string } | null;
  readonly proxy: string | null;
  /** GitHub's `owner/name`, GitLab's project id, Bitbucket's `workspace/slug`. */
  readonly repository: string;
  /** Lower-case hex, and which commit it is as `--dry-run` says it: "the commit built". */
  readonly commit: { readonly sha: string; readonly of: string };
  /** The pull request's number or the merge request's iid. */
  readonly change: number | null;
  /** GitLab: the pipeline's ref (a status carries it). */
  readonly ref: string | null;
  /** GitLab: set only when the status's commit is the pipeline's own. */
  readonly pipelineId: number | null;
  /** Tells this gate's comment from another's. */
  readonly gate: { readonly workflow: string; readonly job: string };
}

/** Why nothing is written to a forge, as one line for the user. */
export type ForgeSkip = { readonly skip: string };

export type ForgeConnection =
  & Pick<ForgeTarget, "apiUrl" | "token" | "repository" | "gate">
  & Partial<Pick<ForgeTarget, "proxy" | "ref" | "pipelineId">>;

/** What a forge's target is made from; `skip` words a reason as this use's one line. */
export interface TargetInput {
  readonly config: ForgeConfig;
  readonly read: Read;
  readonly metadata: CiMetadata;
  readonly context: CiContext | undefined;
  readonly use: ForgeUse;
  /** A valid SHA, or null (allowed for a comment alone). */
  readonly commit: string | null;
  skip(why: string): ForgeSkip;
}

export interface Forge {
  readonly name: string;
  /** The CI provider (`ci/`) whose builds write to it. */
  readonly provider: string;
  readonly concurrency: Concurrency;
  /** Takes a Code Insights report (`use` "insights"), whichever CI's metadata is given. */
  readonly codeInsights?: true;
  /** The CI's variable for the commit, read when the metadata has none (an abbreviated SHA). */
  readonly commitVariable?: string;
  /** Which commit the metadata's is, as `--dry-run` says it; null: "the commit built". */
  commitOf(input: TargetInput): string | null;
  connect(input: TargetInput): ForgeConnection | ForgeSkip;
  exchange(target: ForgeTarget, setup: ExchangeSetup): Exchange;
  statuses(target: ForgeTarget, http: ForgeHttp, effects: StatusEffects): StatusForge;
  readonly tokenAdvice?: string;
  /** The pull or merge request comment; none: this forge gets no comment. */
  readonly comment?: CommentSide;
}

/** A forge's pull or merge request, and its comments' API. */
export interface CommentSide {
  /** "pull request" and `#`, or "merge request" and `!`. */
  readonly noun: string;
  readonly sign: string;
  change(input: TargetInput): number | ForgeSkip;
  thread(target: ForgeTarget): ThreadApi;
  readonly advice: Partial<Record<FailureKind, string>>;
}

/** Where a change's comments are listed and written, and how their authors are named. */
export interface ThreadApi {
  /** Listed and created here; the first page with its query. */
  readonly list: string;
  readonly firstPage: string;
  /** One comment is `${one}/${id}`. */
  readonly one: string;
  readonly update: "PATCH" | "PUT";
  readonly noun: string;
  author(comment: unknown): string | number | null;
  /** Who the token writes as, from `GET /user`'s answer (null when it may not read it). */
  self(user: unknown): string | number | null;
  readonly createdBySelf: boolean;
}

export interface StatusEffects {
  readonly warn: (line: string) => void;
  readonly now: () => number;
  /** The CI job's page, a status's link when no run gave one. */
  readonly buildUrl: string | null;
}

/** Each method throws on failure; the output turns that into one line. */
export interface StatusForge {
  readonly forge: string;
  /** In progress until `ended` is given; creates the status if no earlier write did. */
  write(
    agentId: string,
    status: {
      readonly runId: string | null;
      readonly link: string | null;
      readonly ended?: { readonly agent: AgentOutcome; readonly report: RunReport };
    },
    options: RequestOptions,
  ): Promise<void>;
  /** Whether `error` would only repeat on another attempt (a refused token, a missing scope). */
  final(error: unknown): boolean;
  /** How to enable the writes after `error`, one sentence (may be empty). */
  advice(error: unknown): string;
}
