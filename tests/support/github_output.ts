/** Reads what a step wrote to its GITHUB_OUTPUT file, as the Actions runner reads it. */

import assert from "node:assert/strict";

/**
 * Reads a GITHUB_OUTPUT file as the Actions runner does: `name=value` lines and
 * `name<<DELIMITER` heredocs; a later value of a name replaces an earlier one. Any other line,
 * an empty one included, fails the test.
 *
 * @example
 * ```ts
 * const outputs = readGithubOutput("passed=true\nagents<<EOF\n[]\nEOF\n");
 * outputs.get("agents"); // "[]"
 * ```
 */
export function readGithubOutput(text: string): Map<string, string> {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const outputs = new Map<string, string>();
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc === null) {
      const plain = /^([^=]+)=(.*)$/.exec(line);
      assert.ok(plain, `invalid GITHUB_OUTPUT line: ${JSON.stringify(line)}`);
      outputs.set(plain[1]!, plain[2]!);
      continue;
    }
    const value: string[] = [];
    for (index++; lines[index] !== heredoc[2]; index++) {
      assert.ok(index < lines.length, `delimiter ${heredoc[2]} not found`);
      value.push(lines[index]!);
    }
    outputs.set(heredoc[1]!, value.join("\n"));
  }
  return outputs;
}
