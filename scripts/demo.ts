/**
 * `deno task demo`: starts the fake evaluation service on a free loopback port, runs the real
 * gate for an agent whose quality gate passes and for one whose gate fails on purpose, and shows
 * what a user sees and the exit codes. Exits 0 when everything happened as designed.
 */

import { AGENTS, defaultAgents, KEYS, startFakeService } from "../tests/support/fake_service.ts";

const ROOT = new URL("../", import.meta.url);
const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT))) as {
  runtimePermissions: string[];
};
const main = new URL("src/main.ts", ROOT).pathname;
const bold = (text: string) => Deno.noColor ? text : `\x1b[1m${text}\x1b[22m`;

async function gate(baseUrl: string, agent: string): Promise<number> {
  console.log(
    bold(`\n$ SERVICE_API_KEY=*** service-ci --base-url ${baseUrl} --agent ${agent}`),
  );
  const env: Record<string, string> = { SERVICE_API_KEY: KEYS.ci };
  for (const name of ["PATH", "HOME", "DENO_DIR", "NO_COLOR", "TERM", "SystemRoot"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      ...config.runtimePermissions,
      main,
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
  });
  const { code } = await child.output();
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
console.log(bold(`→ exit code ${failed}`) + " (1: the gate failed, the pipeline stops here)");

const runs = [...service.runs.values()];
console.log(`\nThe service received ${runs.length} runs, each with only CI metadata, e.g.:
  ${JSON.stringify(runs[0]?.ciMetadata)}`);

if (passed === 0 && failed === 1) {
  console.log(
    bold("\nThe demo ran as designed: the passing gate exited 0 and the failing gate exited 1."),
  );
  console.log("Next: `deno task test`, then README.md for real use.");
  Deno.exit(0);
}
console.error(
  `\nThe demo did NOT run as designed: expected exit codes 0 and 1, got ${passed} and ${failed}.`,
);
Deno.exit(1);
