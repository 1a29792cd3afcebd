import assert from "node:assert/strict";
import { delimiter, join } from "node:path";
import fc from "npm:fast-check@3.23.2";
import {
  buildkiteAnnotationStyle,
  buildkiteMetaData,
  createBuildkiteWriter,
} from "../../../src/outputs/ci/buildkite.ts";
import { summaryMarkdown } from "../../../src/outputs/summary.ts";
import {
  anyString,
  hostileReport,
  makeAgent,
  makeReport,
  mixedReport,
  passingReport,
} from "../../support/report_fixtures.ts";
import {
  type AgentCall,
  agentCalls,
  realRunCommand,
  recordingIo,
  writeStandInAgent,
  writeUnrulyAgent,
} from "../../support/native_io.ts";
import type { CommandResult } from "../../../src/effects.ts";
import { FakeTime } from "../../support/fake_time.ts";
import { nativeTimeBound } from "../../../src/platform/bounds.ts";

// Runs `test` with a stand-in `buildkite-agent` first on PATH.
async function withStandIn(
  test: (calls: () => Promise<AgentCall[]>, dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-buildkite-" });
  const path = Deno.env.get("PATH") ?? "";
  try {
    await writeStandInAgent(dir);
    Deno.env.set("PATH", `${dir}${delimiter}${path}`);
    await test(() => agentCalls(dir), dir);
  } finally {
    Deno.env.set("PATH", path);
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("createBuildkiteWriter() opens a collapsed group and expands it only when a gate did not pass", () => {
  const writer = createBuildkiteWriter();
  assert.equal(writer.ci, "Buildkite");
  assert.deepEqual(writer.progressStart("service-ci: waiting\n+++ injected"), [
    "--- service-ci: waiting +++ injected",
  ]);
  assert.deepEqual(writer.progressEnd(passingReport), []);
  assert.deepEqual(writer.progressEnd(mixedReport), ["^^^ +++"]);
  const warnOnly = makeReport([makeAgent({ outcome: "failed", passed: false })], {
    warnOnly: true,
  });
  assert.deepEqual(writer.progressEnd(warnOnly), ["^^^ +++"]);
  const noWait = makeReport([makeAgent({ outcome: "triggered", passed: null })]);
  assert.deepEqual(writer.progressEnd(noWait), []);
});

Deno.test("createBuildkiteWriter() makes any title one group header", () => {
  fc.assert(
    fc.property(anyString(), (title) => {
      const lines = createBuildkiteWriter().progressStart(title);
      assert.equal(lines.length, 1);
      assert.ok(lines[0]!.startsWith("--- "));
      // deno-lint-ignore no-control-regex
      assert.doesNotMatch(lines[0]!, /[\x00-\x1f\x7f-\x9f\u2028\u2029]/);
    }),
  );
});

Deno.test("buildkiteAnnotationStyle() is success, warning under --warn-only, or error", () => {
  assert.equal(buildkiteAnnotationStyle(passingReport), "success");
  assert.equal(buildkiteAnnotationStyle(mixedReport), "error");
  const warnOnly = makeReport([makeAgent({ outcome: "failed", passed: false })], {
    warnOnly: true,
    exitCode: 0,
  });
  assert.equal(buildkiteAnnotationStyle(warnOnly), "warning");
});

Deno.test("buildkiteMetaData() names the GitHub action's outputs and leaves out empty values", () => {
  assert.deepEqual(buildkiteMetaData(passingReport), [
    ["service-ci.passed", "true"],
    ["service-ci.exit-code", "0"],
    ["service-ci.run-id", "run_1"],
    ["service-ci.url", "https://service.example/runs/run_1"],
  ]);
  const unchecked = makeReport([
    makeAgent({ runId: null, url: null, outcome: "unchecked", passed: null, exitCode: 3 }),
  ], { exitCode: 3 });
  assert.deepEqual(buildkiteMetaData(unchecked), [
    ["service-ci.passed", "false"],
    ["service-ci.exit-code", "3"],
  ]);
  const several = Object.fromEntries(buildkiteMetaData(mixedReport));
  assert.deepEqual(JSON.parse(several["service-ci.run-id"]!), [
    "run_1",
    "run_2",
    null,
    "run_4",
    "run_5",
    "run_6",
  ]);
});

Deno.test("createBuildkiteWriter().finish() annotates the build with the summary and sets the meta-data through buildkite-agent", async () => {
  await withStandIn(async (calls) => {
    const { io, warnings, commands } = recordingIo();
    await createBuildkiteWriter().finish(mixedReport, io);
    assert.deepEqual(warnings, []);
    assert.deepEqual(commands, []);
    const made = await calls();
    assert.deepEqual(made[0], {
      args: ["annotate", "--style", "error", "--context", "service-ci"],
      stdin: summaryMarkdown(mixedReport),
    });
    assert.deepEqual(
      made.slice(1),
      buildkiteMetaData(mixedReport).map(([key, value]) => ({
        args: ["meta-data", "set", key],
        stdin: value,
      })),
    );
    assert.equal(made.length, 5);
  });
});

Deno.test("createBuildkiteWriter().finish() never puts service text in buildkite-agent's arguments", async () => {
  await withStandIn(async (calls) => {
    const { io, warnings } = recordingIo();
    await createBuildkiteWriter().finish(hostileReport, io);
    assert.deepEqual(warnings, []);
    const made = await calls();
    assert.deepEqual(made.map((call) => call.args), [
      ["annotate", "--style", "error", "--context", "service-ci"],
      ["meta-data", "set", "service-ci.passed"],
      ["meta-data", "set", "service-ci.exit-code"],
      ["meta-data", "set", "service-ci.run-id"],
      ["meta-data", "set", "service-ci.url"],
    ]);
    assert.deepEqual(
      JSON.parse(made[3]!.stdin),
      hostileReport.agents.map((agent) => agent.runId),
    );
  });
});

Deno.test("createBuildkiteWriter().finish() says in one line that buildkite-agent is missing and does nothing else", async () => {
  const empty = await Deno.makeTempDir({ prefix: "service-ci-no-agent-" });
  const path = Deno.env.get("PATH") ?? "";
  try {
    Deno.env.set("PATH", empty);
    const { io, warnings, commands, files } = recordingIo();
    await createBuildkiteWriter().finish(mixedReport, io);
    assert.deepEqual(warnings, [
      "Buildkite: buildkite-agent could not be run (not on PATH); " +
      "no annotation or meta-data was written, only the log group",
    ]);
    assert.deepEqual(commands, []);
    assert.equal(files.size, 0);
  } finally {
    Deno.env.set("PATH", path);
    await Deno.remove(empty);
  }
});

Deno.test("createBuildkiteWriter().finish() says in one line what buildkite-agent failed to write, and goes on", async () => {
  await withStandIn(async (calls, dir) => {
    await Deno.writeTextFile(join(dir, "exit"), "1");
    const { io, warnings } = recordingIo();
    await createBuildkiteWriter().finish(passingReport, io);
    assert.deepEqual(warnings, [
      "Buildkite: buildkite-agent could not write the annotation (exit code 1), " +
      "meta-data service-ci.passed (exit code 1), meta-data service-ci.exit-code (exit code 1), " +
      "meta-data service-ci.run-id (exit code 1), meta-data service-ci.url (exit code 1)",
    ]);
    assert.equal((await calls()).length, 5);
  });
});

// A recording io whose buildkite-agent answers each call with the next of `results`.
function scriptedIo(results: readonly CommandResult[]) {
  const calls: string[][] = [];
  const record = recordingIo({
    runCommand: (_program, args) => {
      calls.push([...args]);
      return Promise.resolve(results[calls.length - 1] ?? { kind: "exited", code: 0 });
    },
  });
  return { ...record, calls };
}

Deno.test("createBuildkiteWriter().finish() names an annotation buildkite-agent exited without reading, and goes on", async () => {
  const { io, warnings, calls } = scriptedIo([
    { kind: "exited", code: 0, inputError: "Broken pipe (os error 32)" },
  ]);
  await createBuildkiteWriter().finish(passingReport, io);
  assert.deepEqual(warnings, [
    "Buildkite: buildkite-agent could not write the annotation " +
    "(exit code 0 before reading all of its input: Broken pipe (os error 32))",
  ]);
  assert.equal(calls.length, 5);
});

Deno.test("createBuildkiteWriter().finish() stops after an annotate that outlasted its bound, in one line", async () => {
  const { io, warnings, calls } = scriptedIo([{ kind: "timed-out", afterMs: 10_000 }]);
  await createBuildkiteWriter().finish(mixedReport, io);
  assert.deepEqual(warnings, [
    "Buildkite: buildkite-agent annotate did not finish within 10 s and was stopped; " +
    "the annotation may be missing and no meta-data was set",
  ]);
  assert.equal(calls.length, 1);
});

Deno.test("createBuildkiteWriter().finish() does not try the meta-data after one that outlasted its bound", async () => {
  const { io, warnings, calls } = scriptedIo([
    { kind: "exited", code: 0 },
    { kind: "exited", code: 0 },
    { kind: "timed-out", afterMs: 2_500 },
  ]);
  await createBuildkiteWriter().finish(passingReport, io);
  assert.deepEqual(warnings, [
    "Buildkite: buildkite-agent could not write meta-data service-ci.exit-code (stopped after 2500 ms), " +
    "meta-data service-ci.run-id (not tried), meta-data service-ci.url (not tried)",
  ]);
  assert.equal(calls.length, 3);
});

Deno.test({
  name:
    "createBuildkiteWriter().finish() with a real buildkite-agent that hangs ends within the bound, in one line",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "service-ci-buildkite-hangs-" });
    try {
      await writeUnrulyAgent(dir, "hangs");
      // The agent records its call in a named pipe: reading it ends once the call is recorded.
      const mkfifo = await new Deno.Command("mkfifo", { args: [join(dir, "calls")] }).output();
      assert.equal(mkfifo.code, 0);
      const time = new FakeTime();
      // Virtual time stands still until the agent has its call, then runs out its bound.
      const calls = time.hold(Deno.readTextFile(join(dir, "calls")));
      const bound = nativeTimeBound(time.monotonic, { eachMs: 200, totalMs: 1_000 });
      const { io, warnings } = recordingIo({
        runCommand: (_program, args, stdin) =>
          realRunCommand(join(dir, "buildkite-agent"), args, { stdin, timeoutMs: bound() }, time),
      });
      await createBuildkiteWriter().finish(mixedReport, io);
      assert.deepEqual(warnings, [
        "Buildkite: buildkite-agent annotate did not finish within 200 ms and was stopped; " +
        "the annotation may be missing and no meta-data was set",
      ]);
      assert.equal(await calls, "annotate\n");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
