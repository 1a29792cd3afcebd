import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "npm:fast-check@3.23.2";
import {
  commandFromString,
  TaskCommand,
} from "npm:azure-pipelines-task-lib@5.281.0/taskcommand.js";
import {
  azureCommand,
  azureSummaryFile,
  createAzureWriter,
} from "../../../src/outputs/ci/azure.ts";
import { gateProblems, summaryMarkdown } from "../../../src/outputs/summary.ts";
import { azureAgentParse, commandsIn } from "../../support/ci_log_parsers.ts";
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

const WORKDIR = "/work/dir";
const STEP = "3d9f7a1c-5b2e-4f60-8a71-0c4e9b6d2f13";
const SUMMARY_FILE = azureSummaryFile(STEP);
const writer = createAzureWriter({ cwd: WORKDIR, uuid: () => STEP });

/** The commands a writer printed, parsed back by azure-pipelines-task-lib. */
function parsed(commands: readonly string[]): TaskCommand[] {
  return commands.map((line) => {
    assert.ok(line.startsWith("##vso["), line);
    assert.ok(!/[\r\n]/.test(line), `one line: ${JSON.stringify(line)}`);
    return commandFromString(line);
  });
}

function variables(commands: readonly TaskCommand[]): Record<string, string> {
  return Object.fromEntries(
    commands.filter((c) => c.command === "task.setvariable").map((c) => {
      assert.equal(c.properties["isOutput"], "true");
      return [c.properties["variable"] ?? "", c.message];
    }),
  );
}

Deno.test("the progress section is one ##[group] line and one ##[endgroup] line", () => {
  assert.deepEqual(writer.progressStart("service-ci: 2 agents"), ["##[group]service-ci: 2 agents"]);
  assert.deepEqual(writer.progressEnd(passingReport), ["##[endgroup]"]);
  assert.equal(writer.ci, "Azure Pipelines");
});

Deno.test("a hostile progress title stays one line and forms no other command", () => {
  const [line] = writer.progressStart("a\n##vso[task.complete result=Succeeded]\r##teamcity[x]");
  assert.ok(line !== undefined && !/[\r\n]/.test(line), JSON.stringify(line));
  assert.deepEqual(commandsIn(line).filter((found) => found.ci !== "github"), []);
  assert.deepEqual(commandsIn(line), [{ ci: "github", name: "group" }]);
});

Deno.test("finish() logs one error issue per gate that did not pass, in the annotation's words", async () => {
  const { io, record } = fakeNativeIo();
  await writer.finish(mixedReport, io);
  const issues = parsed(record.commands).filter((c) => c.command === "task.logissue");
  assert.deepEqual(issues.map((c) => c.properties), Array(4).fill({ type: "error" }));
  assert.deepEqual(issues.map((c) => c.message), gateProblems(mixedReport).map((p) => p.message));
  assert.match(
    issues[0]?.message ?? "",
    new RegExp(`^Agent ${AGENT_IDS.failed}: quality gate failed`),
  );
  assert.deepEqual(record.warnings, []);
});

Deno.test("finish() sets passed, exit_code, run_id and url as output variables", async () => {
  const { io, record } = fakeNativeIo();
  const failed = makeReport([
    makeAgent({ outcome: "failed", passed: false, exitCode: 1, runId: "r;1]%0A" }),
  ], { exitCode: 1 });
  await writer.finish(failed, io);
  assert.deepEqual(variables(parsed(record.commands)), {
    passed: "false",
    exit_code: "1",
    run_id: "r;1]%0A",
    url: "https://service.example/runs/run_1",
  });
});

Deno.test("finish() gives several agents' run ids and links as JSON arrays", async () => {
  const { io, record } = fakeNativeIo();
  await writer.finish(mixedReport, io);
  const values = variables(parsed(record.commands));
  assert.equal(values["passed"], "false");
  assert.equal(values["exit_code"], "3");
  assert.deepEqual(JSON.parse(values["run_id"] ?? ""), mixedReport.agents.map((a) => a.runId));
  assert.deepEqual(JSON.parse(values["url"] ?? ""), mixedReport.agents.map((a) => a.url));
});

Deno.test("finish() writes the Markdown summary to AGENT_TEMPDIRECTORY and uploads it", async () => {
  const { io, record } = fakeNativeIo({ env: { AGENT_TEMPDIRECTORY: "/agent/_temp" } });
  await writer.finish(passingReport, io);
  const path = join("/agent/_temp", SUMMARY_FILE);
  assert.equal(record.files.get(path), summaryMarkdown(passingReport));
  const last = parsed(record.commands).at(-1);
  assert.equal(last?.command, "task.uploadsummary");
  assert.equal(last?.message, path);
});

Deno.test("finish() writes the summary in the working directory when AGENT_TEMPDIRECTORY is unset", async () => {
  const { io, record } = fakeNativeIo();
  await writer.finish(passingReport, io);
  assert.deepEqual([...record.files.keys()], [join(WORKDIR, SUMMARY_FILE)]);
  assert.equal(
    record.commands.at(-1),
    `##vso[task.uploadsummary]${join(WORKDIR, SUMMARY_FILE)}`,
  );
});

Deno.test("two steps of one job write two summary files and upload each", async () => {
  const ids = ["0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9", "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"];
  const { io, record } = fakeNativeIo({ env: { AGENT_TEMPDIRECTORY: "/agent/_temp" } });
  for (const id of ids) {
    await createAzureWriter({ cwd: WORKDIR, uuid: () => id }).finish(
      id === ids[0] ? passingReport : mixedReport,
      io,
    );
  }
  const paths = ids.map((id) => join("/agent/_temp", `service-ci-summary-${id}.md`));
  assert.deepEqual([...record.files.keys()], paths);
  assert.equal(record.files.get(paths[0]!), summaryMarkdown(passingReport));
  assert.equal(record.files.get(paths[1]!), summaryMarkdown(mixedReport));
  const uploads = parsed(record.commands).filter((c) => c.command === "task.uploadsummary");
  assert.deepEqual(uploads.map((c) => c.message), paths);
});

Deno.test("a summary that cannot be written is one warning, and the other commands still go out", async () => {
  const { io, record } = fakeNativeIo({ failWrites: "disk full" });
  await writer.finish(mixedReport, io);
  assert.equal(record.warnings.length, 1);
  assert.match(
    record.warnings[0] ?? "",
    /Azure Pipelines: could not write the job summary to .* \(disk full\)/,
  );
  const names = parsed(record.commands).map((c) => c.command);
  assert.equal(names.filter((name) => name === "task.logissue").length, 4);
  assert.equal(names.filter((name) => name === "task.setvariable").length, 4);
  assert.ok(!names.includes("task.uploadsummary"));
});

Deno.test("finish() never throws when printing fails, and says so once", async () => {
  const { io, record } = fakeNativeIo({ failCommands: "broken pipe" });
  await writer.finish(mixedReport, io);
  assert.deepEqual(record.warnings, [
    "Azure Pipelines: could not print a logging command (broken pipe)",
    "Azure Pipelines: could not attach the job summary (broken pipe)",
  ]);
});

Deno.test("hostile service text in every field forms exactly the writer's own commands", async () => {
  const { io, record } = fakeNativeIo();
  await writer.finish(hostileReport, io);
  for (const line of record.commands) {
    assert.deepEqual(
      commandsIn(line).map((found) => found.ci),
      ["azure"],
      JSON.stringify(line),
    );
  }
  assert.deepEqual(
    variables(parsed(record.commands))["run_id"],
    JSON.stringify(hostileReport.agents.map((a) => a.runId)),
  );
});

// Command names and property keys as a task writes them; values and messages are anything.
const name = fc.stringMatching(/^[a-z]{1,8}\.[a-z]{1,12}$/);
const key = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,10}$/);
const value = fc.oneof(
  anyString(30),
  fc.array(fc.constantFrom("%", "%AZP25", "%0A", "%3B", "%5D", ";", "]", "[", "\r", "\n", "=", "x"))
    .map((parts) => parts.join("")),
);

Deno.test("azureCommand() writes byte for byte what azure-pipelines-task-lib writes", () => {
  // The library leaves a stray space when every property is empty; ours leaves the properties out.
  const props = fc.dictionary(key, value.filter((v) => v !== ""), { maxKeys: 3 });
  fc.assert(
    fc.property(name, props, value, (command, properties, message) => {
      assert.equal(
        azureCommand(command, properties, message),
        new TaskCommand(command, properties, message).toString(),
      );
    }),
    { numRuns: 1000 },
  );
});

Deno.test("azureCommand() reads back as the same command, properties and message for the agent", () => {
  fc.assert(
    fc.property(
      name,
      fc.dictionary(key, value, { maxKeys: 3 }),
      value,
      (command, props, message) => {
        const back = azureAgentParse(azureCommand(command, props, message));
        const kept = Object.fromEntries(Object.entries(props).filter(([, v]) => v !== ""));
        assert.deepEqual(back, { command, properties: kept, data: message });
      },
    ),
    { numRuns: 1000 },
  );
});

Deno.test("azureCommand() reads back the same for azure-pipelines-task-lib's commandFromString", () => {
  // commandFromString() trims each property, so values here have no blanks at their ends.
  const trimmed = value.filter((v) => v !== "" && v.trim() === v);
  fc.assert(
    fc.property(
      name,
      fc.dictionary(key, trimmed, { maxKeys: 3 }),
      value,
      (command, props, message) => {
        const back = commandFromString(azureCommand(command, props, message));
        assert.equal(back.command, command);
        assert.deepEqual({ ...back.properties }, props);
        assert.equal(back.message, message);
      },
    ),
    { numRuns: 1000 },
  );
});
