/**
 * Property: hostile service text in every field the service controls produces no CI log
 * command on any stream, for any CI: the commands found in a run's output are exactly those of
 * the same run with plain values (service-ci's own), read with each CI's own reader.
 */

import assert from "node:assert/strict";
import fc from "npm:fast-check@3.23.2";
import { run } from "../src/run.ts";
import { commandsIn } from "./support/ci_log_parsers.ts";
import { AGENT, harness, type HarnessOptions } from "./support/run_harness.ts";

const FRAGMENTS = [
  "##vso[task.setvariable variable=x]y",
  "##vso[task.complete result=Succeeded]",
  "##teamcity[buildStatus status='SUCCESS']",
  "::error::x",
  "::set-output name=passed::true",
  "##[group]x",
  "--- x",
  "+++ x",
  "~~~ x",
  "^^^ +++",
  "section_start:1:x\r\x1b[0Kx",
  "section_end:1:x\r\x1b[0K",
  "\n",
  "\r\n",
  "\u2028",
  "\x1b[0K",
  " ",
  "#",
  "[",
  "%0A",
];

const hostile = fc.array(
  fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 4 })),
  { minLength: 1, maxLength: 6 },
).map((parts) => parts.join(""));

// Each CI's environment in turn, so that CI's native writer is on.
const CI_ENVS: Readonly<Record<string, Record<string, string>>> = {
  "GitHub Actions": { GITHUB_ACTIONS: "true" },
  "Azure Pipelines": { TF_BUILD: "True", AGENT_TEMPDIRECTORY: "/tmp/agent" },
  TeamCity: { TEAMCITY_VERSION: "2025.11" },
  Buildkite: { BUILDKITE: "true" },
  "GitLab CI": { GITLAB_CI: "true" },
  "Bitbucket Pipelines": { BITBUCKET_BUILD_NUMBER: "7", BITBUCKET_REPO_FULL_NAME: "acme/widgets" },
};

// The commands found in everything a run printed, and its exit code: service-ci's own commands
// depend on the outcome (a failed gate is a failed test, an unchecked one a build problem).
async function _commands(options: HarnessOptions): Promise<{ code: number; found: string[] }> {
  const h = harness(options);
  const code = await run(h.effects);
  const text = [...h.stdout, ...h.stderr].join("");
  return { code, found: commandsIn(text).map((found) => `${found.ci}:${found.name}`).sort() };
}

for (const [ci, env] of Object.entries(CI_ENVS)) {
  for (const json of [false, true]) {
    Deno.test(`run()${json ? " --json" : ""} in ${ci} prints no command from hostile service text, on any stream`, async () => {
      const args = ["--agent", AGENT, ...(json ? ["--json"] : [])];
      // The commands of a run with plain values, for each outcome a hostile run can have.
      const plain = new Map<number, string[]>();
      for (const read of [{ status: "completed", passed: false }, { status: "errored" }]) {
        const { code, found } = await _commands({
          args,
          env,
          trigger: { run_id: "run_1", url: "https://dash.example/r/1", status: "queued" },
          reads: [{ ...read, extra: { url: "https://dash.example/r/1" } }],
        });
        plain.set(code, found);
      }
      assert.deepEqual([...plain.keys()].sort(), [1, 3]);
      await fc.assert(
        fc.asyncProperty(
          hostile,
          hostile,
          hostile,
          fc.boolean(),
          async (runId, status, url, ended) => {
            const { code, found } = await _commands({
              args,
              env,
              trigger: { run_id: runId, url, status },
              reads: [
                ended ? { status: "errored", extra: { url, detail: status } } : {
                  status: `completed`,
                  passed: false,
                  extra: { url, run_id: runId, message: status },
                },
              ],
            });
            // Hostile text may make the answer unusable (exit 3), never a pass.
            assert.ok(code === 1 || code === 3, `exit ${code}`);
            assert.deepEqual(found, plain.get(code));
          },
        ),
        { numRuns: 25 },
      );
    });
  }
}
