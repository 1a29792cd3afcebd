/**
 * The README is a newcomer's first screen: short, and true. Reference material lives in docs/.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { userDocs } from "../support/docs.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const README = Deno.readTextFileSync(join(ROOT, "README.md"));

Deno.test("the README is under 250 lines, none over 200 characters", () => {
  const lines = README.split("\n");
  assert.ok(lines.length < 250, `${lines.length} lines`);
  const long = lines.filter((line) => line.length > 200);
  assert.deepEqual(long, []);
});

Deno.test("the README's first screen: what it is, the two-value invocation, installs, exit codes", () => {
  const first = README.split("\n").slice(0, 60).join("\n");
  assert.match(first, /CI quality gate/);
  assert.match(first, /export SERVICE_API_KEY=/);
  assert.match(first, /^service-ci --agent [0-9a-f-]{36}$/m);
  assert.match(first, /## Exit codes/);
  assert.match(first, /## Install it for your CI/);
  for (const code of ["0", "1", "2", "3", "4", "130, 143"]) {
    assert.match(first, new RegExp(`^\\| ${code} +\\|`, "m"), `exit code ${code}`);
  }
});

Deno.test("the README's set-up commands run Deno from npm, pinned", () => {
  const commands = [...README.matchAll(/^(npx [^\n#]*)/gm)].map((match) => match[1]!.trim());
  assert.ok(commands.some((command) => command.startsWith("npx --yes deno@2.9.6 task demo")));
  assert.ok(commands.some((command) => command.startsWith("npx --yes deno@2.9.6 task test")));
  for (const command of commands) {
    assert.match(command, /^npx --yes (deno@2\.9\.6|service-ci@\d+\.\d+\.\d+) /, command);
  }
});

Deno.test("every doc starts the task with --quiet: `deno task start` prints a line of its own", () => {
  for (const file of userDocs()) {
    const text = Deno.readTextFileSync(join(ROOT, file));
    assert.doesNotMatch(text, /\bdeno task start\b/, file);
  }
});

Deno.test("every doc names one image, ghcr.io/service-ci/ci, and no placeholder for it", () => {
  for (const file of [...userDocs(), "action.yml", "Dockerfile"]) {
    const text = Deno.readTextFileSync(join(ROOT, file));
    assert.ok(!text.includes("{image_registry}"), `${file} has the {image_registry} placeholder`);
    for (const match of text.matchAll(/\bghcr\.io\/[\w./-]+(?::[\w.-]+)?/g)) {
      assert.match(match[0], /^ghcr\.io\/service-ci\/ci(?::v\d+(?:\.\d+\.\d+)?)?$/, file);
    }
  }
});

Deno.test("the permission flags are written out only in docs/install.md and the recipes", () => {
  for (const file of userDocs()) {
    if (file === "docs/install.md" || file.startsWith("docs/recipes/")) continue;
    const text = Deno.readTextFileSync(join(ROOT, file));
    assert.ok(!text.includes("--allow-env=SERVICE_*"), `${file} writes the permission list out`);
  }
});

Deno.test("every relative link of the README and docs/ points at a file that exists", () => {
  for (const file of userDocs()) {
    const text = Deno.readTextFileSync(join(ROOT, file));
    const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : ".";
    for (const match of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      const target = match[1]!;
      if (/^[a-z]+:/.test(target)) continue;
      const path = join(ROOT, dir, target);
      let exists = true;
      try {
        Deno.statSync(path);
      } catch {
        exists = false;
      }
      assert.ok(exists, `${file}: ${target}`);
    }
  }
});
