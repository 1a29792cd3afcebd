import assert from "node:assert/strict";
import { runCommand } from "../support/command.ts";
import { taskArgs } from "../support/tasks.ts";

const ROOT = new URL("../../", import.meta.url);
const ROOT_PATH = new URL(".", ROOT).pathname;
function _env(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { TERM: "xterm-256color", ...extra };
  for (const name of ["PATH", "HOME", "DENO_DIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

const _quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/** The demo under a pseudo-terminal (`script`), so that its output is a terminal. */
async function _demoAtTerminal(env: Record<string, string>): Promise<string> {
  const command = [Deno.execPath(), ...taskArgs("demo")].map(_quote).join(" ");
  const result = await runCommand("script", ["-qec", command, "/dev/null"], {
    cwd: ROOT_PATH,
    env: _env(env),
    clearEnv: true,
  });
  assert.equal(result.code, 0, result.stdout + result.stderr);
  return result.stdout;
}

/** Starts `deno task fake-service` on a free port (tests listen on port 0 only); resolves its URL. */
async function _startFakeService(): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...taskArgs("fake-service"), "0"],
    cwd: ROOT_PATH,
    env: _env(),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let url: string | undefined;
  while (url === undefined) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the fake service ended before listening: ${text}`);
    text += value;
    url = /fake evaluation service on (http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1];
  }
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM");
      await child.status;
      await reader.cancel();
    },
  };
}

Deno.test(
  "deno task demo, without a terminal, exits 0 by itself with no escape code and ends with commands that work as printed",
  async () => {
    const demo = await runCommand(Deno.execPath(), taskArgs("demo"), {
      cwd: ROOT_PATH,
      env: _env(),
      clearEnv: true,
    });
    const output = demo.stdout + demo.stderr;
    assert.equal(demo.code, 0, output);
    assert.ok(!output.includes("\x1b"), `escape codes in:\n${output}`);
    assert.match(output, /the failing gate exited 1/);

    const closing = output.slice(output.indexOf("Try it yourself"));
    const lines = closing.split("\n").map((line) => line.trim());
    assert.ok(lines.includes("deno task fake-service"), closing);
    assert.match(closing, /npx --yes deno@2\.9\.6 task/);
    const start = lines.find((line) => line.startsWith("SERVICE_API_KEY="));
    const printed = /^SERVICE_API_KEY=(\S+) deno task --quiet start (.+)$/.exec(start ?? "");
    assert.ok(printed !== null, closing);
    const [, key, startArgs] = printed;

    // The printed commands, run as printed, except for the port: the printed one is 8787.
    const service = await _startFakeService();
    try {
      assert.match(startArgs!, /--base-url http:\/\/127\.0\.0\.1:8787 /);
      const gate = await runCommand(Deno.execPath(), [
        "task",
        "--quiet",
        "start",
        ...startArgs!.replace("http://127.0.0.1:8787", service.url).split(" "),
      ], { cwd: ROOT_PATH, env: _env({ SERVICE_API_KEY: key!, NO_COLOR: "1" }), clearEnv: true });
      assert.equal(gate.code, 0, gate.stdout + gate.stderr);
      assert.match(gate.stderr, /exit 0: 1 gate, 1 passed/);
      assert.ok(!/\bTask start\b|Warning|Info/.test(gate.stderr), gate.stderr);
    } finally {
      await service.stop();
    }
  },
);

Deno.test({
  name: "deno task demo makes its headings bold at a terminal, and not when NO_COLOR is set",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const [plain, colored] = await Promise.all([
      _demoAtTerminal({ NO_COLOR: "1" }),
      _demoAtTerminal({}),
    ]);
    assert.ok(colored.includes("\x1b[1mservice-ci demo"), colored);
    assert.ok(!plain.includes("\x1b[1m"), plain);
    assert.match(plain, /service-ci demo/);
  },
});
