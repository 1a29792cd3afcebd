import assert from "node:assert/strict";
import fc from "npm:fast-check@3.23.2";
import tsm from "npm:teamcity-service-messages@0.1.14";
import {
  createTeamcityWriter,
  escapeTeamcityValue,
  teamcityMessage,
  teamcityProblemIdentity,
} from "../../../src/outputs/ci/teamcity.ts";
import { gateProblems } from "../../../src/outputs/summary.ts";
import { commandsIn, type TeamcityMessage, teamcityParse } from "../../support/ci_log_parsers.ts";
import { fakeNativeIo } from "../../support/native_io.ts";
import {
  AGENT_IDS,
  anyString,
  hostileReport,
  makeAgent,
  makeReport,
  mixedReport,
  passingReport,
} from "../../support/report_fixtures.ts";

const writer = createTeamcityWriter();

async function finished(report: Parameters<typeof writer.finish>[0]): Promise<TeamcityMessage[]> {
  const { io, record } = fakeNativeIo();
  await writer.finish(report, io);
  assert.deepEqual(record.warnings, []);
  return record.commands.map(teamcityParse);
}

Deno.test("the progress section is a blockOpened and a blockClosed named service-ci", () => {
  assert.deepEqual(writer.progressStart("gate: 2 agents\n[x]"), [
    "##teamcity[blockOpened name='service-ci' description='gate: 2 agents|n|[x|]']",
  ]);
  assert.deepEqual(writer.progressEnd(passingReport), [
    "##teamcity[blockClosed name='service-ci']",
  ]);
  assert.equal(writer.ci, "TeamCity");
});

Deno.test("finish() reports a passing agent as one passed test with its duration, then the parameters", async () => {
  const messages = await finished(passingReport);
  assert.deepEqual(messages, [
    { name: "testSuiteStarted", attributes: { name: "service-ci" } },
    { name: "testStarted", attributes: { name: AGENT_IDS.passed } },
    { name: "testFinished", attributes: { name: AGENT_IDS.passed, duration: "1234" } },
    { name: "testSuiteFinished", attributes: { name: "service-ci" } },
    { name: "setParameter", attributes: { name: "service-ci.passed", value: "true" } },
    { name: "setParameter", attributes: { name: "service-ci.exit-code", value: "0" } },
    { name: "setParameter", attributes: { name: "service-ci.run-id", value: "run_1" } },
    {
      name: "setParameter",
      attributes: { name: "service-ci.url", value: "https://service.example/runs/run_1" },
    },
  ]);
});

Deno.test("finish() fails the test of a failed gate, with the run id and link in the details", async () => {
  const report = makeReport([
    makeAgent({ agentId: AGENT_IDS.failed, outcome: "failed", passed: false, exitCode: 1 }),
  ], { exitCode: 1 });
  const failed = (await finished(report)).find((m) => m.name === "testFailed");
  assert.deepEqual(failed?.attributes, {
    name: AGENT_IDS.failed,
    message: "quality gate failed",
    details: gateProblems(report)[0]?.message,
  });
  assert.match(
    failed?.attributes["details"] ?? "",
    /run run_1.*https:\/\/service\.example\/runs\/run_1/,
  );
});

Deno.test("finish() ignores the tests without a verdict and raises one build problem for each that fails the build", async () => {
  const messages = await finished(mixedReport);
  const ignored = messages.filter((m) => m.name === "testIgnored").map((m) => m.attributes["name"]);
  assert.deepEqual(ignored, [
    AGENT_IDS.unchecked,
    AGENT_IDS.timed_out,
    AGENT_IDS.interrupted,
    AGENT_IDS.triggered,
  ]);
  const problems = messages.filter((m) => m.name === "buildProblem").map((m) => m.attributes);
  assert.deepEqual(problems.map((p) => p["identity"]), [
    `service-ci-${AGENT_IDS.unchecked}-unchecked`,
    `service-ci-${AGENT_IDS.timed_out}-timed-out`,
    `service-ci-${AGENT_IDS.interrupted}-interrupted`,
  ]);
  assert.match(problems[0]?.["description"] ?? "", /could not be checked.*403 Forbidden/);
  for (const agent of mixedReport.agents) {
    const finishedTest = messages.find((m) =>
      m.name === "testFinished" && m.attributes["name"] === agent.agentId
    );
    assert.equal(finishedTest?.attributes["duration"], String(agent.durationMs));
  }
  assert.equal(messages.filter((m) => m.name === "testFailed").length, 1);
});

Deno.test("finish() sets several agents' run ids and links as JSON arrays", async () => {
  const parameters = Object.fromEntries(
    (await finished(mixedReport)).filter((m) => m.name === "setParameter")
      .map((m) => [m.attributes["name"], m.attributes["value"]]),
  );
  assert.equal(parameters["service-ci.passed"], "false");
  assert.equal(parameters["service-ci.exit-code"], "3");
  assert.deepEqual(
    JSON.parse(parameters["service-ci.run-id"] ?? ""),
    mixedReport.agents.map((a) => a.runId),
  );
});

Deno.test("problem identities stay within TeamCity's 60 characters and are stable", () => {
  fc.assert(
    fc.property(
      anyString(120),
      fc.constantFrom("unchecked", "timed-out", "interrupted"),
      (id, kind) => {
        const identity = teamcityProblemIdentity(id, kind);
        assert.ok(identity.length <= 60, identity);
        assert.equal(teamcityProblemIdentity(id, kind), identity);
      },
    ),
  );
  const long = "x".repeat(80);
  assert.notEqual(
    teamcityProblemIdentity(long, "unchecked"),
    teamcityProblemIdentity(`${long}y`, "unchecked"),
  );
});

Deno.test("finish() never throws when printing fails, and says so once", async () => {
  const { io, record } = fakeNativeIo({ failCommands: "broken pipe" });
  await writer.finish(mixedReport, io);
  assert.deepEqual(record.warnings, ["TeamCity: could not print a service message (broken pipe)"]);
});

Deno.test("hostile service text in every field stays inside one service message per line", async () => {
  const { io, record } = fakeNativeIo();
  await writer.finish(hostileReport, io);
  for (const line of record.commands) {
    assert.ok(!/[\r\n\u0085\u2028\u2029]/.test(line), JSON.stringify(line));
    assert.deepEqual(commandsIn(line).map((found) => found.ci), ["teamcity"], line);
    teamcityParse(line);
  }
  const runIds = record.commands.map(teamcityParse)
    .find((m) => m.attributes["name"] === "service-ci.run-id")?.attributes["value"];
  assert.equal(runIds, JSON.stringify(hostileReport.agents.map((a) => a.runId)));
});

const attributeName = fc.stringMatching(/^[a-z][A-Za-z]{0,10}$/).filter((key) =>
  key !== "flowId" && key !== "timestamp"
);
const value = fc.oneof(
  anyString(30),
  fc.array(
    fc.constantFrom("|", "'", "[", "]", "\n", "\r", "\u0085", "\u2028", "\u2029", "|0x0041", "x"),
  )
    .map((parts) => parts.join("")),
);
const messageName = fc.constantFrom(
  "testStarted",
  "testFailed",
  "testIgnored",
  "testFinished",
  "testSuiteStarted",
  "testSuiteFinished",
  "buildProblem",
  "setParameter",
  "blockOpened",
  "blockClosed",
);

Deno.test("teamcityMessage() writes byte for byte what teamcity-service-messages writes", () => {
  // Its types promise console output; with stdout off each function returns the message instead.
  const library = tsm as unknown as { stdout: boolean; autoFlowId: boolean };
  library.stdout = false;
  library.autoFlowId = false;
  const create = tsm as unknown as Record<string, (args: Record<string, string>) => string>;
  fc.assert(
    fc.property(
      messageName,
      fc.dictionary(attributeName, value, { maxKeys: 4 }),
      value.filter((v) => v !== ""),
      (name, attributes, timestamp) => {
        // The library adds a timestamp when none is given; ours never does, so both get one here.
        const all = { ...attributes, timestamp };
        assert.equal(teamcityMessage(name, all), create[name]?.({ ...all }));
      },
    ),
    { numRuns: 1000 },
  );
});

Deno.test("teamcityMessage() reads back as the same message for TeamCity's reader", () => {
  fc.assert(
    fc.property(
      messageName,
      fc.dictionary(attributeName, value, { maxKeys: 4 }),
      (name, attributes) => {
        const line = teamcityMessage(name, attributes);
        assert.deepEqual(teamcityParse(line), { name, attributes });
        assert.deepEqual(commandsIn(line).map((found) => found.ci), ["teamcity"], line);
      },
    ),
    { numRuns: 1000 },
  );
});

Deno.test("escapeTeamcityValue() escapes each special character with a bar", () => {
  assert.equal(
    escapeTeamcityValue("|'\n\r[]\u0085\u2028\u2029é"),
    "|||'|n|r|[|]|x|l|pé",
  );
});
