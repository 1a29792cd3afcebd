/**
 * The outputs' lifecycle as run.ts drives it (src/outputs/mod.ts, src/outputs/output.ts): what each kind
 * of output means for the exit code, the order they end in, and a hook that throws or hangs.
 * Everything runs in process on the harness's virtual time.
 */

import assert from "node:assert/strict";
import { Output } from "../../src/outputs/streams.ts";
import type { RunReport } from "../../src/report/outcome.ts";
import { eachOutput, finishOutputs } from "../../src/outputs/mod.ts";
import { run } from "../../src/run.ts";
import type { RunOutput } from "../../src/outputs/output.ts";
import { Interrupted } from "../../src/platform/signals.ts";
import { readGithubOutput } from "../support/github_output.ts";
import { makeAgent, makeReport } from "../support/report_fixtures.ts";
import { AGENT, harness } from "../support/run_harness.ts";

const REPORT: RunReport = makeReport([
  makeAgent({
    agentId: AGENT,
    status: "completed",
    passed: false,
    outcome: "failed",
    exitCode: 1,
    durationMs: 1000,
  }),
], { exitCode: 1 });

function recorder(
  log: string[],
  name: string,
  kind: RunOutput["kind"],
  extra: Partial<RunOutput> = {},
): RunOutput {
  return { kind, name, finish: (report) => void log.push(`${name} ${report.exitCode}`), ...extra };
}

Deno.test("finishOutputs(): reports first with the code, courtesy next, the console last", async () => {
  const h = harness();
  const output = new Output(h.effects.console);
  const log: string[] = [];
  const file = {
    what: "the test report",
    source: "--test",
    fixedBy: "it",
    path: "/out/test.txt",
    append: false,
    render: (report: RunReport) => `code ${report.exitCode}\n`,
  };
  const code = await finishOutputs(
    h.effects,
    [
      recorder(log, "console", "console"),
      recorder(log, "comment", "courtesy"),
      { kind: "report", name: "the test report", files: [file] },
    ],
    REPORT,
    output,
  );
  assert.equal(code, 1);
  assert.equal(h.files.get("/out/test.txt"), "code 1\n");
  assert.deepEqual(log, ["comment 1", "console 1"]);
});

Deno.test("finishOutputs(): a report that cannot be written gives exit 3, which the courtesy outputs and the console see", async () => {
  const h = harness({ failWrite: ["/out/test.txt"] });
  const output = new Output(h.effects.console);
  const log: string[] = [];
  const code = await finishOutputs(
    h.effects,
    [
      {
        kind: "report",
        name: "the test report",
        files: [{
          what: "the test report",
          source: "--test",
          fixedBy: "it",
          path: "/out/test.txt",
          append: false,
          render: () => "text\n",
        }],
      },
      recorder(log, "comment", "courtesy"),
      recorder(log, "console", "console"),
    ],
    REPORT,
    output,
  );
  assert.equal(code, 3);
  assert.deepEqual(log, ["comment 3", "console 3"]);
  assert.match(h.stderr.join(""), /cannot write the test report \(\/out\/test\.txt\)/);
});

Deno.test("finishOutputs(): a courtesy output that rejects is one line and changes nothing", async () => {
  const h = harness();
  const output = new Output(h.effects.console);
  const log: string[] = [];
  const code = await finishOutputs(
    h.effects,
    [
      {
        kind: "courtesy",
        name: "the broken channel",
        finish: () => Promise.reject(new Error("boom\nmore")),
      },
      recorder(log, "comment", "courtesy"),
      recorder(log, "console", "console"),
    ],
    REPORT,
    output,
  );
  assert.equal(code, 1);
  assert.deepEqual(log, ["comment 1", "console 1"]);
  assert.equal(h.stderr.join(""), "service-ci: the broken channel could not be written: boom\n");
});

Deno.test("finishOutputs(): a courtesy output that hangs is left after the budget, named; after an interrupt the console comes first", async () => {
  for (const interrupted of [false, true]) {
    const h = harness();
    if (interrupted) h.interrupt.abort(new Interrupted("SIGINT"));
    const output = new Output(h.effects.console);
    const code = await finishOutputs(
      h.effects,
      [
        { kind: "console", name: "console", finish: () => output.stderr("summary\n") },
        { kind: "courtesy", name: "the stuck comment", finish: () => new Promise<void>(() => {}) },
      ],
      REPORT,
      output,
    );
    assert.equal(code, 1);
    const within = interrupted ? "2 s" : "1 min";
    const left =
      `service-ci: the stuck comment did not finish within ${within} and was left; the verdict and exit code are not affected\n`;
    assert.equal(h.stderr.join(""), interrupted ? `summary\n${left}` : `${left}summary\n`);
  }
});

Deno.test("eachOutput(): a hook that throws is one line and the next output still gets its call", () => {
  const h = harness();
  const output = new Output(h.effects.console);
  const seen: string[] = [];
  eachOutput(
    [
      {
        kind: "courtesy",
        name: "the first",
        end: () => {
          throw new Error("broken");
        },
      },
      { kind: "courtesy", name: "the second", end: () => void seen.push("second") },
    ],
    output,
    (each) => each.end?.(REPORT),
  );
  assert.deepEqual(seen, ["second"]);
  assert.equal(h.stderr.join(""), "service-ci: the first: broken\n");
});

Deno.test("run() in GitHub Actions with --no-ci-native keeps the step outputs and summary (reports) and drops the group and annotations (courtesy)", async () => {
  const env = {
    GITHUB_ACTIONS: "true",
    GITHUB_OUTPUT: "/out/github_output",
    GITHUB_STEP_SUMMARY: "/out/summary.md",
  };
  for (const native of [true, false]) {
    const h = harness({
      args: ["--agent", AGENT, ...(native ? [] : ["--no-ci-native"])],
      env,
      reads: [{ status: "completed", passed: false }],
    });
    assert.equal(await run(h.effects), 1);
    assert.equal(readGithubOutput(h.files.get(env.GITHUB_OUTPUT) ?? "").get("exit-code"), "1");
    assert.match(h.files.get(env.GITHUB_STEP_SUMMARY) ?? "", /quality gate failed/);
    const commands = [...h.stdout, ...h.stderr].join("").split("\n").filter((line) =>
      line.startsWith("::")
    );
    if (native) {
      assert.deepEqual(commands.map((line) => line.split(" ")[0]!.split("::")[1]), [
        "group",
        "endgroup",
        "error",
      ]);
    } else {
      assert.deepEqual(commands, []);
    }
  }
});
