/** Reads a run document (contract §2): still going, passed, failed, or unchecked. Pure. */

/**
 * Statuses of a run still going (contract §2), folded by {@linkcode normalizeStatus}: poll again,
 * whatever `results` says.
 *
 * @example
 * ```ts
 * IN_PROGRESS.has(normalizeStatus("In-Progress")); // true
 * ```
 */
export const IN_PROGRESS: ReadonlySet<string> = new Set([
  "queued",
  "pending",
  "created",
  "scheduled",
  "running",
  "in_progress",
  "evaluating",
]);

/**
 * Statuses of a run that ended without a verdict (contract §2): the gate cannot be checked.
 *
 * @example
 * ```ts
 * ENDED_WITHOUT_VERDICT.has(normalizeStatus("Cancelled")); // true
 * ```
 */
export const ENDED_WITHOUT_VERDICT: ReadonlySet<string> = new Set([
  "error",
  "errored",
  "cancelled",
  "canceled",
  "aborted",
  "timed_out",
  "timeout",
  "expired",
  "rejected",
]);

/**
 * Statuses of a finished run (contract §2): the verdict is `results.gate.passed`.
 *
 * @example
 * ```ts
 * FINISHED.has(normalizeStatus("completed")); // true
 * ```
 */
export const FINISHED: ReadonlySet<string> = new Set([
  "completed",
  "complete",
  "succeeded",
  "success",
  "finished",
  "done",
  "passed",
  "failed",
]);

/**
 * What a run document says. `status` is the service's own spelling (not yet sanitized),
 * or `null` when the document has no string status.
 */
export type RunState =
  | { readonly kind: "in_progress"; readonly status: string | null }
  | { readonly kind: "passed"; readonly status: string | null }
  | { readonly kind: "failed"; readonly status: string | null }
  | { readonly kind: "unchecked"; readonly status: string | null; readonly reason: string };

/**
 * Folds a status for comparison: lower case, `-` and space read as `_`.
 *
 * @example
 * ```ts
 * normalizeStatus("In-Progress"); // "in_progress"
 * ```
 */
export function normalizeStatus(status: string): string {
  return status.trim().toLowerCase().replace(/[-\s]/g, "_");
}

/**
 * Reads the state of a run from the JSON object the service answered.
 * The gate passes only when the run is finished and `results.gate.passed` is exactly `true`.
 *
 * @example
 * ```ts
 * readRun({ status: "completed", results: { gate: { passed: true } } }).kind; // "passed"
 * readRun({ status: "completed", results: { gate: { passed: "true" } } }).kind; // "unchecked"
 * readRun({ status: "running", results: { gate: { passed: true } } }).kind; // "in_progress"
 * ```
 */
export function readRun(document: Readonly<Record<string, unknown>>): RunState {
  const ownStatus = _own(document, "status");
  const status = typeof ownStatus === "string" ? ownStatus : null;
  const folded = status === null ? null : normalizeStatus(status);
  const passed = _gatePassed(document);

  if (folded !== null && IN_PROGRESS.has(folded)) return { kind: "in_progress", status };
  if (folded !== null && ENDED_WITHOUT_VERDICT.has(folded)) {
    return { kind: "unchecked", status, reason: "the run ended without a verdict" };
  }
  if (folded !== null && FINISHED.has(folded)) {
    if (passed === true) return { kind: "passed", status };
    if (passed === false) return { kind: "failed", status };
    return {
      kind: "unchecked",
      status,
      reason: `the run finished but results.gate.passed is ${_describe(passed)}, not true or false`,
    };
  }
  // Unknown or missing status: a boolean verdict means finished; anything else, keep waiting.
  if (passed === true) return { kind: "passed", status };
  if (passed === false) return { kind: "failed", status };
  return { kind: "in_progress", status };
}

const MISSING = Symbol("missing");

function _gatePassed(document: Readonly<Record<string, unknown>>): unknown {
  const results = _own(document, "results");
  if (!_isObject(results)) return MISSING;
  const gate = _own(results, "gate");
  if (!_isObject(gate)) return MISSING;
  return Object.hasOwn(gate, "passed") ? gate.passed : MISSING;
}

// Only members the JSON text carried count: an inherited (or polluted) one must never make a pass.
function _own(object: Readonly<Record<string, unknown>>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

function _isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function _describe(value: unknown): string {
  if (value === MISSING) return "missing";
  if (value === null) return "null";
  // Whole: the key is masked, and the text cut, only where the secrets are known (outcome.ts).
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  if (typeof value === "object") return Array.isArray(value) ? "an array" : "an object";
  return `${typeof value} ${String(value)}`;
}
