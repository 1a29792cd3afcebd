import assert from "node:assert/strict";
import fc from "npm:fast-check@3.23.2";
import {
  duplicateMember,
  normalizeStatus,
  readRun as readAsked,
} from "../../src/service/verdict.ts";
import { ENDED_WITHOUT_VERDICT, FINISHED, IN_PROGRESS } from "../support/run_statuses.ts";

// The run and agent asked for.
const AGENT = "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10";
const readRun = (document: Record<string, unknown>) =>
  readAsked(document, { runId: "run_1", agentId: AGENT });

const KNOWN = [...IN_PROGRESS, ...ENDED_WITHOUT_VERDICT, ...FINISHED];

const RUNS = { numRuns: 2000 };

type Doc = Record<string, unknown>;

/** A known status in one of the spellings the contract says must read the same. */
function spelled(statuses: readonly string[]): fc.Arbitrary<string> {
  return fc.tuple(fc.constantFrom(...statuses), fc.array(fc.boolean(), { maxLength: 12 }))
    .chain(([status, upper]) =>
      fc.constantFrom("_", "-", " ").map((separator) =>
        [...status.replaceAll("_", separator)]
          .map((
            char,
            index,
          ) => (upper[index % Math.max(1, upper.length)] ? char.toUpperCase() : char))
          .join("")
      )
    );
}

/** Values for `passed` of every JSON type and then some: the only pass is the boolean `true`. */
const passedValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.boolean() },
  {
    weight: 3,
    arbitrary: fc.constantFrom("true", "false", "True", 1, 0, -0, null, "", "yes", [true], {
      value: true,
    }, Number.NaN),
  },
  { weight: 1, arbitrary: fc.jsonValue() },
  { weight: 1, arbitrary: fc.anything() },
);

/** Something standing where an object should be: objects, arrays, prototypes, primitives. */
function container(inner: fc.Arbitrary<Doc>): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 6, arbitrary: inner },
    { weight: 1, arbitrary: inner.map((object) => [object]) },
    // The same members inherited, not owned: JSON never makes these, and they must not count.
    { weight: 2, arbitrary: inner.map((object) => Object.create(object) as unknown) },
    {
      weight: 1,
      arbitrary: inner.map((object) => Object.assign(Object.create(null), object) as unknown),
    },
    // A `__proto__` key as JSON.parse makes it: an own member named "__proto__".
    { weight: 1, arbitrary: inner.map((object) => JSON.parse(`{"__proto__":${_json(object)}}`)) },
    { weight: 1, arbitrary: fc.jsonValue() },
    { weight: 1, arbitrary: fc.anything() },
  );
}

const gate: fc.Arbitrary<Doc> = fc.record(
  { passed: passedValue, extra: fc.jsonValue() },
  { requiredKeys: [] },
);
const results: fc.Arbitrary<Doc> = fc.record(
  { gate: container(gate), extra: fc.jsonValue() },
  { requiredKeys: [] },
);
const statusValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: spelled(KNOWN) },
  { weight: 1, arbitrary: fc.constantFrom(...KNOWN).map((s) => ` ${s}\t`) },
  { weight: 1, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.string({ unit: "binary" }) },
  { weight: 1, arbitrary: fc.anything() },
);
const crafted: fc.Arbitrary<Doc> = fc.record(
  {
    // Mostly the run asked for; otherwise another, which is no verdict (contract §2).
    run_id: fc.oneof({ weight: 3, arbitrary: fc.constant("run_1") }, fc.string()),
    status: statusValue,
    results: container(results),
    url: fc.webUrl(),
    passed: passedValue,
  },
  { requiredKeys: [] },
);
/** A well-formed document, except perhaps where `container` puts something odd. */
const nearlyValid: fc.Arbitrary<Doc> = fc.record({
  status: statusValue,
  results: container(fc.record({ gate: container(fc.record({ passed: passedValue })) })),
});
/** Any document the reader could be handed: crafted ones, random JSON objects, odd prototypes. */
const anyDocument: fc.Arbitrary<Doc> = fc.oneof(
  { weight: 6, arbitrary: nearlyValid },
  { weight: 6, arbitrary: crafted },
  { weight: 1, arbitrary: fc.dictionary(fc.string(), fc.jsonValue()) },
  { weight: 1, arbitrary: fc.object() },
  { weight: 1, arbitrary: crafted.map((doc) => Object.create(doc) as Doc) },
  { weight: 1, arbitrary: crafted.map((doc) => JSON.parse(`{"__proto__":${_json(doc)}}`) as Doc) },
  { weight: 1, arbitrary: crafted.map((doc) => _jsonRoundTrip(doc)) },
);

function _json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "null";
  } catch {
    return "null";
  }
}

function _jsonRoundTrip(doc: Doc): Doc {
  const parsed: unknown = JSON.parse(_json(doc));
  return _isPlainObject(parsed) ? parsed : {};
}

function _isPlainObject(value: unknown): value is Doc {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `results.gate.passed` as a JSON reader sees it: own members of non-array objects only. */
function ownPassed(doc: Doc): { readonly found: boolean; readonly value?: unknown } {
  if (!Object.hasOwn(doc, "results") || !_isPlainObject(doc.results)) return { found: false };
  const results = doc.results;
  if (!Object.hasOwn(results, "gate") || !_isPlainObject(results.gate)) return { found: false };
  const gate = results.gate;
  return Object.hasOwn(gate, "passed") ? { found: true, value: gate.passed } : { found: false };
}

/** The status folded as the contract says, or null when the document owns no string status. */
function ownStatus(doc: Doc): string | null {
  return Object.hasOwn(doc, "status") && typeof doc.status === "string"
    ? normalizeStatus(doc.status)
    : null;
}

/** Contract §2, written out independently of src/service/verdict.ts. */
function expectedKind(doc: Doc): "in_progress" | "passed" | "failed" | "unchecked" {
  const status = ownStatus(doc);
  const passed = ownPassed(doc);
  for (const [name, asked] of [["run_id", "run_1"], ["agent_id", AGENT]]) {
    const named = Object.hasOwn(doc, name!) ? doc[name!] : null;
    if (named !== null && named !== asked) return "unchecked";
  }
  if (status !== null && IN_PROGRESS.includes(status)) return "in_progress";
  if (status !== null && ENDED_WITHOUT_VERDICT.includes(status)) return "unchecked";
  if (passed.found && passed.value === true) return status === "failed" ? "unchecked" : "passed";
  if (passed.found && passed.value === false) return "failed";
  return status !== null && FINISHED.includes(status) ? "unchecked" : "in_progress";
}

Deno.test("normalizeStatus() reads case, hyphens and spaces alike for every known status", () => {
  fc.assert(
    fc.property(fc.constantFrom(...KNOWN), spelled(KNOWN), (status, spelling) => {
      assert.equal(normalizeStatus(status), status);
      assert.ok(KNOWN.includes(normalizeStatus(spelling)), spelling);
    }),
    RUNS,
  );
});

Deno.test("readRun() never reads a pass unless the run may be finished and passed is exactly true", () => {
  fc.assert(
    fc.property(anyDocument, (doc) => {
      if (readRun(doc).kind !== "passed") return;
      const status = ownStatus(doc);
      assert.ok(status === null || !IN_PROGRESS.includes(status), `in progress: ${_json(doc)}`);
      assert.ok(
        status === null || !ENDED_WITHOUT_VERDICT.includes(status),
        `ended: ${_json(doc)}`,
      );
      const passed = ownPassed(doc);
      assert.ok(passed.found && passed.value === true, `passed is not own true: ${_json(doc)}`);
    }),
    RUNS,
  );
});

Deno.test("readRun() agrees with contract §2 on every document", () => {
  fc.assert(
    fc.property(anyDocument, (doc) => {
      assert.equal(readRun(doc).kind, expectedKind(doc), _json(doc));
    }),
    RUNS,
  );
});

Deno.test("readRun() reads a document as its JSON text would read, whatever its prototypes", () => {
  fc.assert(
    fc.property(anyDocument, (doc) => {
      const roundTripped = _jsonRoundTrip(doc);
      // Round-tripping drops inherited members; a document whose own JSON is not an object
      // cannot be compared.
      if (_json(doc) !== _json(roundTripped)) return;
      assert.equal(readRun(doc).kind, readRun(roundTripped).kind, _json(doc));
    }),
    RUNS,
  );
});

Deno.test("readRun() fails every finished run whose passed is false", () => {
  fc.assert(
    fc.property(spelled(FINISHED), crafted, (status, doc) => {
      const state = readRun({
        ...doc,
        run_id: "run_1",
        status,
        results: { gate: { passed: false } },
      });
      assert.equal(state.kind, "failed");
      assert.equal(state.status, status);
    }),
    RUNS,
  );
});

Deno.test("readRun() gives a finished run a verdict only for a boolean passed", () => {
  fc.assert(
    fc.property(spelled(FINISHED), passedValue, (status, passed) => {
      const kind = readRun({ status, results: { gate: { passed } } }).kind;
      const pass = normalizeStatus(status) === "failed" ? "unchecked" : "passed";
      assert.equal(kind, passed === true ? pass : passed === false ? "failed" : "unchecked");
    }),
    RUNS,
  );
});

Deno.test("readRun() never gives a verdict for a run in progress, whatever results say", () => {
  fc.assert(
    fc.property(spelled(IN_PROGRESS), anyDocument, passedValue, (status, doc, passed) => {
      const asked = { ...doc, run_id: "run_1", agent_id: AGENT, status };
      assert.equal(readRun(asked).kind, "in_progress");
      assert.equal(readRun({ ...asked, results: { gate: { passed } } }).kind, "in_progress");
    }),
    RUNS,
  );
});

Deno.test("readRun() never passes or fails a run that ended without a verdict", () => {
  fc.assert(
    fc.property(spelled(ENDED_WITHOUT_VERDICT), passedValue, (status, passed) => {
      const state = readRun({ status, results: { gate: { passed } } });
      assert.equal(state.kind, "unchecked");
    }),
    RUNS,
  );
});

Deno.test("readRun() without a string status passes only on an own boolean true", () => {
  fc.assert(
    fc.property(fc.anything(), container(results), (status, results) => {
      fc.pre(typeof status !== "string");
      const doc = { status, results };
      const passed = ownPassed(doc);
      const kind = readRun(doc).kind;
      if (passed.found && passed.value === true) assert.equal(kind, "passed");
      else if (passed.found && passed.value === false) assert.equal(kind, "failed");
      else assert.equal(kind, "in_progress");
    }),
    RUNS,
  );
});

Deno.test("readRun() takes no verdict from inherited results, gate or passed", () => {
  const gateTrue = { passed: true };
  const cases: Doc[] = [
    Object.assign(Object.create({ results: { gate: gateTrue } }), { status: "completed" }),
    { status: "completed", results: Object.create({ gate: gateTrue }) },
    { status: "completed", results: { gate: Object.create(gateTrue) } },
    JSON.parse('{"status":"completed","results":{"__proto__":{"gate":{"passed":true}}}}'),
    JSON.parse('{"status":"completed","results":{"gate":{"__proto__":{"passed":true}}}}'),
  ];
  for (const doc of cases) assert.equal(readRun(doc).kind, "unchecked", _json(doc));
});

Deno.test("readRun() cannot be made to pass by a polluted Object.prototype", () => {
  // Synchronous, and undone before anything else runs.
  Object.defineProperty(Object.prototype, "gate", {
    value: { passed: true },
    configurable: true,
    writable: true,
  });
  try {
    assert.equal(readRun({ status: "completed", results: {} }).kind, "unchecked");
    assert.equal(readRun({ results: {} }).kind, "in_progress");
  } finally {
    delete (Object.prototype as Record<string, unknown>).gate;
  }
  Object.defineProperty(Object.prototype, "results", {
    value: { gate: { passed: true } },
    configurable: true,
    writable: true,
  });
  try {
    assert.equal(readRun({ status: "completed" }).kind, "unchecked");
    assert.equal(readRun({}).kind, "in_progress");
  } finally {
    delete (Object.prototype as Record<string, unknown>).results;
  }
});

/** A JSON text of a run whose verdict's path repeats a member, or whose status contradicts it. */
const ambiguousText: fc.Arbitrary<string> = fc.tuple(
  fc.constantFrom("results", "gate", "passed", "status", "run_id", "agent_id"),
  fc.constantFrom(...FINISHED, "weird"),
  fc.boolean(),
  fc.boolean(),
  fc.constantFrom("passed", "pass\\u0065d", "\\u0070\\u0061ssed"),
).map(([repeated, status, first, second, spelled]) => {
  const gate = repeated === "passed"
    ? `{"passed":${first},"${spelled}":${second}}`
    : `{"passed":${second}}`;
  const results = repeated === "gate"
    ? `{"gate":{"passed":${first}},"gate":${gate}}`
    : `{"gate":${gate}}`;
  const members = [`"status":"${status}"`, `"results":${results}`];
  if (repeated === "results") members.unshift(`"results":{"gate":{"passed":${first}}}`);
  if (repeated === "status") members.unshift(`"status":"running"`);
  if (repeated === "run_id") members.push(`"run_id":"run_1"`, `"run_id":"run_1"`);
  if (repeated === "agent_id") members.push(`"agent_id":"a"`, `"agent_id":"a"`);
  return `{${members.join(",")}}`;
});

Deno.test("an answer with a repeated member on the verdict's path, or a failed status with passed: true, never passes", () => {
  const asked = { runId: "run_1", agentId: "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10" };
  fc.assert(
    fc.property(ambiguousText, (text) => {
      const duplicate = duplicateMember(text);
      assert.notEqual(duplicate, undefined, text);
      const state = readAsked(JSON.parse(text), { ...asked, duplicate });
      assert.equal(state.kind, "unchecked", text);
    }),
    RUNS,
  );
  fc.assert(
    fc.property(fc.constantFrom("failed", "FAILED", "Failed"), anyDocument, (status, doc) => {
      const text = JSON.stringify({ ...doc, status, results: { gate: { passed: true } } });
      const state = readAsked(JSON.parse(text), { ...asked, duplicate: duplicateMember(text) });
      assert.notEqual(state.kind, "passed", text);
    }),
    RUNS,
  );
});

Deno.test("duplicateMember() finds nothing in any JSON text without repeats, however it is spaced", () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.constantFrom(undefined, 1, "\t", " \r\n "), (value, space) => {
      assert.equal(duplicateMember(JSON.stringify(value, null, space)), undefined);
    }),
    RUNS,
  );
});
