import assert from "node:assert/strict";
import fc from "npm:fast-check@3.23.2";
import type { CiMetadata } from "../../src/ci/detect.ts";
import type { ApiAnswer, TriggerAnswer } from "../../src/service/client.ts";
import {
  DeadlineReached,
  type GateDeps,
  type GateEvent,
  type GateOptions,
  NEW_RUN_GRACE_MS,
  runGate,
} from "../../src/service/poll.ts";
import {
  FIRST_POLL_MS,
  MAX_CONSECUTIVE_FAULTS,
  RETRY_AFTER_MAX_MS,
  RETRY_AFTER_MIN_MS,
} from "../../src/service/timing.ts";
import { HttpFailure } from "../../src/http/failure.ts";

const AGENT = "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10";
const START = 1_000_000;
const TIMEOUT = 30 * 60_000;
const METADATA: CiMetadata = {
  commit_sha: "4f1c9a7e2b3d4f1c9a7e2b3d4f1c9a7e2b3d4f1c",
  branch: "main",
  pull_request_number: null,
  repository: "acme/widgets",
  actor: "octocat",
  provider: "github_actions",
  build_url: null,
};
const OPEN = new AbortController().signal;

/** What the scripted service answers: a value, a fault, or a function of the request's signal. */
type Reply<T> = T | HttpFailure | ((signal: AbortSignal) => Promise<T>);

interface Script {
  readonly trigger?: ReadonlyArray<Reply<TriggerAnswer>>;
  /** The reads' answers in order, or a function of the read's index and the clock. */
  readonly read?:
    | ReadonlyArray<Reply<ApiAnswer>>
    | ((index: number, at: number) => Reply<ApiAnswer>);
  readonly random?: number;
}

/** A gate with a fake clock that only the gate's own sleeps move, and a scripted service. */
function setup(script: Script) {
  let now = START;
  let keys = 0;
  const sleeps: number[] = [];
  const events: GateEvent[] = [];
  const triggers: Array<
    { agentId: string; idempotencyKey: string; metadata: CiMetadata; at: number }
  > = [];
  const reads: Array<{ agentId: string; runId: string; at: number }> = [];
  // The attempt number each request was given, for the verbose mode's log.
  const attempts: Array<[string, number | undefined]> = [];
  const reply = <T>(answer: Reply<T> | undefined, signal: AbortSignal): Promise<T> => {
    if (answer === undefined) return Promise.reject(new Error("the script has no more answers"));
    if (answer instanceof HttpFailure) return Promise.reject(answer);
    if (typeof answer === "function") {
      return (answer as (signal: AbortSignal) => Promise<T>)(signal);
    }
    return Promise.resolve(answer);
  };
  const deps: GateDeps = {
    client: {
      trigger(agentId, metadata, idempotencyKey, signal, attempt) {
        attempts.push(["trigger", attempt]);
        triggers.push({ agentId, idempotencyKey, metadata, at: now });
        return reply(script.trigger?.[triggers.length - 1], signal);
      },
      readRun(agentId, runId, signal, attempt) {
        attempts.push(["read", attempt]);
        reads.push({ agentId, runId, at: now });
        const index = reads.length - 1;
        const read = script.read;
        return reply(typeof read === "function" ? read(index, now) : read?.[index], signal);
      },
    },
    clock: {
      monotonic: () => now,
      sleep: (ms, signal) => {
        signal.throwIfAborted();
        assert.ok(Number.isFinite(ms) && ms >= 0, `sleep(${ms})`);
        sleeps.push(ms);
        now += ms;
        return Promise.resolve();
      },
    },
    random: () => script.random ?? 0.5,
    uuid: () => `key-${++keys}`,
  };
  const run = (options: Partial<GateOptions> = {}) =>
    runGate(deps, {
      agentId: AGENT,
      metadata: METADATA,
      deadline: START + TIMEOUT,
      signal: OPEN,
      onEvent: (event) => events.push(event),
      ...options,
    });
  return { run, sleeps, events, triggers, reads, attempts, now: () => now, keys: () => keys };
}

function triggered(
  document: Record<string, unknown> = { status: "queued" },
  retryAfterMs?: number,
): TriggerAnswer {
  return {
    runId: "run_1",
    document: { run_id: "run_1", ...document },
    status: 201,
    retryAfterMs,
  };
}

function run(document: Record<string, unknown>, retryAfterMs?: number): ApiAnswer {
  return { document: { run_id: "run_1", ...document }, status: 200, retryAfterMs };
}

const RUNNING = run({ status: "running" });
const PASSED = run({ status: "completed", results: { gate: { passed: true } } });
const FAILED = run({ status: "completed", results: { gate: { passed: false } } });

function transient(message = "GET answered 503", retryAfterMs?: number): HttpFailure {
  return new HttpFailure("transient", message, { status: 503, retryAfterMs });
}

function notFound(retryAfterMs?: number): HttpFailure {
  return new HttpFailure("not_found", "GET answered 404", { status: 404, retryAfterMs });
}

function faults(events: readonly GateEvent[]) {
  return events.flatMap((event) => event.type === "fault" ? [event] : []);
}

function hang<T>(signal: AbortSignal): Promise<T> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

// The way to a verdict

Deno.test("runGate() triggers a run, polls it until a verdict and keeps what it learnt", async () => {
  const gate = setup({
    trigger: [triggered({ status: "queued", url: "https://dash.example/r/1" })],
    read: [RUNNING, RUNNING, run({ status: "Completed", results: { gate: { passed: true } } })],
  });
  const result = await gate.run();
  assert.deepEqual(result, {
    end: { kind: "passed" },
    runId: "run_1",
    status: "Completed",
    url: "https://dash.example/r/1",
    passed: true,
    gate: [],
  });
  assert.equal(gate.triggers.length, 1);
  assert.deepEqual(gate.triggers[0], {
    agentId: AGENT,
    idempotencyKey: "key-1",
    metadata: METADATA,
    at: START,
  });
  assert.deepEqual(gate.reads.map((read) => [read.agentId, read.runId]), [
    [AGENT, "run_1"],
    [AGENT, "run_1"],
    [AGENT, "run_1"],
  ]);
  assert.equal(gate.sleeps[0], FIRST_POLL_MS);
  assert.deepEqual(gate.events.map((event) => event.type), ["triggered", "status", "status"]);
  assert.deepEqual(gate.events[0], {
    type: "triggered",
    runId: "run_1",
    url: "https://dash.example/r/1",
  });
});

Deno.test("runGate() fails the gate on passed: false and reports the run's own url", async () => {
  const gate = setup({
    trigger: [triggered()],
    read: [run({ status: "running", url: "https://dash.example/r/1" }), FAILED],
  });
  const result = await gate.run();
  assert.deepEqual(result.end, { kind: "failed" });
  assert.equal(result.passed, false);
  assert.equal(result.url, "https://dash.example/r/1");
});

Deno.test("runGate() reports a status change once, not on every poll", async () => {
  const gate = setup({
    trigger: [triggered()],
    read: [
      RUNNING,
      RUNNING,
      RUNNING,
      run({ status: "evaluating" }),
      run({ status: "evaluating" }),
      PASSED,
    ],
  });
  await gate.run();
  const statuses = gate.events.flatMap((event) => event.type === "status" ? [event.status] : []);
  assert.deepEqual(statuses, ["running", "evaluating", "completed"]);
});

Deno.test("runGate() ends unchecked when the run ends without a verdict or with a non-boolean one", async () => {
  for (
    const document of [
      { status: "cancelled", results: { gate: { passed: true } } },
      { status: "completed", results: { gate: { passed: "true" } } },
      { status: "done" },
    ]
  ) {
    const gate = setup({ trigger: [triggered()], read: [RUNNING, run(document)] });
    const result = await gate.run();
    assert.equal(result.end.kind, "unchecked", JSON.stringify(document));
    assert.equal(result.passed, null);
    assert.equal(result.status, document.status);
  }
});

// Retries (contract §3)

Deno.test("runGate() sends one idempotency key on every retry of its trigger", async () => {
  const gate = setup({
    trigger: [
      transient(),
      transient(),
      new HttpFailure("transient", "network error: reset"),
      triggered(),
    ],
    read: [PASSED],
  });
  const result = await gate.run();
  assert.equal(result.end.kind, "passed");
  assert.equal(gate.keys(), 1);
  assert.deepEqual(gate.triggers.map((trigger) => trigger.idempotencyKey), [
    "key-1",
    "key-1",
    "key-1",
    "key-1",
  ]);
});

Deno.test("runGate() gives up on the trigger after 10 transient faults in a row, naming the last", async () => {
  const replies = Array.from(
    { length: MAX_CONSECUTIVE_FAULTS },
    (_, index) => transient(`POST answered 503 (fault ${index + 1})`),
  );
  const gate = setup({ trigger: [...replies, triggered()], read: [PASSED] });
  const result = await gate.run();
  assert.equal(result.end.kind, "unchecked");
  assert.ok(result.end.kind === "unchecked");
  assert.equal(
    result.end.reason,
    "gave up after 10 failed attempts in a row; the last: POST answered 503 (fault 10)",
  );
  assert.equal(result.end.error?.kind, "transient");
  assert.equal(result.end.error?.status, 503);
  assert.equal(gate.triggers.length, MAX_CONSECUTIVE_FAULTS);
  assert.equal(gate.reads.length, 0);
  assert.equal(result.runId, null);
  const seen = faults(gate.events);
  assert.deepEqual(seen.map((fault) => fault.consecutive), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.ok(seen.every((fault) => fault.operation === "trigger"));
  // Full jitter with random 0.5: half of 0.5 s, 1 s, 2 s … capped at 30 s.
  assert.deepEqual(gate.sleeps, [250, 500, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000]);
  assert.deepEqual(seen.map((fault) => fault.delayMs), gate.sleeps);
});

Deno.test("runGate() gives up on reads after 10 transient faults in a row, keeping the run id", async () => {
  const replies = Array.from(
    { length: MAX_CONSECUTIVE_FAULTS },
    (_, index) => transient(`GET answered 502 (fault ${index + 1})`),
  );
  const gate = setup({ trigger: [triggered()], read: [RUNNING, ...replies, PASSED] });
  const result = await gate.run();
  assert.ok(result.end.kind === "unchecked");
  assert.match(
    result.end.reason,
    /^gave up after 10 failed attempts in a row; the last: GET answered 502 \(fault 10\)$/,
  );
  assert.equal(result.runId, "run_1");
  assert.equal(result.status, "running");
  assert.equal(gate.reads.length, 1 + MAX_CONSECUTIVE_FAULTS);
  assert.ok(faults(gate.events).every((fault) => fault.operation === "read"));
});

Deno.test("runGate() counts faults in a row: an answer starts the count again", async () => {
  const nine = (operation: string) =>
    Array.from({ length: MAX_CONSECUTIVE_FAULTS - 1 }, () => transient(`${operation} 503`));
  const gate = setup({
    trigger: [...nine("POST"), triggered()],
    read: [...nine("GET"), RUNNING, ...nine("GET"), RUNNING, ...nine("GET"), PASSED],
  });
  const result = await gate.run();
  assert.equal(result.end.kind, "passed");
  const counts = faults(gate.events).map((fault) => fault.consecutive);
  const oneToNine = [1, 2, 3, 4, 5, 6, 7, 8, 9];
  assert.deepEqual(counts, [...oneToNine, ...oneToNine, ...oneToNine, ...oneToNine]);
});

Deno.test("runGate() stops at once on a fault a retry cannot fix", async () => {
  const stoppers = [
    new HttpFailure("auth", "POST answered 401", { status: 401 }),
    new HttpFailure("auth", "POST answered 403", { status: 403 }),
    new HttpFailure("not_found", "POST answered 404", { status: 404 }),
    new HttpFailure("refused", "POST answered 409: agent inactive", {
      status: 409,
      code: "inactive",
    }),
    new HttpFailure("redirect", "POST answered 302 redirect to another origin"),
    new HttpFailure("unusable", "the trigger answered 201 without a usable run_id"),
  ];
  for (const error of stoppers) {
    const onTrigger = setup({ trigger: [error, triggered()], read: [PASSED] });
    const result = await onTrigger.run();
    assert.ok(result.end.kind === "unchecked", error.message);
    assert.equal(result.end.reason, error.message);
    assert.equal(result.end.error, error);
    assert.equal(onTrigger.triggers.length, 1);
    assert.deepEqual(onTrigger.sleeps, []);

    if (error.kind === "not_found") continue;
    const onRead = setup({ trigger: [triggered()], read: [error, PASSED] });
    const read = await onRead.run();
    assert.ok(read.end.kind === "unchecked", error.message);
    assert.equal(read.end.error, error);
    assert.equal(onRead.reads.length, 1);
  }
});

// 404 on a new run (contract §3)

Deno.test("runGate() retries a 404 on a run triggered under 30 s ago, without counting it", async () => {
  const gate = setup({
    trigger: [triggered()],
    read: (_, at) => at - START < 25_000 ? notFound() : PASSED,
  });
  const result = await gate.run();
  assert.equal(result.end.kind, "passed");
  const waits = gate.events.flatMap((event) => event.type === "not_visible_yet" ? [event] : []);
  assert.ok(waits.length > MAX_CONSECUTIVE_FAULTS, `${waits.length} retries of the 404`);
  assert.equal(faults(gate.events).length, 0);
  for (const wait of waits) {
    assert.ok(wait.delayMs >= 250 && wait.delayMs <= 500, `${wait.delayMs}`);
  }
});

Deno.test("runGate() does not count 404s on a new run toward the 10 transient faults", async () => {
  const gate = setup({
    trigger: [triggered()],
    read: [
      ...Array.from({ length: 5 }, () => transient()),
      ...Array.from({ length: 15 }, () => notFound()),
      ...Array.from({ length: 4 }, () => transient()),
      PASSED,
    ],
  });
  const result = await gate.run();
  assert.equal(result.end.kind, "passed");
  assert.equal(faults(gate.events).length, 9);
});

Deno.test("runGate() gives a 404 that outlasts the 30 s grace up as not found", async () => {
  const gate = setup({ trigger: [triggered()], read: () => notFound() });
  const result = await gate.run();
  assert.ok(result.end.kind === "unchecked");
  assert.equal(result.end.error?.kind, "not_found");
  const last = gate.reads.at(-1)!;
  assert.ok(last.at - START >= NEW_RUN_GRACE_MS, `${last.at - START}`);
  assert.ok(last.at - START < NEW_RUN_GRACE_MS + 1_000, `${last.at - START}`);
  assert.ok(gate.reads.slice(0, -1).every((read) => read.at - START < NEW_RUN_GRACE_MS));
});

Deno.test("runGate() gives up at once on a 404 once the run is 30 s old", async () => {
  const gate = setup({
    trigger: [triggered()],
    read: (_, at) => at - START >= 40_000 ? notFound() : RUNNING,
  });
  const result = await gate.run();
  assert.ok(result.end.kind === "unchecked");
  assert.equal(result.end.error?.kind, "not_found");
  assert.equal(gate.reads.filter((read) => read.at - START >= 40_000).length, 1);
});

Deno.test("runGate() honours Retry-After on a 404 of a new run", async () => {
  const gate = setup({ trigger: [triggered()], read: [notFound(2_000), notFound(2_000), PASSED] });
  await gate.run();
  const waits = gate.events.flatMap((event) =>
    event.type === "not_visible_yet" ? [event.delayMs] : []
  );
  assert.deepEqual(waits, [2_000, 2_000]);
});

// Retry-After (contract §1)

Deno.test("runGate() waits as long as a fault's Retry-After asks, within 0.5 s … 5 min", async () => {
  const gate = setup({
    trigger: [transient("POST 429", 7_000), transient("POST 429", 0), triggered()],
    read: [transient("GET 503", 60 * 60_000), transient("GET 503", 45_000), PASSED],
  });
  const result = await gate.run();
  assert.equal(result.end.kind, "passed");
  assert.deepEqual(faults(gate.events).map((fault) => fault.delayMs), [
    7_000,
    RETRY_AFTER_MIN_MS,
    RETRY_AFTER_MAX_MS,
    45_000,
  ]);
});

Deno.test("runGate() polls next when an answer's Retry-After says, longer or shorter", async () => {
  const gate = setup({
    trigger: [triggered({ status: "queued" }, 3_000)],
    read: [run({ status: "running" }, 20_000), run({ status: "running" }, 600), RUNNING, PASSED],
  });
  await gate.run();
  assert.deepEqual(gate.sleeps.slice(0, 3), [3_000, 20_000, 600]);
});

// The deadline

Deno.test("runGate() stops at the deadline with the last status, never waiting past it", async () => {
  const deadline = START + 60_000;
  const gate = setup({ trigger: [triggered()], read: () => RUNNING });
  const result = await gate.run({ deadline });
  assert.deepEqual(result.end, { kind: "timed_out", lastFault: null });
  assert.equal(result.status, "running");
  assert.equal(result.runId, "run_1");
  assert.equal(gate.now(), deadline);
  assert.ok(gate.reads.every((read) => read.at < deadline));
});

Deno.test("runGate() times out, not unchecked, when the deadline comes during faults", async () => {
  const deadline = START + 45_000;
  const gate = setup({ trigger: [triggered()], read: () => transient("GET 503", 20_000) });
  const result = await gate.run({ deadline });
  assert.deepEqual(result.end, { kind: "timed_out", lastFault: "GET 503" });
  assert.equal(gate.now(), deadline);
  assert.deepEqual(gate.sleeps.slice(1), [20_000, 20_000, 4_000]);
});

Deno.test("runGate() names no fault at the deadline once an answer came after it", async () => {
  const deadline = START + 60_000;
  const gate = setup({
    trigger: [triggered()],
    read: (index) => index === 0 ? transient("GET 502") : RUNNING,
  });
  const result = await gate.run({ deadline });
  assert.deepEqual(result.end, { kind: "timed_out", lastFault: null });
  assert.equal(result.status, "running");
});

Deno.test("runGate() times out when the deadline aborts a request in flight", async () => {
  const controller = new AbortController();
  const gate = setup({
    trigger: [triggered()],
    read: [RUNNING, (signal) => {
      controller.abort(new DeadlineReached());
      return hang(signal);
    }],
  });
  const result = await gate.run({ signal: controller.signal });
  assert.deepEqual(result.end, { kind: "timed_out", lastFault: null });
  assert.equal(result.runId, "run_1");
});

Deno.test("runGate() sends nothing once the deadline has passed", async () => {
  const gate = setup({ trigger: [triggered()], read: [PASSED] });
  const result = await gate.run({ deadline: START });
  assert.deepEqual(result.end, { kind: "timed_out", lastFault: null });
  assert.equal(gate.triggers.length, 0);
});

Deno.test("runGate() ends aborted, with the signal's reason, on an interrupt", async () => {
  const reason = new Error("SIGINT");
  for (const during of ["request", "sleep"] as const) {
    const controller = new AbortController();
    const gate = setup({
      trigger: [triggered()],
      read: during === "request"
        ? [RUNNING, (signal) => {
          controller.abort(reason);
          return hang(signal);
        }]
        : [RUNNING, RUNNING],
    });
    const result = await gate.run({
      signal: controller.signal,
      onEvent: (event) => {
        if (during === "sleep" && event.type === "status") controller.abort(reason);
      },
    });
    assert.deepEqual(result.end, { kind: "interrupted", reason }, during);
    assert.equal(result.runId, "run_1");
  }
});

// --no-wait, --run-id and the first poll

Deno.test("runGate() keeps what the verdict's answer said beside it, as the service wrote it", async () => {
  const gate = setup({
    trigger: [triggered({ status: "queued" })],
    read: [
      run({ status: "running", results: { gate: { rule: "early" } } }),
      run({ status: "completed", results: { gate: { passed: false, rule: "leaks\n< 1" } } }),
    ],
  });
  const result = await gate.run();
  assert.equal(result.end.kind, "failed");
  assert.deepEqual(result.gate, [{ name: "rule", value: "leaks\n< 1" }]);
});

Deno.test("runGate() with noWait triggers and returns without reading", async () => {
  const gate = setup({
    trigger: [triggered({ status: "queued", url: "https://dash.example/r/1" })],
  });
  const result = await gate.run({ noWait: true });
  assert.deepEqual(result, {
    end: { kind: "triggered" },
    runId: "run_1",
    status: "queued",
    url: "https://dash.example/r/1",
    passed: null,
    gate: [],
  });
  assert.equal(gate.reads.length, 0);
  assert.deepEqual(gate.sleeps, []);
});

Deno.test("runGate() attaches to an existing run and reads it at once", async () => {
  const gate = setup({ read: [run({ ...PASSED.document, run_id: "run_9" })] });
  const result = await gate.run({ runId: "run_9" });
  assert.equal(result.end.kind, "passed");
  assert.equal(result.runId, "run_9");
  assert.equal(gate.triggers.length, 0);
  assert.deepEqual(gate.reads, [{ agentId: AGENT, runId: "run_9", at: START }]);
  assert.deepEqual(gate.events[0], { type: "attached", runId: "run_9" });
});

Deno.test("runGate() gives no grace to a 404 on a run it attached to", async () => {
  const gate = setup({ read: [notFound(), PASSED] });
  const result = await gate.run({ runId: "run_9" });
  assert.ok(result.end.kind === "unchecked");
  assert.equal(result.end.error?.kind, "not_found");
  assert.equal(gate.reads.length, 1);
});

Deno.test("runGate() confirms at once a run the trigger already reports finished", async () => {
  for (
    const document of [
      { status: "completed", results: { gate: { passed: true } } },
      { status: "failed", results: { gate: { passed: false } } },
      { results: { gate: { passed: true } } },
      { status: "cancelled" },
    ]
  ) {
    const gate = setup({ trigger: [triggered(document)], read: [FAILED] });
    const result = await gate.run();
    assert.equal(gate.sleeps[0], 0, JSON.stringify(document));
    assert.equal(gate.reads[0]?.at, START);
    // The verdict is the read's, not the trigger answer's.
    assert.equal(result.end.kind, "failed");
  }
});

Deno.test("runGate() waits the usual first interval after a trigger that reports a run in progress", async () => {
  for (
    const document of [{ status: "queued" }, {}, {
      status: "running",
      results: { gate: { passed: true } },
    }]
  ) {
    const gate = setup({ trigger: [triggered(document)], read: [PASSED] });
    await gate.run();
    assert.equal(gate.sleeps[0], FIRST_POLL_MS, JSON.stringify(document));
  }
  const asked = setup({
    trigger: [triggered({ status: "completed", results: { gate: { passed: true } } }, 2_000)],
    read: [PASSED],
  });
  await asked.run();
  assert.equal(asked.sleeps[0], 2_000, "a Retry-After on the trigger is honoured");
});

// Whatever the service does

type Step = "running" | "passed" | "transient" | "not_found" | "auth";

Deno.test("runGate() never waits past the deadline, never retries 10 faults in a row, and always ends", async () => {
  const step = fc.constantFrom<Step>(
    "running",
    "running",
    "transient",
    "transient",
    "transient",
    "not_found",
    "passed",
    "auth",
  );
  await fc.assert(
    fc.asyncProperty(
      fc.array(step, { maxLength: 60 }),
      fc.array(fc.option(fc.integer({ min: 0, max: 400_000 }), { nil: undefined }), {
        minLength: 1,
        maxLength: 10,
      }),
      fc.integer({ min: 1, max: 20 * 60_000 }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      async (steps, retryAfters, timeoutMs, random) => {
        const deadline = START + timeoutMs;
        const answer = (index: number): Reply<ApiAnswer> => {
          const retryAfterMs = retryAfters[index % retryAfters.length];
          switch (steps[index] ?? "running") {
            case "running":
              return run({ status: "running" }, retryAfterMs);
            case "passed":
              return PASSED;
            case "transient":
              return transient("GET 503", retryAfterMs);
            case "not_found":
              return notFound(retryAfterMs);
            case "auth":
              return new HttpFailure("auth", "GET answered 401", { status: 401 });
          }
        };
        const gate = setup({ trigger: [triggered()], read: (index) => answer(index), random });
        const result = await gate.run({ deadline });
        assert.ok(gate.now() <= deadline, `${gate.now() - deadline} ms past the deadline`);
        // Walk the answers the gate saw: 404s neither count nor break a row of faults.
        let inRow = 0;
        let most = 0;
        for (let index = 0; index < gate.reads.length; index++) {
          const seen = steps[index] ?? "running";
          if (seen === "transient") inRow++;
          else if (seen !== "not_found") inRow = 0;
          most = Math.max(most, inRow);
        }
        assert.ok(most <= MAX_CONSECUTIVE_FAULTS, `${most} faults in a row`);
        if (most === MAX_CONSECUTIVE_FAULTS) {
          assert.ok(result.end.kind === "unchecked", JSON.stringify(result.end));
          assert.match(result.end.reason, /^gave up after 10 failed attempts in a row/);
        }
        assert.ok(
          ["passed", "unchecked", "timed_out"].includes(result.end.kind),
          JSON.stringify(result.end),
        );
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("runGate() reads no verdict from an answer about another run: unchecked, at once", async () => {
  const gate = setup({ read: [PASSED] });
  const result = await gate.run({ runId: "run_9" });
  assert.equal(result.end.kind, "unchecked");
  assert.match(String((result.end as { reason: string }).reason), /about run .*run_1.*run_9/);
  assert.equal(gate.reads.length, 1);
});

Deno.test("each request is told its attempt: counted from 1 per operation, a young run's 404 included", async () => {
  const gate = setup({
    trigger: [transient("POST answered 503"), transient("POST answered 502"), triggered()],
    read: [notFound(), transient(), RUNNING, PASSED],
  });
  assert.equal((await gate.run()).passed, true);
  assert.deepEqual(gate.attempts, [
    ["trigger", 1],
    ["trigger", 2],
    ["trigger", 3],
    ["read", 1],
    ["read", 2],
    ["read", 3],
    ["read", 1],
  ]);
});
