/**
 * Tests what the release publishes to JSR: `deno publish --dry-run` passes (no slow types, a
 * licence, the exports resolve) and the package holds the runner only — src/, deno.json,
 * LICENSE and README.md — never tests, fixtures, scripts or docs. The dry run needs no network.
 */

import assert from "node:assert/strict";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { runCommand } from "../support/command.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function _sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of Deno.readDirSync(`${ROOT}${dir}`)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) files.push(..._sourceFiles(path));
    else files.push(path);
  }
  return files;
}

Deno.test("deno.json publishes only the runner: src/, deno.json, LICENSE and README.md", () => {
  const config = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`)) as {
    publish?: { include?: string[]; exclude?: string[] };
  };
  assert.deepEqual(config.publish?.include, ["src/", "deno.json", "LICENSE", "README.md"]);
});

Deno.test("deno publish --dry-run passes and would publish exactly the runner's files", async () => {
  // --no-check: the test task type-checks src/ once (deno check --doc); slow types, the licence
  // and the exports are still checked here.
  const result = await runCommand(
    Deno.execPath(),
    ["publish", "--dry-run", "--allow-dirty", "--no-check"],
    { cwd: ROOT, env: { NO_COLOR: "1" } },
  );
  assert.equal(
    result.code,
    0,
    `${result.stdout}${result.stderr}\n(a licence needs LICENSE and deno.json's "license")`,
  );
  const published = [...`${result.stdout}${result.stderr}`.matchAll(/^\s+(file:\/\/\S+)/gm)]
    .map((match) => relative(ROOT, fileURLToPath(match[1]!)).replaceAll("\\", "/"))
    .toSorted();
  const expected = [..._sourceFiles("src"), "deno.json", "LICENSE", "README.md"].toSorted();
  assert.deepEqual(published, expected);
});
