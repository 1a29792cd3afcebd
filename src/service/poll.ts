/** One agent's gate: trigger or attach, poll to a verdict, deadline or abort, retrying faults. */

import type { Clock } from "../effects.ts";
import type { CiMetadata } from "../ci/detect.ts";
import type { ServiceClient } from "./client.ts";
import {
  MAX_CONSECUTIVE_FAULTS,
  nextPollDelay,
  retryDelay,
  UNREACHABLE_GIVE_UP_MS,
} from "./timing.ts";
import { type GateField, readRun, type Verdict } from "./verdict.ts";
import { hideUserinfo } from "../text/quote.ts";
import { formatBound } from "../text/duration.ts";
import { HttpFailure, type Unreachable } from "../http/failure.ts";
import { retrying } from "../http/retry.ts";

/** A 404 on a run this young may only mean the service does not show it yet (contract §3). */
export const NEW_RUN_GRACE_MS = 30_000;

export interface GateDeps {
  readonly client: Pick<ServiceClient, "trigger" | "readRun">;
  readonly clock: Pick<Clock, "monotonic" | "sleep">;
  readonly random: () => number;
  /** Each trigger's idempotency key, the same on every retry of it. */
  readonly uuid: () => string;
}

/** For progress output. Strings are the service's, unsanitized. */
export type GateEvent =
  | { readonly type: "triggered"; readonly runId: string; readonly url: string | null }
  | { readonly type: "attached"; readonly runId: string }
  | { readonly type: "status"; readonly status: string | null; readonly url: string | null }
  | {
    readonly type: "fault";
    readonly operation: "trigger" | "read";
    readonly message: string;
    /** This one included. */
    readonly consecutive: number;
    readonly unreachable?: Unreachable;
    /** From the first fault, while the address cannot be reached. */
    readonly giveUpAfterMs?: number;
    readonly delayMs: number;
  }
  | { readonly type: "not_visible_yet"; readonly delayMs: number };

export interface GateOptions {
  readonly agentId: string;
  readonly metadata: CiMetadata;
  /** On the monotonic clock. */
  readonly deadline: number;
  /** Aborts on the deadline or on an interrupt; its reason says which. */
  readonly signal: AbortSignal;
  readonly runId?: string | undefined;
  readonly noWait?: boolean;
  readonly maxPollIntervalMs?: number;
  readonly onEvent?: (event: GateEvent) => void;
}

/** How the gate ended, and what was learnt of the run on the way (unsanitized). */
export interface GateResult {
  readonly end: Verdict;
  readonly runId: string | null;
  readonly status: string | null;
  readonly url: string | null;
  readonly passed: boolean | null;
  readonly gate: readonly GateField[];
}

/** Never throws for a service or network failure: every way it can end is a {@linkcode Verdict}. */
export async function runGate(deps: GateDeps, options: GateOptions): Promise<GateResult> {
  type Learnt = { -readonly [K in keyof Omit<GateResult, "end">]: GateResult[K] };
  const state: Learnt = { runId: null, status: null, url: null, passed: null, gate: [] };
  const finish = (end: Verdict): GateResult => ({ end, ...state });
  const { agentId, signal } = options;
  // The last transient fault, while no answer has come since: a timeout names it as the cause.
  let lastFault: string | null = null;
  const sleepUntilDeadline = async (ms: number): Promise<void> => {
    const remaining = options.deadline - deps.clock.monotonic();
    if (remaining <= 0) throw new DeadlineReached();
    await deps.clock.sleep(Math.min(ms, remaining), signal);
    if (options.deadline - deps.clock.monotonic() <= 0) throw new DeadlineReached();
  };
  // A 404 on a run younger than NEW_RUN_GRACE_MS (by `bornAt`) is retried without counting.
  const withRetries = <T>(
    operation: "trigger" | "read",
    attempt: (tries: number) => Promise<T>,
    bornAt?: number,
  ): Promise<T> => {
    let consecutive = 0;
    let unreachableSince: number | undefined;
    const once = async (tries: number): Promise<T> => {
      if (options.deadline - deps.clock.monotonic() <= 0) throw new DeadlineReached();
      const answer = await attempt(tries).catch((error: unknown) => {
        throw signal.aborted ? signal.reason : error;
      });
      lastFault = null;
      return answer;
    };
    return retrying(once, (error) => {
      const now = deps.clock.monotonic();
      const backoff = (attempt: number, random: number) =>
        retryDelay({
          attempt,
          remainingMs: options.deadline - now,
          retryAfterMs: error.retryAfterMs,
          random,
        });
      if (error.kind === "not_found" && bornAt !== undefined && now - bornAt < NEW_RUN_GRACE_MS) {
        const delayMs = backoff(1, 0.5 + deps.random() / 2);
        options.onEvent?.({ type: "not_visible_yet", delayMs });
        return delayMs;
      }
      if (!error.retryable) return undefined;
      lastFault = error.message;
      consecutive++;
      // A service that has never answered and cannot be reached is tried for a short window:
      // a wrong address or port is far more common than an outage (docs/api.md, "Retries").
      unreachableSince = error.unreachable === undefined ? undefined : unreachableSince ?? now;
      const windowLeft = unreachableSince === undefined
        ? undefined
        : UNREACHABLE_GIVE_UP_MS - (now - unreachableSince);
      if (consecutive >= MAX_CONSECUTIVE_FAULTS || (windowLeft ?? Infinity) <= 0) {
        const attempts = consecutive === 1 ? "1 attempt" : `${consecutive} attempts`;
        const over = formatBound(UNREACHABLE_GIVE_UP_MS - (windowLeft ?? 0), 1000);
        const message = windowLeft !== undefined
          ? `${error.message}; gave up after ${attempts} over ${over}`
          : `gave up after ${MAX_CONSECUTIVE_FAULTS} failed attempts in a row; the last: ${error.message}`;
        throw new HttpFailure("transient", message, { status: error.status, cause: error });
      }
      // The last attempt of the window comes at its end, not after it.
      const delayMs = Math.min(backoff(consecutive, deps.random()), windowLeft ?? Infinity);
      options.onEvent?.({
        type: "fault",
        operation,
        message: error.message,
        consecutive,
        ...(error.unreachable === undefined
          ? {}
          : { unreachable: error.unreachable, giveUpAfterMs: UNREACHABLE_GIVE_UP_MS }),
        delayMs,
      });
      return delayMs;
    }, sleepUntilDeadline);
  };
  try {
    let bornAt: number;
    let retryAfterMs: number | undefined;
    let pollNow = false;
    if (options.runId === undefined) {
      const idempotencyKey = deps.uuid();
      const trigger = (tries: number) =>
        deps.client.trigger(agentId, options.metadata, idempotencyKey, signal, tries);
      const answer = await withRetries("trigger", trigger);
      state.runId = answer.runId;
      state.url = _link(answer.document.url);
      state.status = _stringOrNull(answer.document.status);
      bornAt = deps.clock.monotonic();
      retryAfterMs = answer.retryAfterMs;
      // A trigger that already reports a finished run is confirmed at once, not a second later.
      pollNow = retryAfterMs === undefined &&
        readRun(answer.document, { runId: answer.runId, agentId }).kind !== "in_progress";
      options.onEvent?.({ type: "triggered", runId: answer.runId, url: state.url });
      if (options.noWait) return finish({ kind: "triggered" });
    } else {
      state.runId = options.runId;
      bornAt = deps.clock.monotonic() - NEW_RUN_GRACE_MS;
      // An existing run may be long finished: read it at once.
      pollNow = true;
      options.onEvent?.({ type: "attached", runId: options.runId });
    }
    const runId = state.runId;

    for (;;) {
      const now = deps.clock.monotonic();
      const delay = pollNow ? 0 : nextPollDelay({
        ageMs: Math.max(0, now - bornAt),
        remainingMs: options.deadline - now,
        retryAfterMs,
        random: deps.random(),
        maxIntervalMs: options.maxPollIntervalMs,
      });
      pollNow = false;
      await sleepUntilDeadline(delay);
      const read = (tries: number) => deps.client.readRun(agentId, runId, signal, tries);
      const answer = await withRetries("read", read, bornAt);
      retryAfterMs = answer.retryAfterMs;
      const run = readRun(answer.document, { runId, agentId, duplicate: answer.duplicate });
      const url = _link(answer.document.url) ?? state.url;
      if (run.status !== state.status || url !== state.url) {
        state.status = run.status;
        state.url = url;
        options.onEvent?.({ type: "status", status: run.status, url });
      }
      if (run.kind === "in_progress") continue;
      if (run.kind === "unchecked") return finish({ kind: "unchecked", reason: run.reason });
      state.passed = run.kind === "passed";
      state.gate = run.gate;
      return finish({ kind: run.kind });
    }
  } catch (error) {
    if (error instanceof DeadlineReached || signal.reason instanceof DeadlineReached) {
      return finish({ kind: "timed_out", lastFault });
    }
    if (error instanceof HttpFailure) {
      return finish({ kind: "unchecked", reason: error.message, error });
    }
    if (signal.aborted) return finish({ kind: "interrupted", reason: signal.reason });
    throw error;
  }
}

/** The abort reason at the deadline, also thrown when the gate's own clock says it has passed. */
export class DeadlineReached extends Error {
  override name = "DeadlineReached";
  constructor() {
    super("the timeout ran out");
  }
}

// A run's link as the service gave it, without a user and password: it is shown everywhere.
function _link(value: unknown): string | null {
  const link = _stringOrNull(value);
  return link === null ? null : hideUserinfo(link);
}

function _stringOrNull(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}
