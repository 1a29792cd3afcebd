/**
 * A mirror of this checkout's `src/` and `deno.json`, served on 127.0.0.1 by Python's own HTTP
 * server with the command docs/install.md gives (or another `python3` command line).
 */

import { join } from "node:path";
import { ROOT } from "./docs.ts";
import { spawnServer } from "./spawned.ts";

/** The version of deno.json: the mirror serves it under `v<version>/`, as the docs lay it out. */
export const VERSION: string = (JSON.parse(
  await Deno.readTextFile(join(ROOT, "deno.json")),
) as { version: string }).version;

/**
 * The arguments after `python3` of the mirror command in docs/install.md, with its port
 * replaced by 0 (the system picks one). The command must bind 127.0.0.1.
 *
 * @example
 * ```ts
 * const args = documentedMirrorArgs(); // ["-c", "import mimetypes, runpy; …", "--bind", "127.0.0.1", "0"]
 * ```
 */
export function documentedMirrorArgs(): string[] {
  const text = Deno.readTextFileSync(join(ROOT, "docs", "install.md"));
  const match = /^python3 -c '([^']+)' --bind 127\.0\.0\.1 (\d+)$/m.exec(text);
  if (match === null) {
    throw new Error("docs/install.md has no line python3 -c '…' --bind 127.0.0.1 <port>");
  }
  return ["-c", match[1]!, "--bind", "127.0.0.1", "0"];
}

/** A running mirror. */
export interface PythonMirror extends AsyncDisposable {
  /** The URL of the served `src/main.ts`. */
  readonly main: string;
  /** The address the server listens on, `http://127.0.0.1:<port>`. */
  readonly url: string;
}

/**
 * Copies `src/` and `deno.json` into a temporary `v<version>/` and serves the copy with
 * `python3 <args>` (Python's `http.server` arguments, the port 0), on 127.0.0.1 only.
 *
 * @example
 * ```ts
 * await using mirror = await startPythonMirror(documentedMirrorArgs());
 * console.log(mirror.main); // http://127.0.0.1:…/v1.1.0/src/main.ts
 * ```
 */
export async function startPythonMirror(args: readonly string[]): Promise<PythonMirror> {
  if (!args.includes("127.0.0.1")) throw new TypeError("a test mirror binds 127.0.0.1 only");
  const dir = await Deno.makeTempDir({ prefix: "service-ci-python-mirror-" });
  const copy = join(dir, `v${VERSION}`);
  await _copyTree(join(ROOT, "src"), join(copy, "src"));
  await Deno.copyFile(join(ROOT, "deno.json"), join(copy, "deno.json"));
  const server = await spawnServer({
    program: await _python(),
    args,
    cwd: dir,
    // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
    port: /Serving HTTP on 127\.0\.0\.1 port (\d+)/,
    cleanUp: () => Deno.remove(dir, { recursive: true }),
  });
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    main: `${url}/v${VERSION}/src/main.ts`,
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}

/**
 * The executable `python3` on PATH runs, asked once: a version manager's shim (pyenv) costs a
 * shell and its own start-up, about 0.5 s of CPU, on every call.
 */
function _python(): Promise<string> {
  _executable ??= (async () => {
    const output = await new Deno.Command("python3", {
      args: ["-c", "import sys; print(sys.executable)"],
      stdout: "piped",
      stderr: "null",
    }).output();
    const path = new TextDecoder().decode(output.stdout).trim();
    return output.success && path !== "" ? path : "python3";
  })();
  return _executable;
}
let _executable: Promise<string> | undefined;

async function _copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) await _copyTree(join(from, entry.name), join(to, entry.name));
    else if (entry.isFile) await Deno.copyFile(join(from, entry.name), join(to, entry.name));
  }
}
