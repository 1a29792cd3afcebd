/**
 * Runs the one contract table (tests/support/contract_scenarios.ts) against both implementations
 * of the gate: the TypeScript runner (src/main.ts) and the curl-only scripts/direct-api.sh, so a
 * difference between them is a test failure. Scenarios run a few at a time: most of their time
 * is spent waiting for the services' short `Retry-After`s and polls.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type CommandResult, runCommand } from "./support/command.ts";
import { type Scenario, SCENARIOS } from "./support/contract_scenarios.ts";
import { AGENTS, defaultAgents, KEYS, startFakeService } from "./support/fake_service.ts";
import { runProgram } from "./support/program.ts";
import { DIRECT_API_TOOLS, needsTools, onlyTools } from "./support/tools.ts";

const SCRIPT = fileURLToPath(new URL("../scripts/direct-api.sh", import.meta.url));
// What direct-api.sh says it needs; jq is left out, so the script's own JSON reader is the one
// under test (tests/direct_api_test.ts checks that the two readers agree).
const SCRIPT_TOOLS = ["sh", ...DIRECT_API_TOOLS];
const NEEDS = needsTools({ tools: SCRIPT_TOOLS, notOn: ["windows"] });
// Scenarios in flight at once: enough to overlap their waits, few enough for a 2-core machine.
const CONCURRENCY = 6;

/** One implementation of the gate: runs it for one agent with this environment. */
interface Implementation {
  readonly name: string;
  run(agent: string, args: readonly string[], env: Record<string, string>): Promise<CommandResult>;
}

const IMPLEMENTATIONS: Implementation[] = [
  {
    name: "service-ci",
    run: (agent, args, env) => runProgram(["--agent", agent, ...args], { env }),
  },
];
if (!NEEDS.ignore && NEEDS.missing.length === 0) {
  const path = await onlyTools(SCRIPT_TOOLS);
  IMPLEMENTATIONS.push({
    name: "direct-api.sh",
    run: async (agent, args, env) => {
      const cwd = await Deno.makeTempDir({ prefix: "contract-cwd-" });
      try {
        return await runCommand(join(path, "sh"), [SCRIPT, "--agent", agent, ...args], {
          cwd,
          env: { PATH: path, ...env },
          clearEnv: true,
        });
      } finally {
        await Deno.remove(cwd, { recursive: true });
      }
    },
  });
}

/** A base URL where nothing listens. */
function _closedUrl(): string {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return `http://127.0.0.1:${port}`;
}

async function _play(scenario: Scenario, implementation: Implementation): Promise<void> {
  await using service = await startFakeService({
    agents: defaultAgents(scenario.runMs ?? 60_000),
    queuedMs: 0,
  });
  await using elsewhere = await startFakeService({ agents: defaultAgents(0) });
  scenario.setup?.({ service, elsewhere });
  const env = {
    SERVICE_API_KEY: KEYS.ci,
    SERVICE_BASE_URL: scenario.unreachable ? _closedUrl() : service.url,
    ...scenario.env,
  };
  const result = await implementation.run(
    scenario.agent ?? AGENTS.passing,
    scenario.args ?? [],
    env,
  );
  const shown = `${implementation.name} printed:\n${result.stderr}${result.stdout}`;
  assert.equal(result.code, scenario.exitCode, shown);
  for (const text of [result.stdout, result.stderr]) {
    assert.ok(!text.includes(KEYS.ci), `the key was printed; ${shown}`);
  }
  assert.equal(elsewhere.requests.length, 0, "requests to another origin");
  try {
    scenario.check?.({ service, elsewhere, ...result });
  } catch (error) {
    if (error instanceof Error) error.message += `\n${shown}`;
    throw error;
  }
}

/** Runs `tasks` with at most `size` of them at once. */
async function _pool(tasks: ReadonlyArray<() => Promise<unknown>>, size: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]!();
  };
  await Promise.all(Array.from({ length: size }, worker));
}

Deno.test({
  name:
    `every scenario of the contract table ends alike in service-ci and direct-api.sh${NEEDS.nameSuffix}`,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    NEEDS.assertFound();
    const tasks = SCENARIOS.flatMap((scenario) =>
      IMPLEMENTATIONS.map((implementation) => () =>
        t.step({
          name: `${implementation.name}: ${scenario.group}: ${scenario.name}`,
          fn: () => _play(scenario, implementation),
          sanitizeOps: false,
          sanitizeResources: false,
          sanitizeExit: false,
        })
      )
    );
    await _pool(tasks, CONCURRENCY);
  },
});
