/** Runs shellcheck on POSIX sh scripts, failing the test on anything it finds. */

import assert from "node:assert/strict";
import { runCommand } from "./command.ts";

/**
 * Runs `shellcheck --shell=sh --severity=style` on `files` and fails the test, with shellcheck's
 * output, where it finds anything.
 *
 * @example
 * ```ts
 * await assertShellcheckPasses(["scripts/install.sh"]);
 * ```
 */
export async function assertShellcheckPasses(files: readonly string[]): Promise<void> {
  const { code, stdout, stderr } = await runCommand("shellcheck", [
    "--shell=sh",
    "--severity=style",
    ...files,
  ]);
  assert.equal(code, 0, stdout + stderr);
}
