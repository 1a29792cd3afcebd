/** The exit codes' one table (issue 42): `--help` and docs/contract.md say each code it has. */

import assert from "node:assert/strict";
import { EXIT_MEANINGS, ExitCode } from "../../src/config/exit_codes.ts";
import { helpText } from "../../src/config/help.ts";

Deno.test("every exit code has one meaning, and --help lists each code with it, in order", () => {
  const codes = Object.values(ExitCode);
  assert.deepEqual(Object.keys(EXIT_MEANINGS).map(Number), codes);
  const help = helpText("https://service.example");
  const block = help.split("Exit codes:\n")[1]!.split("\n\n")[0]!.split("\n");
  assert.deepEqual(
    block.map((line) => line.trim().split(/\s{2,}/)),
    codes.map((code) => [String(code), EXIT_MEANINGS[code]!]),
  );
});

Deno.test("docs/contract.md's exit-code table has the program's codes, no more and no fewer", async () => {
  const doc = await Deno.readTextFile(new URL("../../docs/contract.md", import.meta.url));
  const section = doc.split("\n## §5 Exit codes\n")[1]!.split("\n## ")[0]!;
  const table = [...section.matchAll(/^\| ([\d, ]+?) +\| /gm)].flatMap((match) =>
    match[1]!.split(",").map((code) => Number(code.trim()))
  );
  assert.deepEqual(table, Object.values(ExitCode));
});
