/**
 * The program's real effects on the system, apart from the arguments, the environment and the
 * signals (which only `main.ts` touches) and the timers (`sleep.ts`): HTTP clients, report files
 * and CI tools.
 */

import type { ReportFile } from "./report/deliver.ts";

/**
 * The fetch to use for the service: the global one, or one that also trusts `caCerts` (PEM).
 *
 * @example
 * ```ts
 * const fetcher = makeFetch(undefined);
 * ```
 */
export function makeFetch(caCerts: string | undefined): typeof fetch {
  if (caCerts === undefined) return fetch;
  const client = Deno.createHttpClient({ caCerts: [caCerts] });
  return (input, init) => fetch(input, { ...init, client });
}

/**
 * The fetch for a CI's own HTTP channel: through `proxy` when given (Bitbucket's pipeline proxy).
 *
 * @example
 * ```ts
 * const fetcher = makeProxyFetch("http://localhost:29418");
 * ```
 */
export function makeProxyFetch(proxy: string | undefined): typeof fetch {
  if (proxy === undefined) return fetch;
  const client = Deno.createHttpClient({ proxy: { url: proxy } });
  return (input, init) => fetch(input, { ...init, client });
}

/**
 * Runs a CI's own command-line tool (`buildkite-agent`) found on PATH, with `stdin` as its
 * standard input; resolves with its exit code, or `undefined` when it could not be started (not
 * on PATH, not permitted).
 *
 * @example
 * ```ts
 * const code = await runCommand("buildkite-agent", ["meta-data", "set", "k"], "value");
 * ```
 */
export async function runCommand(
  program: string,
  args: readonly string[],
  stdin?: string,
): Promise<number | undefined> {
  try {
    const child = new Deno.Command(program, {
      args: [...args],
      stdin: stdin === undefined ? "null" : "piped",
      stdout: "null",
      stderr: "inherit",
    }).spawn();
    if (stdin !== undefined) {
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(stdin));
      await writer.close();
    }
    return (await child.status).code;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotCapable) {
      return undefined;
    }
    throw error;
  }
}

/**
 * Opens a report file before anything is rendered: created, and truncated unless `append`;
 * `rewind` puts back the length it had when opened.
 *
 * @example
 * ```ts
 * const file = await openReportFile("gate.xml", false);
 * await file.write("<testsuites/>\n");
 * file.close();
 * ```
 */
export async function openReportFile(path: string, append: boolean): Promise<ReportFile> {
  const file = await Deno.open(path, { write: true, create: true, append, truncate: !append });
  let start = 0;
  try {
    start = append ? (await file.stat()).size : 0;
  } catch {
    // Not a regular file (a pipe, /dev/full): there is no length to go back to.
  }
  const encoder = new TextEncoder();
  return {
    write: async (text) => {
      const bytes = encoder.encode(text);
      for (let written = 0; written < bytes.length;) {
        written += await file.write(bytes.subarray(written));
      }
    },
    rewind: async () => {
      await file.truncate(start);
      if (!append) await file.seek(0, Deno.SeekMode.Start);
    },
    close: () => {
      try {
        file.close();
      } catch {
        // Already closed.
      }
    },
  };
}
