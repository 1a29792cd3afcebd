/**
 * The real process at a terminal (a pseudo-terminal from `script`): a live status line and
 * colours there, and plain lines when `TERM=dumb` says the terminal shows neither.
 */

import assert from "node:assert/strict";
import { AGENTS, defaultAgents, KEYS, startFakeService } from "../support/fake_service.ts";
import { MAIN, PERMISSIONS } from "../support/program.ts";

const ESCAPE = "\x1b[";

function _quote(arg: string): string {
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

// Everything the program wrote to the terminal, stdout and stderr alike.
async function _atTerminal(args: readonly string[], env: Record<string, string>) {
  const command = [Deno.execPath(), "run", "--no-prompt", "--quiet", ...PERMISSIONS, MAIN, ...args]
    .map(_quote).join(" ");
  for (const name of ["PATH", "HOME", "DENO_DIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  const output = await new Deno.Command("script", {
    args: ["-qec", command, "/dev/null"],
    cwd: await Deno.makeTempDir({ prefix: "service-ci-terminal-" }),
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: output.code, text: new TextDecoder().decode(output.stdout) };
}

Deno.test({
  name:
    "at a terminal with TERM=dumb the console writes plain lines: no colour, no cursor movement",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const passing = defaultAgents().find((agent) => agent.id === AGENTS.passing)!;
    await using service = await startFakeService({ agents: [passing] });
    const env = { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: service.url };
    const [dumb, xterm] = await Promise.all([
      _atTerminal(["--agent", passing.id], { ...env, TERM: "dumb" }),
      _atTerminal(["--agent", passing.id], { ...env, TERM: "xterm-256color" }),
    ]);
    assert.equal(dumb.code, 0, dumb.text);
    assert.equal(xterm.code, 0, xterm.text);
    // The control: the same run on a capable terminal does colour (so this one is a terminal).
    assert.ok(xterm.text.includes(ESCAPE), xterm.text);
    assert.ok(!dumb.text.includes(ESCAPE), JSON.stringify(dumb.text));
    assert.match(dumb.text, /quality gate passed|exit 0/);
  },
});
