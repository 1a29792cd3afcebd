import assert from "node:assert/strict";
import fc from "npm:fast-check@3.23.2";
import { normalizeStatus, readRun } from "../src/verdict.ts";
import { ENDED_WITHOUT_VERDICT, FINISHED, IN_PROGRESS } from "./support/run_statuses.ts";

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
    run_id: fc.string(),
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

/** Contract §2, written out independently of src/verdict.ts. */
function expectedKind(doc: Doc): "in_progress" | "passed" | "failed" | "unchecked" {
  const status = ownStatus(doc);
  const passed = ownPassed(doc);
  if (status !== null && IN_PROGRESS.includes(status)) return "in_progress";
  if (status !== null && ENDED_WITHOUT_VERDICT.includes(status)) return "unchecked";
  if (passed.found && passed.value === true) return "passed";
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
      const state = readRun({ ...doc, status, results: { gate: { passed: false } } });
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
      assert.equal(kind, passed === true ? "passed" : passed === false ? "failed" : "unchecked");
    }),
    RUNS,
  );
});

Deno.test("readRun() never gives a verdict for a run in progress, whatever results say", () => {
  fc.assert(
    fc.property(spelled(IN_PROGRESS), anyDocument, passedValue, (status, doc, passed) => {
      assert.equal(readRun({ ...doc, status }).kind, "in_progress");
      assert.equal(readRun({ ...doc, status, results: { gate: { passed } } }).kind, "in_progress");
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
