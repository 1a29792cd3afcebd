/** Checks YAML as the repository's YAML must be: no parse error or warning, and yamllint-clean. */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { parseDocument } from "npm:yaml@2.6.1";
import { runCommand } from "./command.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Parses `text` as YAML, failing the test on any error or warning (`where`, the message, says
 * which text it was), and returns it as plain values.
 *
 * @example
 * ```ts
 * const text = await Deno.readTextFile(".github/workflows/ci.yml");
 * const ci = parseYaml<{ jobs: Record<string, unknown> }>(text, ".github/workflows/ci.yml");
 * ```
 */
export function parseYaml<T>(text: string, where: string): T {
  const document = parseDocument(text, { prettyErrors: true });
  assert.deepEqual(document.errors.map(String), [], where);
  assert.deepEqual(document.warnings.map(String), [], where);
  return document.toJS() as T;
}

/**
 * Runs `yamllint --strict` with the repository's .yamllint.yml on `paths` (relative to the
 * repository, or absolute) and fails the test, with yamllint's output, where it finds anything.
 *
 * @example
 * ```ts
 * await assertYamllintPasses([".github"]);
 * ```
 */
export async function assertYamllintPasses(paths: readonly string[]): Promise<void> {
  const { code, stdout, stderr } = await runCommand("yamllint", [
    "--strict",
    "--config-file",
    ".yamllint.yml",
    ...paths,
  ], { cwd: ROOT });
  assert.equal(code, 0, stdout + stderr);
}
