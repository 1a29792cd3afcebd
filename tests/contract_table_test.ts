/**
 * Runs the one contract table (tests/support/contract_scenarios.ts) against both implementations
 * of the gate: the TypeScript runner and the curl-only scripts/direct-api.sh, so a difference
 * between them is a test failure. The runner plays every scenario in process — `run()` with the
 * real HTTP stack on virtual time (tests/support/in_process.ts), the fake services on the same
 * clock — and one scenario per exit code as the real program, src/main.ts in a process. The
 * script plays every scenario but those of the features it leaves to service-ci, as a process
 * with its own JSON reader (tests/direct_api_test.ts shows that python3 and jq read alike), on a
 * virtual clock it shares with the fake services (its `date` and `sleep`, tests/support/tools.ts).
 * The three implementations play at once, the scenarios of each a few at a time.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type CommandResult, runCommand } from "./support/command.ts";
import { type Scenario, SCENARIOS } from "./support/contract_scenarios.ts";
import { AGENTS, defaultAgents, KEYS, startFakeService } from "./support/fake_service.ts";
import { FakeTime } from "./support/fake_time.ts";
import { runInProcess } from "./support/in_process.ts";
import { runProgram } from "./support/program.ts";
import { REFUSED_URL } from "./support/refused_address.ts";
import {
  DIRECT_API_TOOLS,
  directApiPath,
  type DirectApiReader,
  needsTools,
  type ToolNeeds,
  virtualClock,
} from "./support/tools.ts";

const SCRIPT = fileURLToPath(new URL("../scripts/direct-api.sh", import.meta.url));

// The scenarios direct-api.sh does not play: features it leaves to service-ci, as
// docs/recipes/direct-api.md says. It follows no redirect (it plays the refused ones: it refuses
// them all), reads Retry-After in seconds only (after a date it backs off on its own), and reads
// a 404 as a refusal, also right after the trigger.
const LEFT_TO_SERVICE_CI: readonly RegExp[] = [
  /^a (POST|GET) answered 30\d to the same origin and path is followed$/,
  /^(five|a sixth) redirects? in a row (are followed|is refused)$/,
  /^Retry-After as an (HTTP|RFC 850) date/,
  /^(a read answered 404|eleven 404s) right after the trigger/,
];

// Processes in flight at once: enough to overlap their waits, few enough for a 2-core machine.
const CONCURRENCY = 6;

// The scenarios the real program plays as a process too, one per exit code: what the process
// adds is its entry point, its permissions and its streams, which these show as well as any.
const AS_PROCESS: readonly string[] = [
  "a fault whose message echoes the key",
  "a run link and a status that carry the key",
  "no key is a usage error; nothing is sent",
  "a refusal whose message echoes the key",
  "network errors until the deadline end with 4, not 3",
];

/** How one implementation runs a scenario, and the wall clock it reads meanwhile. */
interface Session extends Partial<AsyncDisposable> {
  readonly now: () => number;
  run(agent: string, args: readonly string[], env: Record<string, string>): Promise<CommandResult>;
}

/** One implementation of the gate, and the scenarios it plays. */
interface Implementation {
  readonly name: string;
  readonly scenarios: readonly Scenario[];
  /** The programs it needs on PATH, if any. */
  readonly needs?: ToolNeeds;
  session(scenario: Scenario): Promise<Session>;
}

const IMPLEMENTATIONS: Implementation[] = [
  {
    name: "service-ci",
    scenarios: SCENARIOS,
    session: () => {
      const time = new FakeTime();
      return Promise.resolve({
        now: time.now,
        run: (agent, args, env) => runInProcess(["--agent", agent, ...args], { env, time }),
      });
    },
  },
  {
    name: "service-ci as a process",
    scenarios: AS_PROCESS.map((name) => {
      const found = SCENARIOS.filter((scenario) => scenario.name === name);
      assert.equal(found.length, 1, `one scenario is named "${name}"`);
      return found[0]!;
    }),
    session: () =>
      Promise.resolve({
        now: Date.now,
        run: (agent, args, env) => runProgram(["--agent", agent, ...args], { env }),
      }),
  },
];
IMPLEMENTATIONS.push({
  name: "direct-api.sh",
  scenarios: SCENARIOS.filter((scenario) =>
    !LEFT_TO_SERVICE_CI.some((pattern) => pattern.test(scenario.name))
  ),
  needs: needsTools({ tools: ["sh", ...DIRECT_API_TOOLS], notOn: ["windows"] }),
  session: () => _scriptSession("own"),
});

/** direct-api.sh with only its tools and `reader` on PATH, on a clock of its own. */
async function _scriptSession(reader: DirectApiReader): Promise<Session> {
  const path = await directApiPath(reader);
  const clock = await virtualClock();
  return {
    now: clock.now,
    run: async (agent, args, env) => {
      const cwd = await Deno.makeTempDir({ prefix: "contract-cwd-" });
      try {
        return await runCommand(join(path, "sh"), [SCRIPT, "--agent", agent, ...args], {
          cwd,
          env: { PATH: `${clock.bin}:${path}`, ...env },
          clearEnv: true,
        });
      } finally {
        await Deno.remove(cwd, { recursive: true });
      }
    },
    [Symbol.asyncDispose]: () => clock[Symbol.asyncDispose](),
  };
}

async function _play(scenario: Scenario, implementation: Implementation): Promise<void> {
  const session = await implementation.session(scenario);
  try {
    await _playIn(session, scenario, implementation);
  } finally {
    await session[Symbol.asyncDispose]?.();
  }
}

async function _playIn(
  session: Session,
  scenario: Scenario,
  implementation: Implementation,
): Promise<void> {
  await using service = await startFakeService({
    agents: defaultAgents(scenario.runMs ?? 60_000),
    queuedMs: 0,
    now: session.now,
  });
  await using elsewhere = await startFakeService({ agents: defaultAgents(0), now: session.now });
  scenario.setup?.({ service, elsewhere, now: session.now });
  const env = {
    SERVICE_API_KEY: KEYS.ci,
    SERVICE_BASE_URL: scenario.unreachable ? REFUSED_URL : service.url,
    ...scenario.env,
  };
  const result = await session.run(scenario.agent ?? AGENTS.passing, scenario.args ?? [], env);
  const shown = `${implementation.name} printed:\n${result.stderr}${result.stdout}`;
  assert.equal(result.code, scenario.exitCode, shown);
  for (const text of [result.stdout, result.stderr]) {
    assert.ok(!text.includes(KEYS.ci), `the key was printed; ${shown}`);
  }
  assert.equal(elsewhere.requests.length, 0, "requests to another origin");
  try {
    scenario.check?.({ service, elsewhere, now: session.now, ...result });
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

Deno.test("what direct-api.sh leaves to service-ci names scenarios of the table", () => {
  for (const pattern of LEFT_TO_SERVICE_CI) {
    assert.ok(SCENARIOS.some((scenario) => pattern.test(scenario.name)), String(pattern));
  }
});

Deno.test("one scenario per exit code is played by the real program as a process", () => {
  const codes = IMPLEMENTATIONS[1]!.scenarios.map((scenario) => scenario.exitCode);
  assert.deepEqual([...new Set(codes)].sort(), [0, 1, 2, 3, 4]);
});

// The three legs run at once, each its scenarios a few at a time: the in-process leg is this
// process's work and the others are mostly their processes', so together they take about as
// long as the longest alone.
Deno.test({
  name: "every scenario of the contract table ends as the contract says in each implementation",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    await Promise.all(IMPLEMENTATIONS.map((implementation) =>
      t.step({
        name: `in ${implementation.name}${implementation.needs?.nameSuffix ?? ""}`,
        ignore: implementation.needs?.ignore ?? false,
        sanitizeOps: false,
        sanitizeResources: false,
        sanitizeExit: false,
        fn: async (leg) => {
          implementation.needs?.assertFound();
          const tasks = implementation.scenarios.map((scenario) => () =>
            leg.step({
              name: `${scenario.group}: ${scenario.name}`,
              fn: () => _play(scenario, implementation),
              sanitizeOps: false,
              sanitizeResources: false,
              sanitizeExit: false,
            })
          );
          await _pool(tasks, CONCURRENCY);
        },
      })
    ));
  },
});
