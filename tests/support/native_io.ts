/**
 * Native writers' effects for tests: a recording `NativeIo` whose effects default to the real
 * ones (run a program, fetch through a proxy), and a fake HTTP proxy on loopback.
 */

import type { NativeIo } from "../../src/report/native_io.ts";

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
 * fetches for real unless `overrides` says otherwise.
 *
 * @example
 * ```ts
 * const { io, warnings } = recordingIo({ env: { BITBUCKET_WORKSPACE: "acme" } });
 * ```
 */
export function recordingIo(
  overrides: Partial<Omit<NativeIo, "env">> & { env?: Record<string, string> } = {},
): IoRecord {
  const commands: string[] = [];
  const warnings: string[] = [];
  const files = new Map<string, string>();
  const { env = {}, ...effects } = overrides;
  const io: NativeIo = {
    command: (line) => commands.push(line),
    warn: (line) => warnings.push(line),
    writeTextFile: (path, text, append) => {
      files.set(path, (append ? files.get(path) ?? "" : "") + text);
      return Promise.resolve();
    },
    runCommand: realRunCommand,
    makeFetch: proxyFetch,
    env: (name) => env[name],
    ...effects,
  };
  return { io, commands, warnings, files };
}

/**
 * `NativeIo.runCommand` as the program does it: spawns `program` (found on PATH) with `stdin`
 * piped in, its output ignored; `undefined` when it cannot be started.
 *
 * @example
 * ```ts
 * const code = await realRunCommand("true", []); // 0
 * ```
 */
export async function realRunCommand(
  program: string,
  args: readonly string[],
  stdin?: string,
): Promise<number | undefined> {
  try {
    const child = new Deno.Command(program, {
      args: [...args],
      stdin: "piped",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin ?? ""));
    await writer.close();
    return (await child.status).code;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotCapable) {
      return undefined;
    }
    throw error;
  }
}

/**
 * `NativeIo.makeFetch` as the program does it: a fetch whose requests go through `proxy`.
 *
 * @example
 * ```ts
 * const fetchVia = proxyFetch("http://127.0.0.1:29418");
 * ```
 */
export function proxyFetch(proxy: string | undefined): typeof fetch {
  if (proxy === undefined) return fetch;
  const client = Deno.createHttpClient({ proxy: { url: proxy } });
  return (input, init) => fetch(input, { ...init, client });
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
