import assert from "node:assert/strict";
import fc from "npm:fast-check@3.23.2";
import { renderJson } from "../../src/outputs/json.ts";
import {
  anyString,
  HOSTILE_STRINGS,
  hostileReport,
  makeAgent,
  makeReport,
  mixedReport,
  passingReport,
  twoPassingReport,
} from "../support/report_fixtures.ts";
import { reportSchema, strictAjv } from "../support/report_schema.ts";

// strict mode also rejects a schema with unknown keywords or loose types, so the schema file
// itself is checked here, not only the documents.
const validate = strictAjv().compile(reportSchema());

function assertValid(document: unknown): void {
  assert.ok(validate(document), JSON.stringify(validate.errors, null, 2));
}

function assertInvalid(document: unknown, why: string): void {
  assert.equal(validate(document), false, `should not validate: ${why}`);
}

Deno.test("renderJson() output validates against docs/report.schema.json for every fixture", () => {
  for (
    const report of [
      passingReport,
      twoPassingReport,
      mixedReport,
      hostileReport,
      makeReport([]),
      makeReport([makeAgent({ outcome: "failed", passed: false })], { warnOnly: true }),
    ]
  ) {
    assertValid(JSON.parse(renderJson(report)));
  }
});

Deno.test("renderJson() writes pretty JSON with two-space indent and a trailing newline", () => {
  const text = renderJson(passingReport);
  assert.ok(text.endsWith("}\n"));
  assert.ok(!text.endsWith("\n\n"));
  assert.equal(text, `${JSON.stringify(JSON.parse(text), null, 2)}\n`);
  assert.match(text, /^\{\n {2}"schema_version": 1,\n {2}"version": "1\.0\.0",\n/);
});

Deno.test("renderJson() writes every documented key, in order, with snake_case names", () => {
  const document = JSON.parse(renderJson(mixedReport));
  assert.deepEqual(Object.keys(document), [
    "schema_version",
    "version",
    "exit_code",
    "started_at",
    "duration_ms",
    "warn_only",
    "ci_metadata",
    "agents",
  ]);
  assert.deepEqual(Object.keys(document.ci_metadata), [
    "commit_sha",
    "branch",
    "pull_request_number",
    "repository",
    "actor",
    "provider",
    "build_url",
  ]);
  for (const agent of document.agents) {
    assert.deepEqual(Object.keys(agent), [
      "agent_id",
      "run_id",
      "status",
      "passed",
      "outcome",
      "exit_code",
      "duration_ms",
      "url",
      "error",
      "gate",
    ]);
  }
});

Deno.test("renderJson() maps every agent's outcome, in order, keeping nulls", () => {
  const document = JSON.parse(renderJson(mixedReport));
  assert.equal(document.exit_code, 3);
  assert.equal(document.started_at, "2025-01-02T03:04:05.678Z");
  assert.equal(document.duration_ms, 1_800_100);
  assert.equal(document.warn_only, false);
  assert.deepEqual(
    document.agents.map((agent: { outcome: string }) => agent.outcome),
    ["passed", "failed", "unchecked", "timed_out", "interrupted", "triggered"],
  );
  assert.deepEqual(document.agents[2], {
    agent_id: "2d2e6c70-ab60-4ca0-9c75-5b3e4dbf9032",
    run_id: null,
    status: null,
    passed: null,
    outcome: "unchecked",
    exit_code: 3,
    duration_ms: 300,
    url: null,
    error: "403 Forbidden: the key lacks CI access",
    gate: {},
  });
  assert.equal(document.agents[1].passed, false);
  assert.equal(document.agents[0].passed, true);
});

Deno.test("renderJson() rounds durations to whole non-negative milliseconds", () => {
  const report = makeReport([makeAgent({ durationMs: 12.6 }), makeAgent({ durationMs: -3 })], {
    durationMs: Number.NaN,
  });
  const document = JSON.parse(renderJson(report));
  assert.equal(document.duration_ms, 0);
  assert.deepEqual(document.agents.map((agent: { duration_ms: number }) => agent.duration_ms), [
    13,
    0,
  ]);
  assertValid(document);
});

Deno.test("renderJson() copies only the documented CI metadata fields", () => {
  const metadata = { ...passingReport.ciMetadata, api_key: "sk_live_secret" };
  const text = renderJson(makeReport([makeAgent()], { ciMetadata: metadata }));
  assert.ok(!text.includes("sk_live_secret"));
  assertValid(JSON.parse(text));
});

Deno.test("renderJson() carries hostile strings through JSON.parse intact", () => {
  const document = JSON.parse(renderJson(hostileReport));
  hostileReport.agents.forEach((agent, index) => {
    assert.equal(document.agents[index].run_id, agent.runId);
    assert.equal(document.agents[index].status, agent.status);
    assert.equal(document.agents[index].url, agent.url);
    assert.equal(document.agents[index].error, agent.error);
  });
  assert.deepEqual(document.ci_metadata, hostileReport.ciMetadata);
  for (const hostile of HOSTILE_STRINGS) {
    const text = renderJson(makeReport([makeAgent({ status: hostile })]));
    // JSON.stringify escapes every control character, so none reaches the document raw.
    // deno-lint-ignore no-control-regex
    assert.ok(!/[\x00-\x09\x0b-\x1f]/.test(text));
    assert.equal(JSON.parse(text).agents[0].status, hostile);
  }
});

Deno.test("renderJson() output validates for any strings the service sends", () => {
  fc.assert(
    fc.property(
      anyString(),
      fc.option(anyString()),
      fc.constantFrom(...["passed", "failed", "unchecked", "timed_out", "interrupted"] as const),
      (status, error, outcome) => {
        const report = makeReport([makeAgent({ status, error, runId: status, outcome })]);
        const document = JSON.parse(renderJson(report));
        assertValid(document);
        assert.equal(document.agents[0].status, status);
      },
    ),
  );
});

Deno.test("docs/report.schema.json refuses documents with a wrong or missing field", () => {
  const good = () => JSON.parse(renderJson(mixedReport));
  // Each case writes a wrong type on purpose, which only `any` lets it do.
  // deno-lint-ignore no-explicit-any
  const cases: [string, (document: Record<string, any>) => void][] = [
    ["unknown outcome", (d) => (d.agents[0].outcome = "skipped")],
    ["missing error", (d) => delete d.agents[0].error],
    ["agent_id spelled agentId", (d) => {
      d.agents[0].agentId = d.agents[0].agent_id;
      delete d.agents[0].agent_id;
    }],
    ["exit_code as a string", (d) => (d.exit_code = "0")],
    ["passed as a string", (d) => (d.agents[0].passed = "true")],
    ["fractional duration", (d) => (d.agents[0].duration_ms = 1.5)],
    ["negative duration", (d) => (d.duration_ms = -1)],
    ["unknown exit code", (d) => (d.exit_code = 5)],
    ["agent id that is not a UUID", (d) => (d.agents[0].agent_id = "agent-1")],
    ["schema_version 2", (d) => (d.schema_version = 2)],
    ["missing ci_metadata", (d) => delete d.ci_metadata],
    ["missing provider", (d) => delete d.ci_metadata.provider],
    ["pull request number as a string", (d) => (d.ci_metadata.pull_request_number = "42")],
    ["started_at not a date", (d) => (d.started_at = "yesterday")],
    ["warn_only null", (d) => (d.warn_only = null)],
    ["agents not an array", (d) => (d.agents = {})],
  ];
  assertValid(good());
  for (const [why, spoil] of cases) {
    const document = good();
    spoil(document);
    assertInvalid(document, why);
  }
});

Deno.test("docs/report.schema.json accepts a document with fields it does not know, at every level", () => {
  // docs/compatibility.md: a 1.x release may add fields, and a 1.0 validator must still accept them.
  const document = JSON.parse(renderJson(mixedReport));
  document.added_in_1_1 = { any: ["shape"] };
  document.ci_metadata.event = "push";
  for (const agent of document.agents) agent.attempts = 2;
  assertValid(document);
});
