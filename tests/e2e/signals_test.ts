/**
 * Signals that reach the real process while it runs git: a `git` on PATH that never answers must
 * not keep an interrupt from ending the run at once, and SIGHUP (a closed terminal, some CI
 * agents) ends it like SIGTERM, with every report written.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENTS, defaultAgents, KEYS, startFakeService } from "../support/fake_service.ts";
import { assertValidJunit } from "../support/junit.ts";
import { startProgram } from "../support/program.ts";

const UNIX = Deno.build.os !== "windows";

// GitHub sends SIGTERM 7.5 s after SIGINT and kills the job 2.5 s later: the whole of an
// interrupted run's ending must fit well inside that.
const CANCEL_WINDOW_MS = 7_500;

// A `git` that writes its pid where the test can find it, then never answers.
async function hangingGit(): Promise<{ dir: string; pids: () => Promise<number[]> }> {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-hanging-git-" });
  await Deno.writeTextFile(
    join(dir, "git"),
    `#!/bin/sh\necho $$ >> "${join(dir, "pids")}"\nexec sleep 600\n`,
    { mode: 0o755 },
  );
  const pids = async () => {
    const text = await Deno.readTextFile(join(dir, "pids")).catch(() => "");
    return text.split("\n").filter((line) => line !== "").map(Number);
  };
  return { dir, pids };
}

// SIGHUP exits 143 as SIGTERM does: v1 adds no exit code (docs/compatibility.md).
for (const [signal, code] of [["SIGHUP", 143], ["SIGTERM", 143]] as const) {
  Deno.test({
    name:
      `${signal} while git hangs exits ${code} at once, with the --json and --junit reports written`,
    ignore: !UNIX,
    fn: async () => {
      const passing = defaultAgents().find((agent) => agent.id === AGENTS.passing)!;
      await using service = await startFakeService({ agents: [passing] });
      const git = await hangingGit();
      const junit = join(git.dir, "gate.xml");
      const program = await startProgram(["--agent", passing.id, "--json", "--junit", junit], {
        env: {
          SERVICE_API_KEY: KEYS.ci,
          SERVICE_BASE_URL: service.url,
          PATH: `${git.dir}:${Deno.env.get("PATH") ?? ""}`,
        },
      });
      try {
        const started = performance.now();
        while ((await git.pids()).length === 0) {
          assert.ok(performance.now() - started < 20_000, "git was never started");
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const sent = performance.now();
        program.process.kill(signal);
        const timer = setTimeout(() => program.process.kill("SIGKILL"), CANCEL_WINDOW_MS);
        const result = await program.finished().finally(() => clearTimeout(timer));
        const took = performance.now() - sent;
        assert.equal(result.code, code, result.stderr);
        assert.ok(took < CANCEL_WINDOW_MS, `exited ${Math.round(took)} ms after ${signal}`);
        const document = JSON.parse(result.stdout);
        assert.equal(document.exit_code, code);
        assert.equal(document.agents[0].outcome, "interrupted");
        assert.match(result.stderr, new RegExp(`interrupted by ${signal}`));
        await assertValidJunit(junit);
        assert.match(await Deno.readTextFile(junit), new RegExp(`interrupted by ${signal}`));
        // Nothing was started on the service once the interrupt had come.
        assert.deepEqual(service.requestsOf("POST"), []);
      } finally {
        try {
          program.process.kill("SIGKILL");
        } catch {
          // It has ended.
        }
        for (const pid of await git.pids()) {
          try {
            Deno.kill(pid, "SIGKILL");
          } catch {
            // Ended already, as it should have.
          }
        }
        await Deno.remove(git.dir, { recursive: true });
      }
    },
  });
}
