/**
 * How every forge write fails well, statuses and comment alike: one queue turning a failed write
 * into one line, the recovery of a create whose answer was lost, a refused token's advice.
 */

import { type FailureKind, HttpFailure } from "../http/failure.ts";
import type { Outcome } from "../report/outcome.ts";
import { outcomeLine } from "../report/words.ts";
import type { Forge, StatusForge } from "./forge.ts";

/** Stable from run to run, so branch protection can require it. */
export function statusName(agentId: string): string {
  return `service-ci / ${agentId.toLowerCase()}`;
}

export function statusDescription(outcome: Outcome): string {
  return outcome === "triggered" ? "waiting for the verdict" : outcomeLine(outcome);
}

/** Whether an error is an {@linkcode HttpFailure} of one of `kinds`. */
export function failedAs(...kinds: FailureKind[]): (error: unknown) => error is HttpFailure {
  return (error): error is HttpFailure =>
    error instanceof HttpFailure && kinds.includes(error.kind);
}

/** GitHub and GitLab answer a token without the permission 403 or 404. */
export const lacksPermission = failedAs("forbidden", "not_found");

/** A create that got no answer (a 5xx, no answer) may have worked: look before another. */
export const mayHaveCreated = failedAs("server", "network");

/** What a refused token or a used-up rate limit needs, said alike by the statuses and the comment. */
export function tokenAdvice(forge: Forge, error: unknown): string | undefined {
  const kind = error instanceof HttpFailure ? error.kind : null;
  if (kind === "rate_limited") return `${forge.name}'s API rate limit is used up for now.`;
  return kind === "unauthorized" ? forge.tokenAdvice : undefined;
}

/**
 * Writes under one key run in turn; only the first failure shows, one `warn` line: `subject` ("the
 * pull-request comment was") not written. One a retry would only repeat stops all later writes.
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
