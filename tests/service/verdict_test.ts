import assert from "node:assert/strict";
import {
  duplicateMember,
  gateFields,
  normalizeStatus,
  readRun as readAsked,
} from "../../src/service/verdict.ts";
import { ENDED_WITHOUT_VERDICT, FINISHED, IN_PROGRESS } from "../support/run_statuses.ts";

// The run and agent asked for; the answers below name neither, so neither check applies.
const readRun = (document: Record<string, unknown>) =>
  readAsked(document, { runId: "run_1", agentId: "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10" });

const gate = (passed: unknown) => ({ results: { gate: { passed } } });

Deno.test("normalizeStatus() folds case, hyphens and spaces", () => {
  assert.equal(normalizeStatus("In-Progress"), "in_progress");
  assert.equal(normalizeStatus("TIMED OUT"), "timed_out");
  assert.equal(normalizeStatus(" Running "), "running");
});

for (const status of IN_PROGRESS) {
  Deno.test(`readRun() keeps polling a "${status}" run whatever results say`, () => {
    for (const variant of [status, status.toUpperCase(), status.replaceAll("_", "-")]) {
      assert.equal(readRun({ status: variant, ...gate(true) }).kind, "in_progress");
      assert.equal(readRun({ status: variant, ...gate(false) }).kind, "in_progress");
      assert.equal(readRun({ status: variant }).kind, "in_progress");
    }
  });
}

for (const status of ENDED_WITHOUT_VERDICT) {
  Deno.test(`readRun() treats a "${status}" run as unchecked even with passed: true`, () => {
    for (const variant of [status, status.toUpperCase(), status.replaceAll("_", " ")]) {
      const state = readRun({ status: variant, ...gate(true) });
      assert.equal(state.kind, "unchecked");
      assert.equal(state.status, variant);
    }
  });
}

for (const status of FINISHED) {
  Deno.test(`readRun() reads the verdict of a "${status}" run strictly`, () => {
    // A "failed" run with passed: true contradicts itself (contract §2).
    assert.equal(
      readRun({ status, ...gate(true) }).kind,
      status === "failed" ? "unchecked" : "passed",
    );
    assert.equal(readRun({ status: status.toUpperCase(), ...gate(false) }).kind, "failed");
    for (const notBoolean of ["true", 1, null, {}, [], "false", 0]) {
      const state = readRun({ status, ...gate(notBoolean) });
      assert.equal(state.kind, "unchecked", JSON.stringify(notBoolean));
    }
    assert.equal(readRun({ status }).kind, "unchecked");
    assert.equal(readRun({ status, results: { gate: {} } }).kind, "unchecked");
    assert.equal(readRun({ status, results: null }).kind, "unchecked");
  });
}

Deno.test('readRun() treats passed: "true" on a finished run as unchecked, naming the value', () => {
  const state = readRun({ status: "completed", ...gate("true") });
  assert.equal(state.kind, "unchecked");
  assert.match(state.kind === "unchecked" ? state.reason : "", /the string "true"/);
});

Deno.test("readRun() with an unknown or missing status takes a boolean verdict as finished", () => {
  assert.equal(readRun({ status: "weird", ...gate(true) }).kind, "passed");
  assert.equal(readRun({ ...gate(false) }).kind, "failed");
  assert.equal(readRun({ status: 42, ...gate(true) }).kind, "passed");
});

Deno.test("readRun() with an unknown or missing status and no boolean verdict polls again", () => {
  assert.equal(readRun({ status: "warming_up" }).kind, "in_progress");
  assert.equal(readRun({}).kind, "in_progress");
  assert.equal(readRun({ ...gate("true") }).kind, "in_progress");
  assert.equal(readRun({ results: { gate: { passed: 1 } } }).kind, "in_progress");
});

Deno.test("readRun() reads results.gate.passed only from plain objects", () => {
  assert.equal(
    readRun({ status: "completed", results: [{ gate: { passed: true } }] }).kind,
    "unchecked",
  );
  assert.equal(readRun({ status: "completed", results: { gate: [true] } }).kind, "unchecked");
  const inherited = Object.create({ passed: true });
  assert.equal(readRun({ status: "completed", results: { gate: inherited } }).kind, "unchecked");
});

const ASKED = { runId: "run_1", agentId: "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10" };

Deno.test("readRun() never passes a failed status with passed: true, in any spelling", () => {
  for (const status of ["failed", "FAILED", "Failed"]) {
    const state = readRun({ status, ...gate(true) });
    assert.equal(state.kind, "unchecked");
    assert.match(
      (state as { reason: string }).reason,
      /status failed with results\.gate\.passed true/,
    );
  }
});

Deno.test("readRun() never reads a verdict from an answer about another run or agent", () => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ run_id: "run_2" }, /about run the string "run_2", not the run asked for \(run_1\)/],
    [{ run_id: 1 }, /about run number 1/],
    [{ agent_id: "7d1f3c2a-0000-4000-8000-000000000000" }, /about agent .*not the agent asked for/],
    [{ agent_id: 7 }, /about agent number 7/],
  ];
  for (const [extra, reason] of cases) {
    for (const passed of [true, false]) {
      const state = readAsked({ status: "completed", ...gate(passed), ...extra }, ASKED);
      assert.equal(state.kind, "unchecked", JSON.stringify(extra));
      assert.match((state as { reason: string }).reason, reason);
    }
  }
  // The same run and agent (a UUID in any case), or null, are the run asked for.
  for (
    const extra of [
      { run_id: "run_1", agent_id: ASKED.agentId.toUpperCase() },
      { run_id: null, agent_id: null },
    ]
  ) {
    assert.equal(readAsked({ status: "completed", ...gate(true), ...extra }, ASKED).kind, "passed");
  }
});

Deno.test("readRun() reads an answer with a repeated member on the verdict's path as unchecked, naming it", () => {
  const state = readAsked({ status: "completed", ...gate(true) }, {
    ...ASKED,
    duplicate: "results.gate.passed",
  });
  assert.equal(state.kind, "unchecked");
  assert.match((state as { reason: string }).reason, /results\.gate\.passed twice/);
});

Deno.test("duplicateMember() finds a member repeated on the verdict's path, however it is spelled", () => {
  const cases: Array<[string, string | undefined]> = [
    ['{"results":{"gate":{"passed":false,"passed":true}}}', "results.gate.passed"],
    ['{"results":{"gate":{"passed":false,"pass\\u0065d":true}}}', "results.gate.passed"],
    ['{"results":{"gate":{"\\u0070assed":false}, "gate":{"passed":true}}}', "results.gate"],
    ['{"results":{"gate":{"passed":false}},"results":{"gate":{"passed":true}}}', "results"],
    ['{"status":"failed","st\\u0061tus":"completed","results":{"gate":{"passed":true}}}', "status"],
    ['{"run_id":"a","run_id":"b"}', "run_id"],
    ['{"agent_id":"a" , "agent_id" : "b"}', "agent_id"],
    // Off the path, a repeat changes nothing the verdict reads.
    ['{"results":{"gate":{"passed":true},"score":1,"score":2},"meta":{"a":1,"a":2}}', undefined],
    ['{"results":{"gate":{"passed":true,"rule":{"passed":1,"passed":2}}}}', undefined],
    ['{"x":[{"results":1},{"results":2}],"results":{"gate":{"passed":true}}}', undefined],
    ['{"s":"\\"results\\":{","results":{"gate":{"passed":true}}}', undefined],
    [
      `{"deep":${"[".repeat(100_000)}${"]".repeat(100_000)},"results":{"gate":{"passed":true}}}`,
      undefined,
    ],
    ["[1,2]", undefined],
  ];
  for (const [text, expected] of cases) {
    JSON.parse(text);
    assert.equal(duplicateMember(text), expected, text.slice(0, 80));
  }
});

Deno.test("gateFields() keeps results.gate's scalars but passed, and results.summary, in the answer's order", () => {
  const document = JSON.parse(
    '{"results":{"summary":"2 of 90 leaked","gate":{"rule":"leaks < 1","passed":false,' +
      '"score":0.031,"strict":true,"detail":{"a":1},"list":[1],"none":null,"huge":1e999,' +
      '"__proto__":"kept"},"score":9},"summary":"top level"}',
  );
  assert.deepEqual(gateFields(document), [
    { name: "summary", value: "2 of 90 leaked" },
    { name: "rule", value: "leaks < 1" },
    { name: "score", value: 0.031 },
    { name: "strict", value: true },
    { name: "__proto__", value: "kept" },
  ]);
  assert.deepEqual(gateFields({ results: { summary: { text: "x" }, gate: { passed: true } } }), []);
  assert.deepEqual(gateFields({ results: [1] }), []);
  assert.deepEqual(gateFields({}), []);
});

Deno.test("readRun() gives a verdict's fields with it, and none to a run without a verdict", () => {
  const said = { results: { gate: { passed: false, rule: "leaks < 1" }, summary: "2 leaked" } };
  const failed = readRun({ status: "completed", ...said });
  assert.deepEqual(failed, {
    kind: "failed",
    status: "completed",
    gate: [{ name: "rule", value: "leaks < 1" }, { name: "summary", value: "2 leaked" }],
  });
  const passed = readRun({ results: { gate: { passed: true, score: 1 } } });
  assert.deepEqual(passed, { kind: "passed", status: null, gate: [{ name: "score", value: 1 }] });
  assert.ok(!("gate" in readRun({ status: "cancelled", ...said })));
  assert.ok(!("gate" in readRun({ status: "running", ...said })));
});

Deno.test("readRun() reads a status as it is shown: invisible characters hide no failed, cancelled or running", () => {
  const cases: Array<[string, string]> = [
    ["fa\u200biled", "unchecked"],
    ["Fa\u00adILED", "unchecked"],
    ["\u00a0failed\u2060", "unchecked"],
    ["fa\u0007iled", "unchecked"],
    ["can\u00adcelled", "unchecked"],
    ["timed\u00a0out", "unchecked"],
    ["run\u2060ning", "in_progress"],
    ["in\u3000\ufeffprogress", "in_progress"],
  ];
  for (const [status, kind] of cases) {
    const state = readRun({ status, ...gate(true) });
    assert.equal(state.kind, kind, JSON.stringify(status));
    assert.equal(state.status, status, "the status itself is kept as the service wrote it");
  }
  assert.match(
    (readRun({ status: "fa\u200biled", ...gate(true) }) as { reason: string }).reason,
    /status failed with results\.gate\.passed true/,
  );
  assert.equal(normalizeStatus("Ti\u200bmed\u00a0Out"), "timed_out");
  // A blank, even a no-break one, stays a blank in the folded status, but what is shown as
  // "fa iled" or "timed out" is still read as failed, or as ended without a verdict.
  assert.equal(normalizeStatus("fa\u00a0iled"), "fa_iled");
  for (const status of ["fa\u00a0iled", "fa iled", "timedout", "timed\u00a0out", "can celled"]) {
    assert.equal(readRun({ status, ...gate(true) }).kind, "unchecked", JSON.stringify(status));
  }
  assert.equal(readRun({ status: "run ning", ...gate(true) }).kind, "in_progress");
  // Letters of other scripts drawn like Latin ones, and full-width ones, read as what they show.
  for (const status of ["f\u0430iled", "\uff46\uff41\uff49\uff4c\uff45\uff44", "c\u0430ncelled"]) {
    assert.equal(readRun({ status, ...gate(true) }).kind, "unchecked", JSON.stringify(status));
  }
});

Deno.test("readRun() gives no verdict on an answer with a member that reads as one on the verdict's path", () => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [
      { status: "completed", results: { gate: { passed: false, "pass\u200bed": true } } },
      /a member "pass\\u200bed", which reads as results\.gate\.passed/,
    ],
    [
      { status: "completed", results: { gate: { " passed": false, passed: true } } },
      /a member " passed", which reads as results\.gate\.passed/,
    ],
    [
      { status: "completed", results: { gate: { passed: true, "passed\u00a0": false } } },
      /a member "passed\\u00a0"/,
    ],
    [{ status: "completed", results: { gate: { "pass\u00aded": true } } }, /"pass\\u00aded"/],
    [{ status: "completed", results: { gate: { "p\u0430ssed": true } } }, /"p\\u0430ssed"/],
    [{ status: "completed", "st\u200batus": "failed", ...gate(true) }, /reads as status$/],
    [{ "run\u200b_id": "run_2", status: "completed", ...gate(true) }, /reads as run_id$/],
    [{ status: "running", "results\u2060": { gate: { passed: true } } }, /reads as results$/],
    [
      { status: "completed", results: { "gate ": { passed: false }, ...gate(true).results } },
      /gate/,
    ],
  ];
  for (const [document, reason] of cases) {
    const state = readRun(document);
    assert.equal(state.kind, "unchecked", JSON.stringify(document));
    assert.match((state as { reason: string }).reason, reason);
    assert.ok(!("gate" in state));
  }
  // Other names, and look-alikes off the verdict's path, change nothing.
  const fine = {
    status: "completed",
    results: { gate: { passed: true, Passed: 1, "pass ed": 2 } },
  };
  assert.equal(readRun(fine).kind, "passed");
  assert.equal(readRun({ ...gate(true), meta: { "pass\u200bed": false } }).kind, "passed");
});

Deno.test("gateFields() never gives a member that reads as passed", () => {
  const document = {
    results: {
      gate: {
        passed: false,
        "pass\u200bed": true,
        " passed": true,
        "passed\u00a0": true,
        "p\u0430ssed": true,
        rule: "r",
      },
    },
  };
  assert.deepEqual(gateFields(document), [{ name: "rule", value: "r" }]);
});
