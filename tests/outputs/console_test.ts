import assert from "node:assert/strict";
import { ConsoleReporter, HEARTBEAT_MS } from "../../src/outputs/console.ts";
import { explainExitCode } from "../../src/report/words.ts";
import type { AgentOutcome, RunReport } from "../../src/report/outcome.ts";
import { sanitize } from "../../src/text/sanitize.ts";
import {
  AGENT_IDS,
  HOSTILE_STRINGS,
  makeAgent,
  makeReport,
  mixedReport,
  passingReport,
} from "../support/report_fixtures.ts";

const A = AGENT_IDS.passed;
const B = AGENT_IDS.failed;
const DEADLINE = 30 * 60_000;

// A reporter on a fake clock whose writes are collected; `take()` returns what was written
// since the last call, so each step of a scenario is compared whole.
function reporter(
  options: {
    tty: boolean;
    color: boolean;
    agents?: readonly string[];
    secrets?: readonly string[];
  },
) {
  let now = 0;
  let written = "";
  let taken = 0;
  const console = new ConsoleReporter({
    output: { stderr: (text) => written += text, secrets: options.secrets ?? [] },
    clock: { monotonic: () => now, sleep: () => new Promise(() => {}) },
    header: "",
    tty: options.tty,
    color: options.color,
  });
  console.begin(options.agents ?? [A, B], DEADLINE);
  return {
    console,
    at(ms: number) {
      now = ms;
    },
    take(): string {
      const text = written.slice(taken);
      taken = written.length;
      return text;
    },
    get all(): string {
      return written;
    },
  };
}

const passedA: AgentOutcome = makeAgent({ agentId: A, durationMs: 65_400 });
const failedB: AgentOutcome = makeAgent({
  agentId: B,
  runId: "run_2",
  status: "failed",
  passed: false,
  outcome: "failed",
  exitCode: 1,
  durationMs: 70_000,
  url: null,
});
const passAndFail: RunReport = makeReport([passedA, failedB], { exitCode: 1 });

const TABLE = [
  "",
  "agent                                 run    status     verdict  duration    link",
  `${A}  run_1  completed  PASSED   1 min 5 s   https://service.example/runs/run_1`,
  `${B}  run_2  failed     FAILED   1 min 10 s  -`,
  "",
  "exit 1: 2 gates, 1 passed, 1 failed",
  "",
].join("\n");

// deno-lint-ignore no-control-regex
const SGR = /\x1b\[[0-9;]*m/;
// deno-lint-ignore no-control-regex
const CURSOR_UP_AND_CLEAR = /\x1b\[\d+A\x1b\[J/g;

function assertNoWorkflowCommand(text: string): void {
  for (const line of text.split("\n")) {
    const visible = line.replace(CURSOR_UP_AND_CLEAR, "");
    assert.doesNotMatch(visible, /^\s*(::|##\[)/, `a line starts a workflow command: ${line}`);
  }
}

Deno.test("ConsoleReporter in a CI log writes one line per status change and per fault", () => {
  const r = reporter({ tty: false, color: false });
  r.console.line("service-ci 1.0.0 → http://127.0.0.1:8787 (2 agents, timeout 30 min)");
  r.console.event(A, { type: "triggered", runId: "run_1", url: "https://service.example/r/1" });
  r.console.event(B, { type: "triggered", runId: "run_2", url: null });
  assert.equal(
    r.take(),
    [
      "service-ci 1.0.0 → http://127.0.0.1:8787 (2 agents, timeout 30 min)",
      `agent ${A}: triggered run run_1: https://service.example/r/1`,
      `agent ${B}: triggered run run_2`,
      "",
    ].join("\n"),
  );
  r.at(5_000);
  r.console.event(A, { type: "status", status: "queued", url: null });
  r.at(6_500);
  r.console.event(B, { type: "status", status: null, url: null });
  r.at(7_000);
  r.console.event(B, {
    type: "fault",
    operation: "read",
    message: "503 Service Unavailable",
    consecutive: 2,
    delayMs: 1_500,
  });
  r.console.event(A, {
    type: "fault",
    operation: "trigger",
    message: "connection reset",
    consecutive: 1,
    delayMs: 800,
  });
  r.console.event(B, { type: "not_visible_yet", delayMs: 2_000 });
  assert.equal(
    r.take(),
    [
      `agent ${A}: status queued (5 s elapsed, 29 min 55 s left)`,
      `agent ${B}: status (no status) (7 s elapsed, 29 min 54 s left)`,
      `agent ${B}: reading the run failed: 503 Service Unavailable; attempt 2 of 10, next in 1.5 s`,
      `agent ${A}: trigger failed: connection reset; attempt 1 of 10, next in 0.8 s`,
      `agent ${B}: run not visible yet (404 right after the trigger); retrying in 2.0 s`,
      "",
    ].join("\n"),
  );
  r.console.agentDone(passedA);
  r.console.agentDone(failedB);
  r.console.summary(passAndFail);
  assert.equal(
    r.take(),
    [
      `agent ${A}: PASSED (run run_1)`,
      `agent ${B}: FAILED (run run_2)`,
      TABLE,
    ].join("\n"),
  );
  assert.ok(!r.all.includes("\x1b"), r.all);
});

Deno.test("ConsoleReporter in a CI log writes a heartbeat only after 60 s of silence, at most once a minute", () => {
  const r = reporter({ tty: false, color: false });
  r.console.event(A, { type: "status", status: "running", url: null });
  r.take();
  for (const ms of [5_000, 30_000, HEARTBEAT_MS - 1]) {
    r.at(ms);
    r.console.tick();
  }
  assert.equal(r.take(), "", "no heartbeat before a minute of silence");
  r.at(HEARTBEAT_MS);
  r.console.tick();
  assert.equal(
    r.take(),
    `still waiting (1 min elapsed, 29 min left): ${A} running, ${B} waiting\n`,
  );
  for (const ms of [65_000, 100_000, 119_999]) {
    r.at(ms);
    r.console.tick();
  }
  assert.equal(r.take(), "", "at most one heartbeat a minute");
  r.at(120_000);
  r.console.tick();
  assert.equal(
    r.take(),
    `still waiting (2 min elapsed, 28 min left): ${A} running, ${B} waiting\n`,
  );
  // Any other line restarts the minute.
  r.at(150_000);
  r.console.event(B, { type: "status", status: "evaluating", url: null });
  r.at(209_999);
  r.console.tick();
  assert.equal(r.take(), `agent ${B}: status evaluating (2 min 30 s elapsed, 27 min 30 s left)\n`);
  r.at(210_000);
  r.console.agentDone(passedA);
  r.at(270_000);
  r.console.tick();
  assert.equal(
    r.take(),
    [
      `agent ${A}: PASSED (run run_1)`,
      `still waiting (4 min 30 s elapsed, 25 min 30 s left): ${B} evaluating`,
      "",
    ].join("\n"),
    "a finished agent leaves the heartbeat",
  );
  r.console.agentDone(failedB);
  r.take();
  r.at(600_000);
  r.console.tick();
  assert.equal(r.take(), "", "no heartbeat once every agent is done");
});

Deno.test("ConsoleReporter on a terminal redraws the live lines in place, without colour", () => {
  const r = reporter({ tty: true, color: false });
  r.console.line("service-ci 1.0.0");
  assert.equal(
    r.take(),
    [
      "service-ci 1.0.0",
      `… agent ${A}: waiting (0 s elapsed, 30 min left)`,
      `… agent ${B}: waiting (0 s elapsed, 30 min left)`,
      "",
    ].join("\n"),
  );
  r.at(5_000);
  r.console.event(A, { type: "status", status: "queued", url: null });
  assert.equal(
    r.take(),
    [
      `\x1b[2A\x1b[J… agent ${A}: queued (5 s elapsed, 29 min 55 s left)`,
      `… agent ${B}: waiting (5 s elapsed, 29 min 55 s left)`,
      "",
    ].join("\n"),
    "a status change redraws instead of adding a line",
  );
  r.at(6_000);
  r.console.tick();
  assert.equal(
    r.take(),
    [
      `\x1b[2A\x1b[J… agent ${A}: queued (6 s elapsed, 29 min 54 s left)`,
      `… agent ${B}: waiting (6 s elapsed, 29 min 54 s left)`,
      "",
    ].join("\n"),
    "a tick redraws the elapsed time",
  );
  r.console.event(B, { type: "triggered", runId: "run_2", url: null });
  assert.equal(
    r.take(),
    [
      `\x1b[2A\x1b[Jagent ${B}: triggered run run_2`,
      `… agent ${A}: queued (6 s elapsed, 29 min 54 s left)`,
      `… agent ${B}: waiting (6 s elapsed, 29 min 54 s left)`,
      "",
    ].join("\n"),
    "a permanent line goes above the live lines",
  );
  r.console.agentDone(passedA);
  assert.equal(
    r.take(),
    [
      `\x1b[2A\x1b[Jagent ${A}: PASSED (run run_1)`,
      `… agent ${B}: waiting (6 s elapsed, 29 min 54 s left)`,
      "",
    ].join("\n"),
    "a finished agent loses its live line",
  );
  r.at(HEARTBEAT_MS * 3);
  r.console.tick();
  assert.equal(
    r.take(),
    `\x1b[1A\x1b[J… agent ${B}: waiting (3 min elapsed, 27 min left)\n`,
    "a terminal gets no heartbeat lines",
  );
  r.console.agentDone(failedB);
  r.console.summary(passAndFail);
  assert.equal(r.take(), `\x1b[1A\x1b[Jagent ${B}: FAILED (run run_2)\n${TABLE}`);
  assert.doesNotMatch(r.all, SGR);
});

Deno.test("ConsoleReporter colours verdicts and dims the table header only when color is on", () => {
  const r = reporter({ tty: true, color: true, agents: [A] });
  r.console.line("service-ci 1.0.0");
  assert.equal(
    r.take(),
    `service-ci 1.0.0\n\x1b[2m…\x1b[22m agent ${A}: waiting (0 s elapsed, 30 min left)\n`,
  );
  r.console.agentDone(passedA);
  r.console.summary(makeReport([passedA, failedB], { exitCode: 1 }));
  const dim = (text: string) => `\x1b[2m${text}\x1b[22m`;
  assert.equal(
    r.take(),
    [
      `\x1b[1A\x1b[Jagent ${A}: \x1b[32mPASSED\x1b[39m (run run_1)`,
      "",
      [
        dim("agent                               "),
        dim("run  "),
        dim("status   "),
        dim("verdict"),
        dim("duration  "),
        dim("link"),
      ].join("  "),
      `${A}  run_1  completed  \x1b[32mPASSED \x1b[39m  1 min 5 s   https://service.example/runs/run_1`,
      `${B}  run_2  failed     \x1b[31mFAILED \x1b[39m  1 min 10 s  -`,
      "",
      "exit 1: 2 gates, 1 passed, 1 failed",
      "",
    ].join("\n"),
  );
});

Deno.test("ConsoleReporter paints every verdict that is not a pass or a failure as a warning", () => {
  const r = reporter({ tty: false, color: true, agents: mixedReport.agents.map((a) => a.agentId) });
  for (const agent of mixedReport.agents) r.console.agentDone(agent);
  assert.equal(
    r.take(),
    [
      `agent ${AGENT_IDS.passed}: \x1b[32mPASSED\x1b[39m (run run_1)`,
      `agent ${AGENT_IDS.failed}: \x1b[31mFAILED\x1b[39m (run run_2)`,
      `agent ${AGENT_IDS.unchecked}: \x1b[33mNOT CHECKED\x1b[39m: 403 Forbidden: the key lacks CI access`,
      `agent ${AGENT_IDS.timed_out}: \x1b[33mTIMED OUT\x1b[39m (run run_4): no verdict within 30 minutes`,
      `agent ${AGENT_IDS.interrupted}: \x1b[33mINTERRUPTED\x1b[39m (run run_5)`,
      `agent ${AGENT_IDS.triggered}: \x1b[1mTRIGGERED\x1b[22m (run run_6)`,
      "",
    ].join("\n"),
  );
});

Deno.test("ConsoleReporter's final table shows every outcome, with - for what is not known", () => {
  const r = reporter({ tty: false, color: false });
  r.console.summary(mixedReport);
  assert.equal(
    r.take(),
    [
      "",
      "agent                                 run    status      verdict      duration    link",
      `${AGENT_IDS.passed}  run_1  completed   PASSED       1.2 s       https://service.example/runs/run_1`,
      `${AGENT_IDS.failed}  run_2  failed      FAILED       2.0 s       https://service.example/runs/run_2`,
      `${AGENT_IDS.unchecked}  -      -           NOT CHECKED  0.3 s       -`,
      `${AGENT_IDS.timed_out}  run_4  running     TIMED OUT    30 min 0 s  https://service.example/runs/run_4`,
      `${AGENT_IDS.interrupted}  run_5  evaluating  INTERRUPTED  4.0 s       https://service.example/runs/run_5`,
      `${AGENT_IDS.triggered}  run_6  queued      TRIGGERED    0.1 s       https://service.example/runs/run_6`,
      "",
      "exit 3: 6 gates, 1 passed, 1 failed, 1 could not be checked, 1 timed out, 1 interrupted, 1 triggered without waiting",
      "",
    ].join("\n"),
  );
});

Deno.test("explainExitCode() says why the process exits with its code", () => {
  const failed = makeAgent({ outcome: "failed", passed: false, exitCode: 1, status: "failed" });
  const unchecked = makeAgent({ agentId: B, outcome: "unchecked", exitCode: 3, passed: null });
  const cases: Array<[RunReport, string]> = [
    [passingReport, "exit 0: 1 gate, 1 passed"],
    [passAndFail, "exit 1: 2 gates, 1 passed, 1 failed"],
    [
      makeReport([failed], { exitCode: 0, warnOnly: true }),
      "exit 0: 1 gate, 1 failed (--warn-only: a failed gate does not fail the build)",
    ],
    [
      makeReport([passedA, failedB], { exitCode: 0, warnOnly: true }),
      "exit 0: 2 gates, 1 passed, 1 failed (--warn-only: a failed gate does not fail the build)",
    ],
    // --warn-only changes nothing when no gate failed, or when another code wins.
    [makeReport([passedA], { warnOnly: true }), "exit 0: 1 gate, 1 passed"],
    [
      makeReport([failed, unchecked], { exitCode: 3, warnOnly: true }),
      "exit 3: 2 gates, 1 failed, 1 could not be checked",
    ],
    [
      makeReport([makeAgent({ outcome: "triggered", passed: null, status: "queued" })]),
      "exit 0: 1 gate, 1 triggered without waiting",
    ],
    [
      makeReport([makeAgent({ outcome: "interrupted", exitCode: 143 })], { exitCode: 143 }),
      "exit 143: 1 gate, 1 interrupted",
    ],
    [
      mixedReport,
      "exit 3: 6 gates, 1 passed, 1 failed, 1 could not be checked, 1 timed out, 1 interrupted, 1 triggered without waiting",
    ],
  ];
  for (const [report, expected] of cases) assert.equal(explainExitCode(report), expected);
});

Deno.test("ConsoleReporter shows hostile service text as one inert line", () => {
  for (const tty of [false, true]) {
    const r = reporter({ tty, color: false, agents: [A] });
    r.at(1_000);
    r.console.event(A, {
      type: "triggered",
      runId: "run_1\n::error::pwned",
      url: "https://evil.example/\r::warning::x\x1b]8;;https://evil.example\x07",
    });
    r.console.event(A, {
      type: "status",
      status: "\x1b[31mred\x1b[0m\n::error::x\x9b2J",
      url: null,
    });
    assert.equal(
      r.take().replace(CURSOR_UP_AND_CLEAR, ""),
      tty
        ? [
          `agent ${A}: triggered run run_1 ::error::pwned: https://evil.example/ ::warning::x`,
          `… agent ${A}: waiting (1 s elapsed, 29 min 59 s left)`,
          `… agent ${A}: red ::error::x (1 s elapsed, 29 min 59 s left)`,
          "",
        ].join("\n")
        : [
          `agent ${A}: triggered run run_1 ::error::pwned: https://evil.example/ ::warning::x`,
          `agent ${A}: status red ::error::x (1 s elapsed, 29 min 59 s left)`,
          "",
        ].join("\n"),
    );
    for (const text of HOSTILE_STRINGS) {
      r.console.event(A, { type: "attached", runId: text });
      r.console.event(A, { type: "status", status: text, url: null });
      r.console.event(A, {
        type: "fault",
        operation: "read",
        message: text,
        consecutive: 1,
        delayMs: 500,
      });
    }
    r.at(200_000);
    r.console.tick();
    r.console.event(A, { type: "status", status: "::error::alone", url: null });
    assert.match(r.take(), /status "::error::alone"|: "::error::alone" \(/);
    const outcome = makeAgent({
      agentId: A,
      runId: sanitize("::error::run\n::error::x"),
      status: sanitize("\x1b[31m::warning::s"),
      url: sanitize("##[error]u\nv"),
      error: sanitize("e\n::error::\x1b[2Jboom"),
      outcome: "unchecked",
      exitCode: 3,
    });
    r.console.agentDone(outcome);
    r.console.summary(makeReport([outcome], { exitCode: 3 }));
    assertNoWorkflowCommand(r.all);
    const escapes = r.all.replace(CURSOR_UP_AND_CLEAR, "");
    for (const c of ["\x1b", "\x9b", "\x07", "\r"]) {
      assert.ok(!escapes.includes(c), `only the redraw's own escape codes: ${JSON.stringify(c)}`);
    }
  }
});

Deno.test("ConsoleReporter keeps unsanitized outcome text inert too", () => {
  const r = reporter({ tty: false, color: false, agents: [A] });
  const outcome = makeAgent({
    agentId: A,
    runId: "run\n::error::r",
    status: "\n::error::s\x1b[31m",
    url: "\r\n::add-mask::u",
    error: "e\n::error::x\x1b]0;title\x07",
    outcome: "unchecked",
    exitCode: 3,
  });
  r.console.agentDone(outcome);
  r.console.summary(makeReport([outcome], { exitCode: 3 }));
  assertNoWorkflowCommand(r.all);
  for (const c of ["\x1b", "\x07", "\r"]) assert.ok(!r.all.includes(c), JSON.stringify(c));
  assert.equal(r.all.split("\n").length, 7, r.all);
});

Deno.test("ConsoleReporter masks a secret before shortening, so no part of it survives the cut", () => {
  const key = "sk_test_ci_4f1c9a7e2b3d";
  const r = reporter({ tty: false, color: false, agents: [A], secrets: [key] });
  // The key straddles the 200-character cut of a fault message.
  const message = `${"x".repeat(190)}${key} and more`;
  r.console.event(A, {
    type: "fault",
    operation: "read",
    message,
    consecutive: 1,
    delayMs: 1000,
  });
  assert.ok(!r.all.includes(key.slice(0, 8)), r.all);
  assert.ok(r.all.includes("***"), r.all);
});
