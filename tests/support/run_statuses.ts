/**
 * The run status table of contract §2, spelled as the contract spells it: written out here,
 * apart from src/service/verdict.ts, so the verdict tests check the code against the contract.
 */

/** Statuses of a run still going: the gate keeps polling. */
export const IN_PROGRESS: readonly string[] = [
  "queued",
  "pending",
  "created",
  "scheduled",
  "running",
  "in_progress",
  "evaluating",
];

/** Statuses of a run that ended without a verdict. */
export const ENDED_WITHOUT_VERDICT: readonly string[] = [
  "error",
  "errored",
  "cancelled",
  "canceled",
  "aborted",
  "timed_out",
  "timeout",
  "expired",
  "rejected",
];

/** Statuses of a finished run, whose results carry the verdict. */
export const FINISHED: readonly string[] = [
  "completed",
  "complete",
  "succeeded",
  "success",
  "finished",
  "done",
  "passed",
  "failed",
];
