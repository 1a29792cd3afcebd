import assert from "node:assert/strict";
import { join } from "node:path";
import { MAX_READ_BYTES, readTextFile, runCommand } from "../../src/platform/system.ts";
import { systemClock } from "../../src/platform/clock.ts";
import { FakeTime } from "../support/fake_time.ts";
import { proxyFetch, startSilentProxy } from "../support/native_io.ts";
import { FileRefused } from "../../src/platform/bounds.ts";

// A program written to a temporary directory, run by its absolute path.
async function withScript(
  body: string,
  test: (program: string, dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-system-" });
  try {
    const program = join(dir, "tool");
    await Deno.writeTextFile(program, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    await test(program, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const BIG = "x".repeat(200_000);

// A wait that ends only when `signal` aborts, with its reason.
function _aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}
const UNIX = Deno.build.os !== "windows";

Deno.test({
  name: "runCommand() gives the exit code of a program that read all of its input",
  ignore: !UNIX,
  fn: () =>
    withScript('cat > "$(dirname "$0")/input"; exit 3', async (program, dir) => {
      const result = await runCommand(program, [], { stdin: BIG, timeoutMs: 10_000 }, systemClock);
      assert.deepEqual(result, { kind: "exited", code: 3 });
      assert.equal(await Deno.readTextFile(join(dir, "input")), BIG);
    }),
});

Deno.test({
  name:
    "runCommand() says why the input could not be written when the program exits without reading it, and never rejects",
  ignore: !UNIX,
  fn: () =>
    withScript("exit 0", async (program) => {
      const result = await runCommand(program, [], { stdin: BIG, timeoutMs: 10_000 }, systemClock);
      assert.equal(result.kind, "exited");
      assert.equal(result.kind === "exited" && result.code, 0);
      assert.match(result.kind === "exited" && result.inputError || "", /broken pipe/i);
    }),
});

Deno.test("runCommand() does not start a program that is not on PATH, or has no time left", async () => {
  assert.deepEqual(
    await runCommand("service-ci-no-such-program", [], { timeoutMs: 10_000 }, systemClock),
    { kind: "not-run", reason: "not on PATH" },
  );
  assert.deepEqual(
    await runCommand("service-ci-no-such-program", [], { timeoutMs: 0 }, systemClock),
    { kind: "not-run", reason: "no time was left to run it" },
  );
});

Deno.test({
  name:
    "runCommand() stops a program that outlasts its bound with SIGTERM, even one that never reads a large input",
  ignore: !UNIX,
  fn: () =>
    withScript("exec sleep 600", async (program) => {
      // The bound ends at once; the grace before SIGKILL never ends by itself (only when the
      // program has ended), so SIGTERM alone must have stopped it.
      const waits: number[] = [];
      const clock = {
        sleep: (ms: number, signal: AbortSignal) =>
          waits.push(ms) === 1 ? Promise.resolve() : _aborted(signal),
      };
      const result = await runCommand(program, [], { stdin: BIG, timeoutMs: 200 }, clock);
      assert.deepEqual(result, { kind: "timed-out", afterMs: 200 });
      assert.deepEqual(waits, [200, 1_000]);
    }),
});

Deno.test({
  name: "runCommand() kills a program that ignores SIGTERM once killAfterMs has passed",
  ignore: !UNIX,
  fn: () =>
    withScript(
      'trap "" TERM; echo started > "$(dirname "$0")/started"; while :; do sleep 0.05; done',
      async (program, dir) => {
        // A named pipe: reading it ends once the program has written to it, its trap set.
        const mkfifo = await new Deno.Command("mkfifo", { args: [join(dir, "started")] }).output();
        assert.equal(mkfifo.code, 0);
        const time = new FakeTime();
        // Virtual time stands still until the program ignores SIGTERM, then runs out the bound
        // and the grace.
        void time.hold(Deno.readTextFile(join(dir, "started")));
        const result = await runCommand(
          program,
          [],
          { timeoutMs: 300, killAfterMs: 200 },
          time,
        );
        assert.deepEqual(result, { kind: "timed-out", afterMs: 300 });
        assert.equal(time.monotonic(), 500);
      },
    ),
});

Deno.test({
  name: "runCommand() stops a program at once when its signal aborts, and rejects with the reason",
  ignore: !UNIX,
  fn: () =>
    withScript("exec sleep 600", async (program) => {
      const interrupt = new AbortController();
      const started = performance.now();
      // On virtual time the 10-minute bound would end it as soon as nothing else happens: only
      // the abort, given at once, may stop it first.
      const result = runCommand(program, [], {
        timeoutMs: 600_000,
        signal: interrupt.signal,
      }, new FakeTime());
      interrupt.abort(new Error("interrupted by SIGTERM"));
      await assert.rejects(result, /interrupted by SIGTERM/);
      assert.ok(performance.now() - started < 5_000, `${performance.now() - started} ms`);
      await assert.rejects(
        runCommand(program, [], { timeoutMs: 600_000, signal: interrupt.signal }, systemClock),
        /interrupted by SIGTERM/,
      );
    }),
});

Deno.test({
  name: "runCommand() keeps stdout up to stdoutMaxBytes, and none of a longer one",
  ignore: !UNIX,
  fn: () =>
    withScript('printf "%s" "$1"', async (program) => {
      const run = (text: string) =>
        runCommand(program, [text], {
          timeoutMs: 10_000,
          stdoutMaxBytes: 8,
          quiet: true,
        }, systemClock);
      assert.deepEqual(await run("12345678"), { kind: "exited", code: 0, stdout: "12345678" });
      assert.deepEqual(await run("123456789"), { kind: "exited", code: 0 });
    }),
});

Deno.test("boundedFetch() aborts a request with no answer within its bound, saying so", async () => {
  await using proxy = startSilentProxy();
  const time = new FakeTime();
  const fetcher = proxyFetch(proxy.url, () => 200, time.timeout);
  // Virtual time stands still until the proxy has the connection, then runs out the bound.
  void time.hold(proxy.connected);
  await assert.rejects(
    fetcher("http://api.bitbucket.org/2.0/x", { method: "PUT", body: "{}" }),
    (error: Error) => error.message === "no answer within 200 ms",
  );
  assert.equal(time.monotonic(), 200);
  assert.equal(proxy.connections(), 1);
});

Deno.test("boundedFetch() asks for the bound as each request starts", async () => {
  await using proxy = startSilentProxy();
  const time = new FakeTime();
  const bounds = [150, 50];
  const fetcher = proxyFetch(proxy.url, () => bounds.shift() ?? 0, time.timeout);
  await assert.rejects(fetcher("http://api.bitbucket.org/a"), /no answer within 150 ms/);
  await assert.rejects(fetcher("http://api.bitbucket.org/b"), /no answer within 50 ms/);
  assert.equal(time.monotonic(), 200);
});

Deno.test({
  name: "readTextFile() reads a regular file, and refuses a pipe, a device and a file over 16 MiB",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "service-ci-read-" });
    try {
      await Deno.writeTextFile(join(dir, ".env"), "SERVICE_API_KEY=sk_x\n");
      assert.equal(await readTextFile(join(dir, ".env")), "SERVICE_API_KEY=sk_x\n");
      await Deno.writeFile(join(dir, "big"), new Uint8Array(MAX_READ_BYTES + 1));
      const mkfifo = await new Deno.Command("mkfifo", { args: [join(dir, "pipe")] }).output();
      assert.equal(mkfifo.code, 0);
      const refusals: Array<[string, RegExp]> = [
        [join(dir, "big"), /^is larger than 16 MiB$/],
        [join(dir, "pipe"), /^is a named pipe \(FIFO\), not a regular file$/],
        ["/dev/zero", /^is a character device, not a regular file$/],
        [dir, /^is a directory$/],
      ];
      for (const [path, message] of refusals) {
        await assert.rejects(() => readTextFile(path), (error: unknown) => {
          assert.ok(error instanceof FileRefused, `${path}: ${error}`);
          assert.match(error.message, message);
          return true;
        });
      }
      await assert.rejects(() => readTextFile(join(dir, "none")), Deno.errors.NotFound);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
