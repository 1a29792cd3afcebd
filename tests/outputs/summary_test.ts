/**
 * The service's reason for a failed gate, as each surface shows it: the console, `--json`, JUnit,
 * the annotations, the step summary, the pull-request comment and the check run's summary. Built
 * through `toAgentOutcome` as a run builds it, so what one surface shows every other shows too,
 * bounded, with the key masked wherever the service echoed it.
 */

import assert from "node:assert/strict";
import { ConsoleReporter } from "../../src/outputs/console.ts";
import { renderJson } from "../../src/outputs/json.ts";
import { renderJunit } from "../../src/outputs/junit.ts";
import { gateProblems, summaryMarkdown } from "../../src/outputs/summary.ts";
import { githubAnnotations } from "../../src/outputs/ci/github.ts";
import { finalComment } from "../../src/forge/comment/content.ts";
import { agentSummary } from "../../src/report/markdown.ts";
import { type AgentOutcome, type RunReport, toAgentOutcome } from "../../src/report/outcome.ts";
import type { GateResult } from "../../src/service/poll.ts";
import type { GateField } from "../../src/service/verdict.ts";
import { cmarkGfm } from "../support/markdown.ts";
import { JUNIT_XSD, xmllint, xmlTest } from "../support/junit.ts";
import { reportSchema, strictAjv } from "../support/report_schema.ts";
import { AGENT_IDS, makeReport } from "../support/report_fixtures.ts";
import { toolTest } from "../support/tools.ts";
import { gateReason } from "../../src/report/words.ts";

const KEY = "sk_live_0123456789abcdef";
const RULE = "jailbreak success rate < 2%";
const REASON = `rule: ${RULE}; score: 0.031; threshold: 0.02; summary: 3 of 97 prompts leaked`;

function outcome(agentId: string, passed: boolean, gate: readonly GateField[]): AgentOutcome {
  const result: GateResult = {
    end: { kind: passed ? "passed" : "failed" },
    runId: passed ? "run_1" : "run_2",
    status: "completed",
    url: `https://service.example/runs/${passed ? "run_1" : "run_2"}`,
    passed,
    gate,
  };
  return toAgentOutcome(agentId, result, {
    durationMs: 2000,
    timeoutMs: 60_000,
    runIdGiven: false,
    secrets: [KEY],
  });
}

const SAID: GateField[] = [
  { name: "rule", value: RULE },
  { name: "score", value: 0.031 },
  { name: "threshold", value: 0.02 },
  { name: "summary", value: "3 of 97 prompts leaked" },
];

// A passed gate that says more, and a failed one whose reason echoes the key, twice over.
function report(failedSaid: readonly GateField[] = SAID): RunReport {
  return makeReport([
    outcome(AGENT_IDS.passed, true, [{ name: "rule", value: "toxicity < 0.01" }]),
    outcome(AGENT_IDS.failed, false, failedSaid),
  ], { exitCode: 1 });
}

// Every surface's text for `run`, by name: what a person or a program reads.
async function surfaces(run: RunReport) {
  let console = "";
  const reporter = new ConsoleReporter({
    output: { stderr: (text) => console += text, secrets: [KEY] },
    clock: { monotonic: () => 0, sleep: () => new Promise(() => {}) },
    header: "",
    tty: false,
    color: false,
  });
  reporter.begin(run.agents.map((agent) => agent.agentId), 60_000);
  for (const agent of run.agents) reporter.agentDone(agent);
  const failed = run.agents[1]!;
  return {
    console,
    json: renderJson(run),
    junit: renderJunit(run),
    annotations: githubAnnotations(run).join("\n"),
    "step summary": await _rendered(summaryMarkdown(run)),
    comment: await _rendered(finalComment("<!-- service-ci gate:x -->", run)),
    "check run": await _rendered(agentSummary(failed, run)),
  };
}

// Markdown as GitHub shows it, as text: cmark-gfm's HTML without tags, entities or the
// zero-width spaces that keep references from forming.
async function _rendered(markdown: string): Promise<string> {
  return (await cmarkGfm(markdown)).replace(/<[^>]*>/g, "")
    .replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"')
    .replaceAll("&amp;", "&").replaceAll("\u200b", "");
}

Deno.test("gateReason() is the failed gate's fields on one line, and nothing for any other outcome", () => {
  const run = report();
  assert.equal(gateReason(run.agents[1]!), REASON);
  assert.equal(gateReason(run.agents[0]!), null, "a passed gate needs no reason where people read");
  assert.equal(gateReason({ ...run.agents[1]!, gate: [] }), null);
  assert.equal(gateProblems(run)[0]!.message.includes(REASON), true);
});

toolTest(
  "a failed gate's reason is on every surface; a passed gate's only in --json",
  { tools: ["cmark-gfm"] },
  async () => {
    for (const [surface, text] of Object.entries(await surfaces(report()))) {
      if (surface === "json") continue;
      // Each surface's own escaping: XML's `<`, a workflow command's `%`.
      const shown = surface === "junit"
        ? REASON.replace("<", "&lt;")
        : surface === "annotations"
        ? REASON.replace("%", "%25")
        : REASON;
      assert.ok(text.includes(shown), `${surface}: ${text}`);
      assert.ok(!text.includes("toxicity"), `${surface} shows a passed gate's reason: ${text}`);
    }
  },
);

Deno.test("the console's line for a failed gate ends with the service's reason", async () => {
  const { console } = await surfaces(report());
  assert.ok(
    console.includes(`agent ${AGENT_IDS.failed}: FAILED (run run_2): ${REASON}\n`),
    console,
  );
  assert.ok(console.includes(`agent ${AGENT_IDS.passed}: PASSED (run run_1)\n`), console);
});

Deno.test("--json carries a gate object of scalars per agent, passed gates included, valid against the schema", async () => {
  const document = JSON.parse((await surfaces(report())).json);
  assert.deepEqual(document.agents[0].gate, { rule: "toxicity < 0.01" });
  assert.deepEqual(document.agents[1].gate, {
    rule: RULE,
    score: 0.031,
    threshold: 0.02,
    summary: "3 of 97 prompts leaked",
  });
  const validate = strictAjv().compile(reportSchema());
  assert.ok(validate(document), JSON.stringify(validate.errors));
  // A member named __proto__ is a field like any other, never the object's prototype.
  const proto = JSON.parse(
    renderJson(report([{ name: "__proto__", value: "x" }, { name: "n", value: 1 }])),
  );
  assert.deepEqual(Object.keys(proto.agents[1].gate), ["__proto__", "n"]);
  assert.ok(validate(proto), JSON.stringify(validate.errors));
});

xmlTest(
  "JUnit's failure carries the reason in its message and its text, and stays valid",
  async () => {
    const xml = renderJunit(report());
    await xmllint(["--noout", "--schema", JUNIT_XSD], { xml });
    const message = await xmllint(["--xpath", "string(//failure/@message)"], { xml });
    assert.equal(message.trim(), `quality gate failed: ${REASON}`);
    const text = await xmllint(["--xpath", "string(//failure)"], { xml });
    assert.ok(text.startsWith(`quality gate failed: ${REASON}\n`), text);
    assert.ok(text.includes(`\ngate: ${REASON}`), text);
    const out = await xmllint(["--xpath", "string(//testcase[failure]/system-out)"], { xml });
    assert.ok(out.includes(`gate: ${REASON}`), out);
  },
);

toolTest(
  "the key echoed in a reason's name or value appears on no surface, and the reason stays bounded",
  { tools: ["cmark-gfm", "xmllint"] },
  async () => {
    const echoing: GateField[] = [
      { name: `key ${KEY}`, value: `you sent ${KEY}` },
      { name: "encoded", value: encodeURIComponent(`k=${KEY}&x`) },
      { name: "long", value: `${"x".repeat(195)}${KEY}` },
      ...Array.from({ length: 10 }, (_, index) => ({ name: `n${index}`, value: "y".repeat(900) })),
    ];
    const run = report(echoing);
    const reason = gateReason(run.agents[1]!)!;
    assert.ok(reason.startsWith("key ***: you sent ***; encoded: k%3D***%26x; long: xxx"), reason);
    // 6 fields: 3 names of the key's echo, n0 to n2, each value cut to 200.
    assert.equal(reason.split("; ").length, 6);
    assert.ok(reason.length <= 6 * (40 + 2 + 200) + 5 * 2, String(reason.length));
    assert.ok(!reason.includes("n3:"));
    for (const [surface, text] of Object.entries(await surfaces(run))) {
      for (const part of [KEY, KEY.slice(0, 8), encodeURIComponent(KEY)]) {
        assert.ok(!text.includes(part), `${surface} shows ${part}`);
      }
      if (surface !== "json") assert.ok(!text.includes("y".repeat(201)), `${surface} unbounded`);
    }
    await xmllint(["--noout", "--schema", JUNIT_XSD], { xml: renderJunit(run) });
  },
);
