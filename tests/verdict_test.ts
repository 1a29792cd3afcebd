import assert from "node:assert/strict";
import { normalizeStatus, readRun } from "../src/verdict.ts";
import { ENDED_WITHOUT_VERDICT, FINISHED, IN_PROGRESS } from "./support/run_statuses.ts";

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
    assert.equal(readRun({ status, ...gate(true) }).kind, "passed");
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
