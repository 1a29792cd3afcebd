/** Reads a run document (contract §2): still going, passed, failed, or unchecked. Pure. */

import { sanitize } from "../text/sanitize.ts";
import { readAs } from "../text/ignorable.ts";
import { unicodeEscape } from "../text/log_commands.ts";
import { type HttpFailure } from "../http/failure.ts";

/** Poll again, whatever `results` says. Statuses are folded by {@linkcode normalizeStatus}. */
export const IN_PROGRESS: ReadonlySet<string> = new Set(
  ["queued", "pending", "created", "scheduled", "running", "in_progress", "evaluating"],
);

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

/** The verdict is `results.gate.passed`. */
export const FINISHED: ReadonlySet<string> = new Set(
  ["completed", "complete", "succeeded", "success", "finished", "done", "passed", "failed"],
);

/**
 * How one agent's gate ended: every surface shows `kind`, and the exit code follows from it alone
 * (`exitCodeOf`). `error`: the service's failure behind an unchecked gate, kept for its hint.
 */
export type Verdict =
  | { readonly kind: "passed" | "failed" | "triggered" }
  | { readonly kind: "unchecked"; readonly reason: string; readonly error?: HttpFailure }
  | { readonly kind: "timed_out"; readonly lastFault: string | null }
  | { readonly kind: "interrupted"; readonly reason: unknown };

/** One answer: still going, or a verdict. `status` is the service's own, not yet sanitized. */
export type RunState =
  & { readonly status: string | null }
  & (
    | { readonly kind: "in_progress" }
    | { readonly kind: "passed" | "failed"; readonly gate: readonly GateField[] }
    | Extract<Verdict, { kind: "unchecked" }>
  );

/**
 * A status as reports show it ({@linkcode sanitize}) and a reader takes it ({@linkcode readAs}),
 * folded: lower case, `-` and blanks as `_`. What reads as `failed` is read as `failed`.
 *
 * @example
 * ```ts
 * normalizeStatus("In-Progress"); // "in_progress"
 * normalizeStatus("fa\u200biled"); // "failed"
 * ```
 */
export function normalizeStatus(status: string): string {
  return readAs(sanitize(status)).toLowerCase().replace(/[-\s]/g, "_");
}

/** What a read was asking for, and what of the answer's text `JSON.parse` cannot show. */
export interface AskedRun {
  readonly runId: string;
  readonly agentId: string;
  /** From {@linkcode duplicateMember}. */
  readonly duplicate?: string | undefined;
}

/**
 * The gate passes only when the run is finished and `results.gate.passed` is exactly `true`, and
 * never on an answer two JSON readers could read differently or that is about another run.
 *
 * @example
 * ```ts
 * const asked = { runId: "r1", agentId: "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10" };
 * readRun({ status: "completed", results: { gate: { passed: true } } }, asked).kind; // "passed"
 * readRun({ status: "completed", results: { gate: { passed: "true" } } }, asked).kind; // "unchecked"
 * readRun({ status: "running", results: { gate: { passed: true } } }, asked).kind; // "in_progress"
 * readRun({ status: "failed", results: { gate: { passed: true } } }, asked).kind; // "unchecked"
 * ```
 */
export function readRun(document: Readonly<Record<string, unknown>>, asked: AskedRun): RunState {
  const ownStatus = _own(document, "status");
  const status = typeof ownStatus === "string" ? ownStatus : null;
  const ambiguity = _ambiguity(document, asked);
  if (ambiguity !== undefined) return { kind: "unchecked", status, reason: ambiguity };
  // Also read blank-free (`fa\u00a0iled` shows "fa iled"): at most a known status, never a pass.
  const folded = status === null ? null : normalizeStatus(status).replaceAll("_", "");
  const gate = _at(document, "results", "gate");
  const passed = isObject(gate) && Object.hasOwn(gate, "passed") ? gate.passed : MISSING;
  const is = (set: ReadonlySet<string>) =>
    [...set].some((known) => known.replaceAll("_", "") === folded);

  if (is(IN_PROGRESS)) return { kind: "in_progress", status };
  if (is(ENDED_WITHOUT_VERDICT)) {
    return { kind: "unchecked", status, reason: "the run ended without a verdict" };
  }
  if (is(FINISHED)) {
    const reason = folded === "failed" && passed === true
      ? "the answer contradicts itself: status failed with results.gate.passed true"
      : typeof passed === "boolean"
      ? undefined
      : `the run finished but results.gate.passed is ${_describe(passed)}, not true or false`;
    if (reason !== undefined) return { kind: "unchecked", status, reason };
  }
  // Finished, unknown or missing status: a boolean verdict means finished; else keep waiting.
  if (typeof passed === "boolean") {
    return { kind: passed ? "passed" : "failed", status, gate: gateFields(document) };
  }
  return { kind: "in_progress", status };
}

export interface GateField {
  readonly name: string;
  /** As the service wrote it: not yet sanitized, masked or cut. */
  readonly value: string | number | boolean;
}

/**
 * Every scalar of `results.gate` but `passed` (or a look-alike), and `results.summary`, in order:
 * shown, never read for the verdict (the docs fix only `passed`). `1e999` and the like are dropped.
 */
export function gateFields(document: Readonly<Record<string, unknown>>): GateField[] {
  const results = _own(document, "results");
  if (!isObject(results)) return [];
  return Object.keys(results).flatMap((name): GateField[] => {
    const value = results[name];
    if (name === "summary") return _isScalar(value) ? [{ name, value }] : [];
    if (name !== "gate" || !isObject(value)) return [];
    return Object.entries(value).flatMap(([member, inner]) =>
      readAs(sanitize(member)) !== "passed" && _isScalar(inner)
        ? [{ name: member, value: inner }]
        : []
    );
  });
}

function _isScalar(value: unknown): value is string | number | boolean {
  return typeof value === "string" || typeof value === "boolean" ||
    (typeof value === "number" && Number.isFinite(value));
}

// An answer that cannot be read one way only, or that is about another run or agent.
function _ambiguity(document: Readonly<Record<string, unknown>>, asked: AskedRun) {
  if (asked.duplicate !== undefined) {
    return `the answer has ${asked.duplicate} twice, which JSON readers read differently`;
  }
  const lookAlike = _lookAlike(document);
  if (lookAlike !== undefined) return lookAlike;
  const runId = _own(document, "run_id") ?? null;
  if (runId !== null && runId !== asked.runId) {
    return `the answer is about run ${_describe(runId)}, not the run asked for (${asked.runId})`;
  }
  const agentId = _own(document, "agent_id") ?? null;
  const asAsked = typeof agentId === "string" &&
    agentId.toLowerCase() === asked.agentId.toLowerCase();
  if (agentId !== null && !asAsked) {
    const about = `the answer is about agent ${_describe(agentId)}`;
    return `${about}, not the agent asked for (${asked.agentId})`;
  }
  return undefined;
}

// Verdict members by their object's path; a Map, not an object, so `toString` finds nothing.
const VERDICT_PATH: ReadonlyMap<string, readonly string[]> = new Map([
  ["", ["results", "status", "run_id", "agent_id"]],
  ["results", ["gate"]],
  ["results.gate", ["passed"]],
]);

// A member on the verdict's path that is none of its names but is shown as one (`pass\u200bed`,
// `" passed"`): a reader takes it for that member, `JSON.parse` does not.
function _lookAlike(document: Readonly<Record<string, unknown>>): string | undefined {
  for (const [path, names] of VERDICT_PATH) {
    const object = path === "" ? document : _at(document, ...path.split("."));
    if (!isObject(object)) continue;
    for (const member of Object.keys(object)) {
      const shown = readAs(sanitize(member));
      if (shown === member || !names.includes(shown)) continue;
      const spelled = JSON.stringify(member).replace(/[^ -~]/g, unicodeEscape);
      return `the answer has a member ${spelled}, which reads as ${path ? `${path}.` : ""}${shown}`;
    }
  }
  return undefined;
}

/**
 * The first member on the verdict's path that `text` repeats, however its name is escaped.
 * `JSON.parse` keeps the last of two members and other readers the first, so such an answer is
 * never a verdict. `text` must be JSON that `JSON.parse` accepted.
 *
 * @example
 * ```ts
 * duplicateMember('{"results":{"gate":{"passed":false,"pass\\u0065d":true}}}');
 * // "results.gate.passed"
 * ```
 */
export function duplicateMember(text: string): string | undefined {
  let at = 0;
  const blanks = () => {
    while (at < text.length && " \t\n\r".includes(text[at]!)) at++;
  };
  const string = (): string => {
    const start = at++;
    while (text[at] !== '"') at += text[at] === "\\" ? 2 : 1;
    at++;
    return JSON.parse(text.slice(start, at));
  };
  // Any value off the path, without recursion: a deeply nested one cannot exhaust the stack.
  const skip = (): undefined => {
    let depth = 0;
    do {
      blanks();
      const char = text[at];
      if (char === '"') string();
      else if (char === "{" || char === "[") depth++, at++;
      else if (char === "}" || char === "]") depth--, at++;
      else if (char === "," || char === ":") at++;
      else while (at < text.length && !",:]} \t\n\r".includes(text[at]!)) at++;
    } while (depth > 0);
  };
  const object = (path: string): string | undefined => {
    const watched = VERDICT_PATH.get(path) ?? [];
    const seen = new Set<string>();
    let found: string | undefined;
    at++;
    for (blanks(); text[at] !== "}"; blanks()) {
      if (text[at] === ",") at++, blanks();
      const name = string();
      blanks();
      at++;
      blanks();
      const inner = path ? `${path}.${name}` : name;
      if (watched.includes(name) && seen.has(name)) found ??= inner;
      seen.add(name);
      const deeper = VERDICT_PATH.has(inner) && text[at] === "{" ? object(inner) : skip();
      found ??= deeper;
    }
    at++;
    return found;
  };
  blanks();
  return text[at] === "{" ? object("") : undefined;
}

const MISSING = Symbol("missing");

// The member down `path`, or `undefined` where one is missing or is no object.
function _at(document: Readonly<Record<string, unknown>>, ...path: string[]): unknown {
  return path.reduce<unknown>(
    (outer, name) => isObject(outer) ? _own(outer, name) : undefined,
    document,
  );
}

// Only members the JSON text carried count: an inherited (or polluted) one must never make a pass.
function _own(object: Readonly<Record<string, unknown>>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

export function isObject(value: unknown): value is Record<string, unknown> {
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
