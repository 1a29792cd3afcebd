/** The tasks of deno.json, as arguments to `deno`, so tests run exactly what `deno task` runs. */

import assert from "node:assert/strict";

const TASKS = JSON.parse(
  await Deno.readTextFile(new URL("../../deno.json", import.meta.url)),
).tasks as Record<string, { command: string }>;

/**
 * The arguments after `deno` of the task `name`'s command.
 *
 * @example
 * ```ts
 * const args = taskArgs("demo"); // ["run", "--allow-net", …, "scripts/demo.ts"]
 * ```
 */
export function taskArgs(name: string): string[] {
  const command = TASKS[name]?.command;
  assert.ok(command !== undefined, `deno.json has no "${name}" task`);
  // Splitting on spaces is exact only for one command without quotes or shell syntax.
  assert.doesNotMatch(command, /["'`$|&;<>()]/, `the ${name} task is more than one command`);
  const [deno, ...args] = command.split(" ");
  assert.equal(deno, "deno", `the ${name} task does not run deno`);
  return args;
}
