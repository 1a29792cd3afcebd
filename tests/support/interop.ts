/**
 * The interop tier's real parts (tests/interop/): Debian's Python with its web frameworks, and
 * evaluation services written on them (tests/interop/services/eval_service.py). A part that is
 * missing skips its test with one line outside CI and fails it in CI, as tests/support/tools.ts
 * does for programs.
 */

import { AGENTS, KEYS } from "./fake_service.ts";
import { needsPart } from "./tools.ts";
import { spawnServer } from "./spawned.ts";

/**
 * Debian's own Python, where `apt-get install python3-fastapi python3-uvicorn python3-flask`
 * puts the frameworks (a version manager's `python3` on PATH does not see them).
 */
export const DEBIAN_PYTHON = "/usr/bin/python3";

/** The frameworks the services run on, as eval_service.py names them. */
export type Framework = "http.server" | "fastapi" | "flask";

const _MODULES: Readonly<Record<Framework, readonly string[]>> = {
  "http.server": ["http.server"],
  fastapi: ["fastapi", "uvicorn"],
  flask: ["flask", "werkzeug"],
};
const _PACKAGES: Readonly<Record<Framework, string>> = {
  "http.server": "python3",
  fastapi: "python3-fastapi python3-uvicorn",
  flask: "python3-flask",
};

function _canImport(modules: readonly string[]): boolean {
  try {
    const imports = modules.map((name) => `import ${name}`).join("; ");
    return new Deno.Command(DEBIAN_PYTHON, {
      args: ["-c", imports],
      stdout: "null",
      stderr: "null",
    })
      .outputSync().success;
  } catch {
    return false;
  }
}

/**
 * Registers a test of a service on `framework`: ignored with one line in its name where Debian's
 * Python cannot import the framework and CI is not set; failing, naming the packages, under CI.
 *
 * @example
 * ```ts
 * frameworkTest("a gate on FastAPI passes", "fastapi", async () => {
 *   await using service = await startEvalService("fastapi");
 * });
 * ```
 */
export function frameworkTest(
  name: string,
  framework: Framework,
  fn: () => Promise<void>,
): void {
  const absent = _canImport(_MODULES[framework])
    ? null
    : `${DEBIAN_PYTHON} cannot import ${framework}`;
  const needs = needsPart(absent, `apt-get install ${_PACKAGES[framework]}`);
  Deno.test({
    name: `${name}${needs.nameSuffix}`,
    ignore: needs.ignore,
    fn: async () => {
      needs.assertFound();
      await fn();
    },
  });
}

/** One request a Python service received, as its own framework handed it over. */
export interface ServiceRequest {
  readonly method: string;
  /** The request target as the request line carried it (`/api/v1/…` in origin form). */
  readonly target: string;
  /** Whether the right `X-API-Key` came with it. */
  readonly key: boolean;
}

/** An evaluation service on a Python framework, on 127.0.0.1. Use with `await using`. */
export interface EvalService extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Every request it received so far. */
  requests(): readonly ServiceRequest[];
}

/**
 * Starts eval_service.py on `framework`: {@linkcode KEYS}`.ci` is its key, `AGENTS.passing`'s
 * gate passes and `AGENTS.failing`'s fails.
 *
 * @throws {Error} With what the process printed, if it did not say its port within 20 s.
 */
export async function startEvalService(framework: Framework): Promise<EvalService> {
  const server = await spawnServer({
    program: DEBIAN_PYTHON,
    args: [
      new URL("../interop/services/eval_service.py", import.meta.url).pathname,
      framework,
      KEYS.ci,
      AGENTS.passing,
      AGENTS.failing,
    ],
    port: /^PORT (\d+)$/m,
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests: () =>
      server.lines().filter((line) => line.startsWith("{")).map((line) =>
        JSON.parse(line) as ServiceRequest
      ),
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}
