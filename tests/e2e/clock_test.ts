/**
 * The real clock on real time (the slow tier): a wait that really passes, and whether a pending
 * wait keeps a spawned Deno alive. Everything else runs on virtual time (tests/platform/).
 */

import assert from "node:assert/strict";
import { sleep } from "../../src/platform/clock.ts";

const SLEEP = new URL("../../src/platform/clock.ts", import.meta.url).href;

async function _evaluate(code: string): Promise<{ stdout: string; ms: number }> {
  const started = performance.now();
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", `import { sleep } from ${JSON.stringify(SLEEP)};\n${code}`],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.equal(output.code, 0);
  return { stdout: new TextDecoder().decode(output.stdout), ms: performance.now() - started };
}

Deno.test("sleep() resolves once the time has passed", async () => {
  const started = performance.now();
  await sleep(30, new AbortController().signal);
  assert.ok(performance.now() - started >= 29, "woke too early");
});

Deno.test("a pending sleep() keeps the process alive until it ends", async () => {
  const { stdout } = await _evaluate(
    `sleep(100, new AbortController().signal).then(() => console.log("woke"));`,
  );
  assert.equal(stdout, "woke\n");
});

Deno.test("an aborted sleep() no longer keeps the process alive", async () => {
  const { ms } = await _evaluate(
    `const c = new AbortController(); sleep(60_000, c.signal).catch(() => {}); c.abort();`,
  );
  assert.ok(ms < 30_000, `the process waited for the aborted sleep (${ms.toFixed(0)} ms)`);
});
