/**
 * One in-process run of `run()` against fake forges on loopback: the service of
 * {@linkcode harness}, the forges real HTTP servers, and every wait on virtual time — the gate's,
 * the finishing budgets and each request's timer. A forge exchange is held
 * ({@linkcode FakeTime.heldFetch}), so it takes no virtual time; a fake forge that does not answer
 * says so with {@linkcode FakeTime.hang}, so its request times out on virtual time, without a
 * real wait.
 */

import { run } from "../../src/run.ts";
import { FORGE_COMMITS, FORGE_TARGET } from "./fake_forge.ts";
import { type Harness, harness, type HarnessOptions } from "./run_harness.ts";
import { makePolicyFetch } from "../../src/http/fetch.ts";

/** What {@linkcode runAgainstForge} takes besides the harness's options. */
export interface ForgeRunOptions extends HarnessOptions {
  /** The CI's event payload; default a pull request on the forge's head commit. */
  readonly event?: unknown;
}

/** What one run against the forges did. */
export interface ForgeRunResult {
  readonly code: number;
  readonly stderr: string;
  readonly harness: Harness;
}

/**
 * Runs `run()` once with the harness's effects, the CI's event payload at
 * `FORGE_COMMITS.eventPath`, the forges' requests sent for real and held, and a wall clock that
 * moves with the virtual one (a rate limit's pause ends on it).
 *
 * @example
 * ```ts
 * import { githubPullRequestEnv } from "./fake_forge.ts";
 * import { startFakeStatusForge } from "./fake_status.ts";
 * await using github = await startFakeStatusForge("github");
 * const { code } = await runAgainstForge({ env: githubPullRequestEnv(github.apiUrl) });
 * ```
 */
export async function runAgainstForge(options: ForgeRunOptions = {}): Promise<ForgeRunResult> {
  const h = harness(options);
  const event = JSON.stringify(
    options.event ?? {
      number: FORGE_TARGET.pullRequest,
      pull_request: {
        number: FORGE_TARGET.pullRequest,
        head: { sha: FORGE_COMMITS.head, ref: "feature" },
      },
    },
  );
  const code = await run({
    ...h.effects,
    clock: { ...h.effects.clock, now: () => Date.UTC(2026, 10, 23) + h.time.monotonic() },
    files: {
      ...h.effects.files,
      readTextFile: (path) =>
        path === FORGE_COMMITS.eventPath
          ? Promise.resolve(event)
          : Promise.reject(new Deno.errors.NotFound("no such file")),
    },
    http: {
      // The service's fetch is the one made with its certificates (run.ts); the forges have none.
      makeFetch: (setup) =>
        "caCerts" in setup
          ? h.effects.http.makeFetch(setup)
          : h.time.heldFetch(makePolicyFetch(setup)),
      timeout: h.time.timeout,
    },
  });
  return { code, stderr: h.stderr.join(""), harness: h };
}
