/**
 * Every list in the docs that restates a source is checked against it: the inputs tables against
 * action.yml's inputs, the flags and variables against the option table (src/config/options.ts), the
 * tasks against deno.json, direct-api.sh's options against its header, and every run from a URL
 * against the rule that it names the service's address. (docs/options.md's table is checked row
 * by row in tests/config/options_test.ts.)
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { CONFIG_ENV_VARIABLES, OPTION_NAMES } from "../../src/config/options.ts";
import { ROOT, userDocs } from "../support/docs.ts";
import { parseYaml } from "../support/yaml.ts";

const read = (path: string) => Deno.readTextFileSync(join(ROOT, path));
const ACTION = parseYaml<{ inputs: Record<string, { default?: string }> }>(
  read("action.yml"),
  "action.yml",
);
const INPUTS = Object.keys(ACTION.inputs);
const TASKS = Object.keys(
  (JSON.parse(read("deno.json")) as { tasks: Record<string, unknown> }).tasks,
);

interface Table {
  readonly file: string;
  readonly header: readonly string[];
  readonly rows: ReadonlyArray<readonly string[]>;
}

function _cells(line: string): string[] {
  return line.replace(/^\|/, "").replace(/\|$/, "").split(" | ").map((cell) => cell.trim());
}

/** Every Markdown table of the user docs, header and rows as cells. */
function _tables(): Table[] {
  const tables: Table[] = [];
  for (const file of userDocs()) {
    for (const block of read(file).split(/\n(?!\|)/).join("\n").split(/\n\n+/)) {
      const lines = block.split("\n").filter((line) => line.startsWith("|"));
      if (lines.length < 2 || !/^\|[ -|]+\|$/.test(lines[1]!)) continue;
      tables.push({ file, header: _cells(lines[0]!), rows: lines.slice(2).map(_cells) });
    }
  }
  return tables;
}

const TABLES = _tables();

Deno.test("every table of the action's inputs lists exactly action.yml's inputs", () => {
  // docs/contract.md's "input" table is the program's inputs (flags, variables), not the action's.
  const inputTables = TABLES.filter((table) =>
    table.header[0] === "input" && table.file !== "docs/contract.md"
  );
  const files = inputTables.map((table) => table.file).sort();
  assert.deepEqual(files, ["docs/github-actions.md", "docs/recipes/github-actions.md"]);
  for (const table of inputTables) {
    const names = table.rows.map((row) => /^`([\w-]+)`$/.exec(row[0]!)?.[1] ?? row[0]);
    assert.deepEqual(names.toSorted(), INPUTS.toSorted(), `${table.file}'s inputs`);
    const column = table.header.indexOf("default");
    if (column < 0) continue;
    for (const row of table.rows) {
      const name = row[0]!.slice(1, -1);
      const documented = row[column] === "empty" ? "" : row[column]!.replace(/^`|`$/g, "");
      assert.equal(documented, ACTION.inputs[name]!.default ?? "", `${table.file}: ${name}`);
    }
  }
});

Deno.test("action.yml's version input names every form scripts/action.sh takes", () => {
  const action = parseYaml<{ inputs: Record<string, { description: string }> }>(
    read("action.yml"),
    "action.yml",
  );
  const description = action.inputs.version!.description;
  for (const form of ["1.2.3", "v1.2.3", "latest", "source"]) {
    assert.match(description, new RegExp(`(?<![\\w.])${form.replaceAll(".", "\\.")}(?![\\w.])`));
  }
  assert.match(action.inputs["base-url"]!.description, /[Rr]equired with version source/);
});

Deno.test("every deno task the docs name is a task of deno.json, and develop.md names them all", () => {
  for (const file of userDocs()) {
    for (
      const match of read(file).matchAll(/\bdeno(?:@[\d.]+)? task (?:--quiet )?([a-z][\w-]*)/g)
    ) {
      assert.ok(TASKS.includes(match[1]!), `${file}: deno task ${match[1]} is no task`);
    }
  }
  const develop = read("docs/develop.md");
  for (const task of TASKS) {
    assert.match(develop, new RegExp(`\\btask (--quiet )?${task}\\b`), `develop.md: ${task}`);
  }
  assert.match(read("README.md"), /\btask fake-service\b/);
});

Deno.test("every flag and SERVICE_ variable docs/compatibility.md promises is in the option table", () => {
  const text = read("docs/compatibility.md");
  const flags = text.split("\n\n").find((paragraph) => paragraph.startsWith("Flags:"))!;
  for (const [, flag] of flags.matchAll(/`--([a-z][a-z-]*)/g)) {
    assert.ok(OPTION_NAMES.includes(flag!) || ["help", "version"].includes(flag!), flag);
  }
  const variables = text.split("\n\n").find((paragraph) =>
    paragraph.startsWith("Environment variables:")
  )!;
  for (const [variable] of variables.matchAll(/SERVICE_[A-Z_]+/g)) {
    assert.ok(CONFIG_ENV_VARIABLES.includes(variable), variable);
  }
});

Deno.test("direct-api.md's option table and direct-api.sh's header name the same options and variables", () => {
  const script = read("scripts/direct-api.sh");
  const header = script.slice(
    script.indexOf("# Options and variables"),
    script.indexOf("# It follows the same contract"),
  );
  const table = TABLES.find((each) =>
    each.file === "docs/recipes/direct-api.md" && each.header[0] === "option"
  );
  assert.ok(table !== undefined, "docs/recipes/direct-api.md has an option table");
  const options = (text: string) => new Set([...text.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]));
  const variables = (text: string) =>
    new Set([...text.matchAll(/SERVICE_[A-Z_]+/g)].map((m) => m[0]));
  const listed = table.rows.map((row) => `${row[0]} ${row[1]}`).join("\n");
  const headerOptions = [...options(header)].filter((option) =>
    !["--help", "--version"].includes(option)
  );
  assert.deepEqual([...options(listed)].sort(), headerOptions.sort());
  assert.deepEqual([...variables(listed)].sort(), [...variables(header)].sort());
});

Deno.test("every gate run from a URL or a checkout in docs/install.md names the address", () => {
  const text = read("docs/install.md");
  const runs = [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)]
    .map((match) => match[1]!.replace(/\\\n\s*/g, ""))
    .flatMap((block) => block.split("\n"))
    .filter((line) => /\bdeno run .*(\/src\/main\.ts|"\$url") --agent\b/.test(line));
  assert.ok(runs.length >= 2, `${runs.length} runs from a URL`);
  for (const line of runs) assert.match(line, /--base-url /, line);
});
