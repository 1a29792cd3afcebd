/**
 * What the commit statuses of every forge share (the per-agent name, the writer's interface), and
 * with the pull-request comment: the queue that turns a failed write into one line.
 */

import { OPTIONS } from "../../config/options.ts";
import type { RequestOptions } from "../http.ts";
import type { AgentOutcome, Outcome, RunReport } from "../../report/outcome.ts";
import { outcomeLine } from "../../report/words.ts";
import { HttpFailure } from "../../http/failure.ts";

/** Stable from run to run, so branch protection can require it. */
export function statusName(agentId: string): string {
  return `service-ci / ${agentId.toLowerCase()}`;
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

/** A commit status's description: the verdict, or that it is still to come. */
export function statusDescription(outcome: Outcome): string {
  return outcome === "triggered" ? "waiting for the verdict" : outcomeLine(outcome);
}

/** GitHub and GitLab answer a token without the permission 403 or 404. */
export function lacksPermission(error: unknown): error is HttpFailure {
  return error instanceof HttpFailure && ["forbidden", "not_found"].includes(error.kind);
}

/** What a refused token or a used-up rate limit needs, said alike by the statuses and the comment. */
export function tokenAdvice(forge: "GitHub" | "GitLab", error: unknown): string | undefined {
  const kind = error instanceof HttpFailure ? error.kind : null;
  if (kind === "rate_limited") return `${forge}'s API rate limit is used up for now.`;
  if (kind !== "unauthorized") return undefined;
  return forge === "GitHub"
    ? `Check ${OPTIONS.githubToken.variable} (set it to \${{ github.token }}).`
    : `Check ${OPTIONS.gitlabToken.variable}: a project access token with the api scope.`;
}

/**
 * The statuses and the comment write alike: writes under one key go one after the other; only
 * the first failure is shown, as `warn`'s one line saying `subject` ("the pull-request comment
 * was") was not written, and one that another attempt would only repeat stops every further write.
 */
export function writeQueue(
  writer: Pick<StatusForge, "final" | "advice"> & { readonly subject: string },
  warn: (line: string) => void,
): (key: string, write: () => Promise<void>, last: boolean) => Promise<void> {
  const chains = new Map<string, Promise<void>>();
  let givenUp = false;
  let warned = false;
  return (key, write, last) => {
    const chain = (chains.get(key) ?? Promise.resolve()).then(async () => {
      if (givenUp) return;
      try {
        await write();
      } catch (error) {
        // A rate limit outlasting the time left: the forge's one line counts those given up.
        if (error instanceof HttpFailure && error.givenUp) return;
        const final = writer.final(error);
        if (final) givenUp = true;
        // A passing fault of an in-progress write says nothing yet: the final write tries again.
        if ((!final && !last) || warned) return;
        warned = true;
        const what = error instanceof Error ? error.message : String(error);
        const advice = writer.advice(error);
        warn(
          `service-ci: ${writer.subject} not written: ${what}.${
            advice === "" ? "" : ` ${advice}`
          } The gate's verdict and exit code are not affected.`,
        );
      }
    });
    chains.set(key, chain);
    return chain;
  };
}
