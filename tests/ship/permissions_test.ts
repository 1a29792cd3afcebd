/**
 * One permission set: deno.json's `"permissions"."default"`. The start task and the compile step
 * use it with `-P`; every documented command that runs service-ci grants exactly it, and every
 * one passes `--quiet`.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { userDocs } from "../support/docs.ts";
import { permissionFlags } from "../../scripts/permissions.ts";
import { compileArgs } from "../../scripts/build.ts";
import { PERMISSIONS } from "../support/program.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DENO_JSON = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json")));

// Shell words of one command line (single and double quotes, backslash line joins already done).
function _words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** The documented `deno run`/`deno install` commands that run service-ci, with where they are. */
function _documentedCommands(): { where: string; words: string[] }[] {
  const found: { where: string; words: string[] }[] = [];
  for (const file of userDocs()) {
    const text = Deno.readTextFileSync(join(ROOT, file)).replace(/\\\n\s*/g, " ");
    text.split("\n").forEach((line, index) => {
      const at = line.search(/\bdeno (?:run|install)\b/);
      if (at < 0 || line.slice(0, at).includes("`")) return;
      const words = _words(line.slice(at));
      const target = words.find((word) =>
        /src\/main\.ts\}?$|^jsr:@service-ci\//.test(word) || word === "<permissions>"
      );
      if (target !== undefined) found.push({ where: `${file}:${index + 1}`, words });
    });
  }
  return found;
}

Deno.test("deno.json has one permission set, and it grants no -A, no ffi, no import", () => {
  assert.equal(DENO_JSON.runtimePermissions, undefined);
  assert.deepEqual(Object.keys(DENO_JSON.permissions), ["default"]);
  const flags = permissionFlags(JSON.stringify(DENO_JSON));
  assert.deepEqual(flags, [...PERMISSIONS]);
  assert.ok(!flags.some((flag) => /^--allow-(?:all|ffi|import|sys)\b/.test(flag)), flags.join(" "));
});

Deno.test("every documented way to run service-ci passes --quiet, so Deno's diagnostics stay out of CI logs", () => {
  // Without it Deno prints "Warning Permissions in the config file is an experimental feature"
  // for -P and "Info Failed to resolve 'buildkite-agent' for allow-run" wherever that program is
  // missing; the compiled binary keeps the log level it was compiled with (scripts/build.ts).
  assert.ok(_words(DENO_JSON.tasks.start.command).includes("--quiet"), "the start task");
  const compile = compileArgs("x86_64-unknown-linux-gnu", { entry: "src/main.ts", outDir: "dist" });
  assert.ok(compile.includes("--quiet"), "the compile step");
  const action = Deno.readTextFileSync(join(ROOT, "scripts/action.sh"));
  const source = action.split("\n").filter((line) => /\bset -- deno run\b/.test(line));
  assert.equal(source.length, 1, "scripts/action.sh's source mode");
  assert.ok(_words(source[0]!).includes("--quiet"), source[0]);
  for (const { where, words } of _documentedCommands()) {
    assert.ok(words.includes("--quiet"), `${where} runs service-ci without --quiet`);
  }
});

Deno.test("the start task and the compile step grant the set with -P and nothing else", () => {
  const start = _words(DENO_JSON.tasks.start.command);
  assert.ok(start.includes("-P"), DENO_JSON.tasks.start.command);
  assert.ok(!start.some((word) => word.startsWith("--allow-") || word === "-A"));
  const compile = compileArgs("x86_64-unknown-linux-gnu", { entry: "src/main.ts", outDir: "dist" });
  assert.ok(compile.includes("-P"));
  assert.ok(!compile.some((word) => word.startsWith("--allow-") || word === "-A"));
});

Deno.test("every documented deno run or deno install of service-ci grants exactly deno.json's set", () => {
  const commands = _documentedCommands();
  assert.ok(commands.length >= 3, `${commands.length} documented commands`);
  for (const { where, words } of commands) {
    const granted = words.filter((word) => word.startsWith("--allow-") || word === "-A");
    if (words.includes("-P")) {
      assert.deepEqual(granted, [], `${where} uses -P and grants more`);
      continue;
    }
    assert.deepEqual(granted, [...PERMISSIONS], `${where} grants other permissions`);
  }
});

Deno.test("permissionFlags() spells the set as flags, and refuses a set that grants everything", () => {
  assert.deepEqual(
    permissionFlags(
      '{"permissions": {"default": {"net": true, "env": ["A_*", "B"], "ffi": false}}}',
    ),
    ["--allow-net", "--allow-env=A_*,B"],
  );
  assert.throws(() => permissionFlags("{}"), /"permissions"/);
  assert.throws(
    () => permissionFlags('{"permissions": {"default": {"all": true}}}'),
    /may grant only/,
  );
  assert.throws(
    () => permissionFlags('{"permissions": {"default": {"run": "git"}}}'),
    /"run" must be/,
  );
  assert.throws(() => permissionFlags('{"permissions": {"default": {}}}'), /grants nothing/);
});
