/**
 * `deno task demo`: starts the fake evaluation service on a free loopback port, runs the real
 * gate for an agent whose quality gate passes and for one whose gate fails on purpose, shows what
 * a user sees and the exit codes, and ends with commands to try that work as printed. Exits 0
 * when everything happened as designed.
 */

import { AGENTS, defaultAgents, KEYS, startFakeService } from "../tests/support/fake_service.ts";
import { MAIN, PERMISSIONS } from "../tests/support/program.ts";

/** The port `deno task fake-service` listens on when given none. */
const FAKE_SERVICE_PORT = 8787;

// Escape codes only for a person at a terminal who has not asked for none (https://no-color.org).
const color = Deno.stdout.isTerminal() && !Deno.noColor;
const bold = (text: string) => color ? `\x1b[1m${text}\x1b[22m` : text;

/** The command a reader runs from the repository's root for one gate against `baseUrl`. */
function startCommand(baseUrl: string, agent: string): string {
  // --quiet before the task's name: without it `deno task` prints a "Task start …" banner.
  return `SERVICE_API_KEY=${KEYS.ci} deno task --quiet start --base-url ${baseUrl} --agent ${agent}`;
}

async function gate(baseUrl: string, agent: string): Promise<number> {
  console.log(bold(`\n$ ${startCommand(baseUrl, agent)}`));
  const env: Record<string, string> = { SERVICE_API_KEY: KEYS.ci };
  for (const name of ["PATH", "HOME", "DENO_DIR", "NO_COLOR", "TERM", "SystemRoot"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  // What `deno task --quiet start` runs, so the gate's own output is all there is.
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      ...PERMISSIONS,
      MAIN,
      "--base-url",
      baseUrl,
      "--agent",
      agent,
    ],
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  return code;
}

await using service = await startFakeService({ agents: defaultAgents(2_500), queuedMs: 600 });
console.log(bold("service-ci demo"));
console.log(`A fake evaluation service is listening on ${service.url} with two agents:
  ${AGENTS.passing}  guardian-prod-readiness: its quality gate passes
  ${AGENTS.failing}  red-team-jailbreaks: its quality gate FAILS, on purpose`);

const passed = await gate(service.url, AGENTS.passing);
console.log(bold(`→ exit code ${passed}`) + " (0: the gate passed, the pipeline goes on)");
const failed = await gate(service.url, AGENTS.failing);
console.log(
  bold(`→ exit code ${failed}`) +
    " (1: the gate failed, on purpose: this is how a pipeline stops on a bad agent)",
);

const runs = [...service.runs.values()];
console.log(`\nThe service received ${runs.length} runs, each with only CI metadata, e.g.:
  ${JSON.stringify(runs[0]?.ciMetadata)}`);

if (passed !== 0 || failed !== 1) {
  console.error(
    `\nThe demo did NOT run as designed: expected exit codes 0 and 1, got ${passed} and ${failed}.`,
  );
  Deno.exit(1);
}
const fakeService = `http://127.0.0.1:${FAKE_SERVICE_PORT}`;
console.log(
  bold("\nThe demo ran as designed: the passing gate exited 0 and the failing gate exited 1."),
);
console.log(`
Try it yourself from the repository's root, in two terminals:

  deno task fake-service
  ${startCommand(fakeService, AGENTS.passing)}

The first keeps a fake service on ${fakeService} (its runs take 5 s; Ctrl-C stops it).
The second runs one gate against it; with --agent ${AGENTS.failing} the gate fails.
Without Deno installed, write \`npx --yes deno@2.9.6 task …\` wherever it says \`deno task …\`.
Then: \`deno task test\`, and README.md for real use.`);
