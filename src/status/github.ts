/**
 * GitHub: one check run per agent through the Checks API, or, where the token may not create
 * check runs, one commit status per agent (docs/github-actions.md, "Commit statuses").
 */

import { inertMarkdown } from "../markdown.ts";
import type { Outcome } from "../outcome.ts";
import {
  type ForgeEffects,
  ForgeError,
  type ForgeHttp,
  githubApi,
} from "../pr_comment/forge_http.ts";
import { summaryMarkdown } from "../report/model.ts";
import { clip } from "../sanitize.ts";
import { outcomeLine, outcomeText } from "../words.ts";
import { type StatusEnd, type StatusForge, statusName, type StatusStart } from "./commit_status.ts";

/** The outcomes a status is completed with (a run not waited for gets none). */
export type EndedOutcome = Exclude<Outcome, "triggered">;

/**
 * A check run's conclusion per outcome. A gate that could not be checked is a `failure`:
 * GitHub's required checks let `neutral` pass, and an unchecked gate must never pass.
 *
 * @example
 * ```ts
 * CHECK_CONCLUSIONS.unchecked; // "failure"
 * ```
 */
export const CHECK_CONCLUSIONS: Readonly<Record<EndedOutcome, string>> = {
  passed: "success",
  failed: "failure",
  unchecked: "failure",
  timed_out: "timed_out",
  interrupted: "cancelled",
};

/**
 * A commit status's state per outcome (the fallback when check runs are refused).
 *
 * @example
 * ```ts
 * COMMIT_STATES.timed_out; // "error"
 * ```
 */
export const COMMIT_STATES: Readonly<Record<EndedOutcome, string>> = {
  passed: "success",
  failed: "failure",
  unchecked: "error",
  timed_out: "error",
  interrupted: "error",
};

// GitHub's limits: a check run's output summary, a commit status's description.
const _SUMMARY_MAX = 65_535;
const _DESCRIPTION_MAX = 140;

/** Options of {@linkcode GithubStatuses}. */
export interface GithubStatusesOptions extends ForgeEffects {
  /** The token (`GITHUB_TOKEN`); sent as `Authorization: Bearer` to `apiUrl`'s origin only. */
  readonly token: string;
  /** The API root (`GITHUB_API_URL`). */
  readonly apiUrl: string;
  /** `owner/name`. */
  readonly repository: string;
  /** The commit the gate evaluated: the pull request's head. */
  readonly sha: string;
  /** The `User-Agent` header, which GitHub requires. */
  readonly userAgent: string;
  /** Prints one line (the switch to commit statuses). */
  readonly warn: (line: string) => void;
  /** The wall clock, for `started_at` and `completed_at`. */
  readonly now: () => number;
}

/**
 * The check runs of one commit, one per agent; commit statuses once check runs are refused.
 *
 * @example
 * ```ts
 * const statuses = new GithubStatuses({
 *   token: "ghs_example",
 *   apiUrl: "https://api.github.com",
 *   repository: "acme/widgets",
 *   sha: "4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c",
 *   userAgent: "service-ci/1.0.0",
 *   warn: console.error,
 *   now: Date.now,
 * });
 * // await statuses.start({ agentId: "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10", runId: "run_1", link: null });
 * ```
 */
export class GithubStatuses implements StatusForge {
  /** The forge's name for messages. */
  readonly forge = "GitHub";
  readonly #http: ForgeHttp;
  readonly #repo: string;
  readonly #sha: string;
  readonly #warn: (line: string) => void;
  readonly #now: () => number;
  readonly #checkRuns = new Map<string, number>();
  #mode: "checks" | "statuses" = "checks";

  /** The commit's statuses on GitHub. */
  constructor(options: GithubStatusesOptions) {
    this.#repo = `/repos/${options.repository.split("/").map(encodeURIComponent).join("/")}`;
    this.#sha = options.sha;
    this.#warn = options.warn;
    this.#now = options.now;
    this.#http = githubApi(options);
  }

  /** Creates the agent's check run `in_progress` (or a `pending` commit status). */
  async start(start: StatusStart): Promise<void> {
    const summary = start.runId === null
      ? "The gate is running."
      : `Run ${inertMarkdown(start.runId)} is running; the verdict follows when the gate ends.`;
    await this.#write(start.agentId, {
      check: {
        status: "in_progress",
        started_at: new Date(this.#now()).toISOString(),
        ...(start.link === null ? {} : { details_url: start.link }),
        output: { title: "waiting for the verdict", summary },
      },
      state: "pending",
      description: "waiting for the verdict",
      link: start.link,
    });
  }

  /** Completes the agent's check run with its conclusion (or sets the final commit status). */
  async end({ agent, report, link }: StatusEnd): Promise<void> {
    const outcome = agent.outcome as EndedOutcome;
    const title = outcomeText(agent.outcome);
    await this.#write(agent.agentId, {
      check: {
        status: "completed",
        conclusion: CHECK_CONCLUSIONS[outcome],
        completed_at: new Date(this.#now()).toISOString(),
        ...(link === null ? {} : { details_url: link }),
        output: { title, summary: clip(summaryMarkdown(report), _SUMMARY_MAX) },
      },
      state: COMMIT_STATES[outcome],
      description: outcomeLine(agent.outcome),
      link,
    });
  }

  /** How to enable what failed. */
  advice(error: unknown): string {
    const kind = error instanceof ForgeError ? error.kind : null;
    if (kind === "unauthorized") return "Check GITHUB_TOKEN (set it to ${{ github.token }}).";
    if (kind === "forbidden" || kind === "not_found") {
      return this.#mode === "checks"
        ? "Give the job `permissions: checks: write`."
        : "Give the job `permissions: statuses: write` (`checks: write` for check runs).";
    }
    if (kind === "rate_limited") return "GitHub's API rate limit is used up for now.";
    return "";
  }

  /** A refused token or a refused redirect: another attempt would only repeat it. */
  final(error: unknown): boolean {
    return error instanceof ForgeError &&
      ["unauthorized", "forbidden", "not_found", "refused", "unusable"].includes(error.kind);
  }

  async #write(
    agentId: string,
    write: {
      readonly check: Record<string, unknown>;
      readonly state: string;
      readonly description: string;
      readonly link: string | null;
    },
  ): Promise<void> {
    if (this.#mode === "checks") {
      try {
        await this.#checkRun(agentId, write.check);
        return;
      } catch (error) {
        if (!(error instanceof ForgeError && ["forbidden", "not_found"].includes(error.kind))) {
          throw error;
        }
        if (this.#mode === "checks") {
          this.#mode = "statuses";
          this.#warn(
            `service-ci: GitHub did not let the token create check runs (${error.message}); commit statuses instead — give the job \`checks: write\` for check runs`,
          );
        }
      }
    }
    await this.#http.request("POST", `${this.#repo}/statuses/${this.#sha}`, {
      state: write.state,
      context: statusName(agentId),
      description: clip(write.description, _DESCRIPTION_MAX),
      ...(write.link === null ? {} : { target_url: write.link }),
    });
  }

  async #checkRun(agentId: string, fields: Record<string, unknown>): Promise<void> {
    const id = this.#checkRuns.get(agentId);
    if (id !== undefined) {
      await this.#http.request("PATCH", `${this.#repo}/check-runs/${id}`, fields);
      return;
    }
    const answer = await this.#http.request("POST", `${this.#repo}/check-runs`, {
      name: statusName(agentId),
      head_sha: this.#sha,
      external_id: agentId.toLowerCase(),
      ...fields,
    });
    const created = (answer.data as { id?: unknown } | null)?.id;
    if (typeof created === "number" && Number.isSafeInteger(created)) {
      this.#checkRuns.set(agentId, created);
    }
  }
}
