/**
 * Native writers' effects for tests: a recording `NativeIo` whose effects default to the real
 * ones (run a program, fetch through a proxy), and a fake HTTP proxy on loopback.
 */

import { ForgeClients } from "../../src/forge/clients.ts";
import { systemClock } from "../../src/platform/clock.ts";
import { runCommand as realRunCommand } from "../../src/platform/system.ts";
import { type NativeIo } from "../../src/outputs/ci/native_io.ts";
import type { FakeTime } from "./fake_time.ts";
import type { Clock } from "../../src/effects.ts";
import { OPTIONS } from "../../src/config/options.ts";
import type { ForgeConfig } from "../../src/forge/forge.ts";
import { NATIVE_TIME_BOUNDS } from "../../src/platform/bounds.ts";
import { boundedFetch, makePolicyFetch } from "../../src/http/fetch.ts";

/** The forge's part of `Config` and the CI's variables, as `loadConfig` resolves them. */
export function forgeConfig(env: Readonly<Record<string, string | undefined>>): ForgeConfig {
  const { githubToken, gitlabToken, githubApiUrl, gitlabApiUrl, bitbucketProxy } = OPTIONS;
  const value = (
    option: { variable: string; parse: (text: string, name: string) => string | undefined },
  ) => env[option.variable] ? option.parse(env[option.variable]!, option.variable) : undefined;
  return {
    githubToken: value(githubToken),
    gitlabToken: value(gitlabToken),
    githubApiUrl: value(githubApiUrl),
    gitlabApiUrl: value(gitlabApiUrl),
    bitbucketProxy: value(bitbucketProxy),
    ci: env,
  };
}

/** What a recording `NativeIo` saw. */
export interface IoRecord {
  readonly io: NativeIo;
  /** Lines given to `io.command`. */
  readonly commands: string[];
  /** Lines given to `io.warn`. */
  readonly warnings: string[];
  /** Files written, by path, with their final text. */
  readonly files: Map<string, string>;
}

/**
 * A `NativeIo` that records commands, warnings and files (in memory), and runs programs and
 * fetches for real (each bounded by `NATIVE_TIME_BOUNDS.eachMs`) unless `overrides` says
 * otherwise.
 *
 * @example
 * ```ts
 * const { io, warnings } = recordingIo({ env: { BITBUCKET_WORKSPACE: "acme" } });
 * ```
 */
export function recordingIo(
  overrides: Partial<Omit<NativeIo, "config">> & {
    env?: Record<string, string>;
    /** The fetch the Bitbucket client sends through, for a proxy (default: the real one). */
    makeFetch?: (proxy: string) => typeof fetch;
    /** The forge clients' clock: their `Retry-After` waits (default: the real one). */
    forgeClock?: Pick<Clock, "now" | "sleep">;
  } = {},
): IoRecord {
  const commands: string[] = [];
  const warnings: string[] = [];
  const files = new Map<string, string>();
  const {
    env = {},
    makeFetch = (proxy) => proxyFetch(proxy, () => NATIVE_TIME_BOUNDS.eachMs),
    forgeClock = systemClock,
    ...effects
  } = overrides;
  const io: NativeIo = {
    command: (line) => commands.push(line),
    warn: (line) => warnings.push(line),
    writeTextFile: (path, text, append) => {
      files.set(path, (append ? files.get(path) ?? "" : "") + text);
      return Promise.resolve();
    },
    runCommand: (program, args, stdin) =>
      realRunCommand(program, args, { stdin, timeoutMs: NATIVE_TIME_BOUNDS.eachMs }, systemClock),
    forgeClients: () =>
      Promise.resolve(
        new ForgeClients({
          userAgent: "service-ci/test",
          clock: forgeClock,
          http: {
            makeFetch: (setup) =>
              setup.proxy === undefined
                ? () => Promise.reject(new Error("no forge API in this test"))
                : makeFetch(setup.proxy),
            timeout: systemClock.timeout,
          },
        }),
      ),
    requestBound: () => NATIVE_TIME_BOUNDS.eachMs,
    config: forgeConfig(env),
    ...effects,
  };
  return { io, commands, warnings, files };
}

/**
 * `NativeIo.runCommand` and the Bitbucket client's fetch as the program does them: the real ones, from
 * `src/platform/system.ts`.
 */
export { realRunCommand };

/**
 * The fetch through `proxy`, each request bounded by `timeoutMs()` on `timer` (default the real
 * clock's; a test of the bound passes a `FakeTime`'s), as the run's Bitbucket client sends.
 *
 * @example
 * ```ts
 * const fetcher = proxyFetch("http://localhost:29418", () => 10_000);
 * ```
 */
export function proxyFetch(
  proxy: string,
  timeoutMs: () => number,
  timer: (ms: number) => AbortSignal = systemClock.timeout,
): typeof fetch {
  return boundedFetch(makePolicyFetch({ proxy }), timeoutMs, timer);
}

/** A request the fake proxy received. */
export interface ProxiedRequest {
  readonly method: string;
  /** The absolute URL of the request line, as a forward proxy receives it. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** A fake forward proxy on loopback: it records each request and answers it itself. */
export interface FakeProxy extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly requests: readonly ProxiedRequest[];
}

/**
 * Starts a fake HTTP proxy on 127.0.0.1 that answers every request with `answer` (default:
 * 200 with `{}`), as the Bitbucket Pipelines proxy would after forwarding it.
 *
 * @example
 * ```ts
 * await using proxy = await startFakeProxy();
 * proxy.requests.length; // 0
 * ```
 */
export function startFakeProxy(
  answer: (request: ProxiedRequest) => Response = () => Response.json({}),
): Promise<FakeProxy> {
  const requests: ProxiedRequest[] = [];
  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) =>
        resolve({
          url: `http://127.0.0.1:${port}`,
          requests,
          [Symbol.asyncDispose]: () => server.shutdown(),
        }),
    }, async (request) => {
      const recorded: ProxiedRequest = {
        method: request.method,
        url: request.url,
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
      };
      requests.push(recorded);
      return answer(recorded);
    });
  });
}

/** A proxy on loopback that accepts connections and never answers. */
export interface SilentProxy extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** How many connections it accepted. */
  readonly connections: () => number;
  /** Resolves once it has accepted a connection. */
  readonly connected: Promise<void>;
}

/**
 * Starts a TCP listener on 127.0.0.1 that takes every connection and never sends a byte: a
 * Bitbucket pipeline proxy that hangs. With `time`, each connection hangs on it
 * ({@linkcode FakeTime.hang}) until the client closes it, so a run on that virtual time gives up
 * on its own timer without a real wait.
 *
 * @example
 * ```ts
 * await using proxy = startSilentProxy();
 * ```
 */
export function startSilentProxy(time?: FakeTime): SilentProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open: Deno.Conn[] = [];
  let accepted = 0;
  const first = Promise.withResolvers<void>();
  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        accepted++;
        first.resolve();
        open.push(conn);
        if (time !== undefined) void _hangOn(time, conn);
      }
    } catch {
      // Closed.
    }
  })();
  return {
    url: `http://127.0.0.1:${listener.addr.port}`,
    connections: () => accepted,
    connected: first.promise,
    [Symbol.asyncDispose]: async () => {
      listener.close();
      await accepting;
      for (const conn of open) {
        try {
          conn.close();
        } catch {
          // Closed by the other side.
        }
      }
    },
  };
}

// Reads the request on `conn` (a proxy's request line names its absolute URL) and marks it as
// hanging on `time` until the client closes the connection, reading and dropping what it sends.
async function _hangOn(time: FakeTime, conn: Deno.Conn): Promise<void> {
  const buffer = new Uint8Array(4096);
  let head = "";
  let marked = false;
  const { promise: closed, resolve } = Promise.withResolvers<void>();
  try {
    for (let read = await conn.read(buffer); read !== null; read = await conn.read(buffer)) {
      if (marked) continue;
      head += new TextDecoder().decode(buffer.subarray(0, read));
      const line = /^([A-Z]+) (\S+) HTTP\/1\.[01]\r\n/.exec(head);
      if (line === null) continue;
      marked = true;
      void time.hang(closed, { method: line[1]!, url: line[2]! });
    }
  } catch {
    // Closed here, or reset.
  } finally {
    resolve();
  }
}

/** One call a stand-in `buildkite-agent` recorded. */
export interface AgentCall {
  readonly args: string[];
  readonly stdin: string;
}

// Records each call's arguments (one per line) and standard input in numbered files beside
// itself, and exits with the code in `exit` there, if any.
const _STAND_IN_AGENT = `#!/bin/sh
dir=$(dirname "$0")
n=$(cat "$dir/count" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$dir/count"
for arg in "$@"; do printf '%s\\n' "$arg"; done > "$dir/args-$n"
cat > "$dir/stdin-$n"
exit "$(cat "$dir/exit" 2>/dev/null || echo 0)"
`;

/**
 * Writes a stand-in `buildkite-agent` into `dir` (put `dir` first on PATH) that records its calls
 * and exits with `code`.
 *
 * @example
 * ```ts
 * const dir = await Deno.makeTempDir();
 * await writeStandInAgent(dir, 1);
 * ```
 */
export async function writeStandInAgent(dir: string, code = 0): Promise<void> {
  await Deno.writeTextFile(`${dir}/buildkite-agent`, _STAND_IN_AGENT, { mode: 0o755 });
  if (code !== 0) await Deno.writeTextFile(`${dir}/exit`, String(code));
}

/** How a {@linkcode writeUnrulyAgent} misbehaves. */
export type Unruly =
  /** It exits 0 at once, reading none of its standard input. */
  | "exits-unread"
  /** It never ends by itself (it sleeps, reading nothing), until a signal ends it. */
  | "hangs";

/**
 * Writes a `buildkite-agent` into `dir` (put `dir` first on PATH) that misbehaves as `how` says,
 * and counts its calls in `dir/calls`, one line each.
 *
 * @example
 * ```ts
 * const dir = await Deno.makeTempDir();
 * await writeUnrulyAgent(dir, "hangs");
 * ```
 */
export async function writeUnrulyAgent(dir: string, how: Unruly): Promise<void> {
  const body = how === "hangs" ? "exec sleep 600" : "exit 0";
  await Deno.writeTextFile(
    `${dir}/buildkite-agent`,
    `#!/bin/sh\necho "$1" >> "$(dirname "$0")/calls"\n${body}\n`,
    { mode: 0o755 },
  );
}

/**
 * The calls of the agent {@linkcode writeUnrulyAgent} wrote to `dir`: the first argument of each.
 *
 * @example
 * ```ts
 * const calls = await unrulyCalls("/tmp/buildkite-agent"); // ["annotate", "meta-data", …]
 * ```
 */
export async function unrulyCalls(dir: string): Promise<string[]> {
  const text = await Deno.readTextFile(`${dir}/calls`).catch(() => "");
  return text.split("\n").slice(0, -1);
}

/**
 * The calls the stand-in in `dir` recorded, in order.
 *
 * @example
 * ```ts
 * const calls = await agentCalls("/tmp/buildkite-agent");
 * ```
 */
export async function agentCalls(dir: string): Promise<AgentCall[]> {
  const count = Number(await Deno.readTextFile(`${dir}/count`).catch(() => "0"));
  const calls: AgentCall[] = [];
  for (let n = 1; n <= count; n++) {
    calls.push({
      args: (await Deno.readTextFile(`${dir}/args-${n}`)).split("\n").slice(0, -1),
      stdin: await Deno.readTextFile(`${dir}/stdin-${n}`),
    });
  }
  return calls;
}

/** What a native writer did through {@linkcode fakeNativeIo}. */
export interface NativeIoRecord {
  readonly commands: string[];
  readonly warnings: string[];
  readonly files: Map<string, string>;
}

/** Options for {@linkcode fakeNativeIo}. */
export interface FakeNativeIoOptions {
  /** The environment the writer sees. */
  readonly env?: Readonly<Record<string, string>>;
  /** Makes every file write fail with this message. */
  readonly failWrites?: string;
  /** Makes every command print fail with this message. */
  readonly failCommands?: string;
}

/**
 * A {@linkcode recordingIo} with no program on PATH and no network, whose writes or prints can
 * be made to fail.
 *
 * @example
 * ```ts
 * const { io, record } = fakeNativeIo({ env: { TF_BUILD: "True" } });
 * io.command("##[group]x");
 * record.commands; // ["##[group]x"]
 * ```
 */
export function fakeNativeIo(
  options: FakeNativeIoOptions = {},
): { io: NativeIo; record: NativeIoRecord } {
  const recorded = recordingIo({
    env: { ...options.env },
    runCommand: () => Promise.resolve({ kind: "not-run", reason: "not on PATH" }),
    makeFetch: () => () => Promise.reject(new Error("no network in this test")),
  });
  const io: NativeIo = {
    ...recorded.io,
    command: (line) => {
      if (options.failCommands !== undefined) throw new Error(options.failCommands);
      recorded.io.command(line);
    },
    writeTextFile: (path, text, append) =>
      options.failWrites !== undefined
        ? Promise.reject(new Error(options.failWrites))
        : recorded.io.writeTextFile(path, text, append),
  };
  const { commands, warnings, files } = recorded;
  return { io, record: { commands, warnings, files } };
}
