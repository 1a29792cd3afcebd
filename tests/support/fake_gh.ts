/**
 * A stand-in for the GitHub CLI (`gh`) on PATH, for the tests of install.sh and the action:
 * it records each command line and the GH_TOKEN it was given and, for
 * `gh attestation verify <file>`, the SHA-256 of the file, and exits with the code the test
 * chose.
 */

import { join } from "node:path";

/** A {@linkcode fakeGh} installed in a directory. */
export interface FakeGh {
  /** The directory holding `gh`, to put first on PATH. */
  readonly bin: string;
  /** The command lines `gh` received, one per call, arguments separated by spaces. */
  calls(): Promise<string[]>;
  /** The SHA-256 of each file `gh attestation verify` was given, in order. */
  verified(): Promise<string[]>;
  /** The GH_TOKEN of each call (empty when none was set), in order. */
  tokens(): Promise<string[]>;
}

/** Options of {@linkcode fakeGh}. */
export interface FakeGhOptions {
  /** The exit code of every call; default 0 (the attestation is valid). */
  readonly exitCode?: number;
}

/**
 * Writes an executable `gh` into `<dir>/gh-bin` and returns where it records its calls.
 *
 * @example
 * ```ts
 * const gh = await fakeGh(await Deno.makeTempDir(), { exitCode: 1 });
 * const env = { PATH: `${gh.bin}:${Deno.env.get("PATH")}` };
 * ```
 */
export async function fakeGh(dir: string, options: FakeGhOptions = {}): Promise<FakeGh> {
  const bin = join(dir, "gh-bin");
  const calls = join(dir, "gh-calls");
  const verified = join(dir, "gh-verified");
  const tokens = join(dir, "gh-tokens");
  await Deno.mkdir(bin, { recursive: true });
  await Deno.writeTextFile(calls, "");
  await Deno.writeTextFile(verified, "");
  await Deno.writeTextFile(tokens, "");
  // The paths are baked in: install.sh and the action clear or rebuild the environment.
  await Deno.writeTextFile(
    join(bin, "gh"),
    `#!/bin/sh
printf '%s\\n' "gh $*" >> '${calls}'
printf '%s\\n' "token:\${GH_TOKEN:-}" >> '${tokens}'
if [ "$1 $2" = "attestation verify" ]; then
  if command -v sha256sum >/dev/null 2>&1; then sum=$(sha256sum "$3"); else sum=$(shasum -a 256 "$3"); fi
  printf '%s\\n' "\${sum%% *}" >> '${verified}'
  [ ${options.exitCode ?? 0} -eq 0 ] || echo "gh: no attestations found for the artifact" >&2
fi
exit ${options.exitCode ?? 0}
`,
    { mode: 0o755 },
  );
  const lines = async (path: string) =>
    (await Deno.readTextFile(path)).split("\n").filter((line) => line !== "");
  return {
    bin,
    calls: () => lines(calls),
    verified: () => lines(verified),
    tokens: async () => (await lines(tokens)).map((line) => line.slice("token:".length)),
  };
}
