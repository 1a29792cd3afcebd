import assert from "node:assert/strict";
import { combineExitCodes, GATE_LIMITS, toAgentOutcome } from "../../src/report/outcome.ts";
import { ExitCode } from "../../src/config/exit_codes.ts";
import type { GateResult } from "../../src/service/poll.ts";
import type { GateField } from "../../src/service/verdict.ts";

const AGENT = "1c1d5b6f-9a5f-4b9f-8b64-4a2d3cae8f21";
const KEY = "sk_live_0123456789abcdef";
const CONTEXT = { durationMs: 1200, timeoutMs: 60_000, runIdGiven: false, secrets: [KEY] };

function failed(gate: readonly GateField[]): GateResult {
  return {
    end: { kind: "failed" },
    runId: "run_1",
    status: "completed",
    url: null,
    passed: false,
    gate,
  };
}

Deno.test("toAgentOutcome() keeps the service's fields in order, as they are when they are safe", () => {
  const gate = [
    { name: "rule", value: "jailbreak success rate < 2%" },
    { name: "score", value: 0.031 },
    { name: "strict", value: false },
  ];
  assert.deepEqual(toAgentOutcome(AGENT, failed(gate), CONTEXT).gate, gate);
  const passed = { ...failed(gate), end: { kind: "passed" as const }, passed: true };
  assert.deepEqual(toAgentOutcome(AGENT, passed, CONTEXT).gate, gate);
});

Deno.test("toAgentOutcome() bounds the fields: the first 6, names of 40 and values of 200 characters", () => {
  const many = Array.from({ length: 10 }, (_, index) => ({
    name: `${index}${"n".repeat(60)}`,
    value: `${index}${"v".repeat(500)}`,
  }));
  const gate = toAgentOutcome(AGENT, failed(many), CONTEXT).gate;
  assert.equal(gate.length, GATE_LIMITS.fields);
  assert.equal(GATE_LIMITS.fields, 6);
  for (const [index, field] of gate.entries()) {
    assert.equal(field.name.length, GATE_LIMITS.name);
    assert.ok(field.name.endsWith("…"));
    assert.equal(String(field.value).length, GATE_LIMITS.value);
    assert.ok(String(field.value).startsWith(String(index)), "in the answer's order");
  }
});

Deno.test("toAgentOutcome() masks the key in a field's name, its text and a number that spells it", () => {
  const numeric = "31415926535";
  const gate = toAgentOutcome(
    AGENT,
    failed([
      { name: `why ${KEY}`, value: `echo: ${KEY}` },
      { name: "b64", value: `x ${btoa(KEY)} y` },
      { name: "cut", value: `${"a".repeat(190)}${KEY}${"z".repeat(50)}` },
      { name: "pin", value: Number(numeric) },
    ]),
    { ...CONTEXT, secrets: [KEY, numeric] },
  ).gate;
  assert.deepEqual(gate.slice(0, 3).map((field) => field.name), ["why ***", "b64", "cut"]);
  assert.equal(gate[0]!.value, "echo: ***");
  assert.equal(gate[1]!.value, "x *** y");
  assert.equal(gate[2]!.value, `${"a".repeat(190)}***${"z".repeat(6)}…`);
  assert.deepEqual(gate[3], { name: "pin", value: "***" });
  const text = JSON.stringify(gate);
  for (const part of [KEY, KEY.slice(0, 8), btoa(KEY), numeric]) assert.ok(!text.includes(part));
});

Deno.test("toAgentOutcome() makes each field one inert line, and leaves out names that end empty or repeat", () => {
  const gate = toAgentOutcome(
    AGENT,
    failed([
      { name: "\u0000\u200b", value: "no name" },
      { name: "rule", value: "a\nb \u001b[31mred\u001b[0m" },
      { name: "ru\u200ble", value: "a repeat once cleaned" },
      { name: "::error::x", value: "##vso[task.complete]done" },
    ]),
    CONTEXT,
  ).gate;
  assert.deepEqual(gate, [
    { name: "rule", value: "a b red" },
    { name: '"::error::x"', value: "##vso [task.complete]done" },
  ]);
});

Deno.test("toAgentOutcome() gives no fields to a gate without a verdict", () => {
  const timedOut: GateResult = {
    ...failed([]),
    end: { kind: "timed_out", lastFault: null },
    passed: null,
  };
  assert.deepEqual(toAgentOutcome(AGENT, timedOut, CONTEXT).gate, []);
});

Deno.test("combineExitCodes() gives 0 only when every agent passed", () => {
  assert.equal(combineExitCodes([0]), 0);
  assert.equal(combineExitCodes([0, 0, 0]), 0);
  assert.equal(combineExitCodes([0, 1]), 1);
});

Deno.test("combineExitCodes() takes the first that applies of 2, 3, 4, 1, 0", () => {
  assert.equal(combineExitCodes([1, 4]), 4);
  assert.equal(combineExitCodes([4, 3, 1]), 3);
  assert.equal(combineExitCodes([0, 3, 2]), 2);
  assert.equal(combineExitCodes([1, 1, 0]), 1);
  assert.equal(combineExitCodes([4, 0]), 4);
});

Deno.test("combineExitCodes() lets an interrupt win over every other code", () => {
  assert.equal(combineExitCodes([2, 130, 0]), ExitCode.Sigint);
  assert.equal(combineExitCodes([3, 143]), ExitCode.Sigterm);
});

Deno.test("combineExitCodes() refuses an empty list and unknown codes", () => {
  assert.throws(() => combineExitCodes([]), RangeError);
  assert.throws(() => combineExitCodes([0, 7]), RangeError);
});

Deno.test("combineExitCodes() does not depend on the order of the agents", () => {
  const codes = [0, 1, 3, 4];
  for (let i = 0; i < 24; i++) {
    const shuffled = [...codes].sort(() => Math.random() - 0.5);
    assert.equal(combineExitCodes(shuffled), 3);
  }
});
