import assert from "node:assert/strict";
import { CI_ENV_VARIABLES, ENV_VARIABLES } from "../../src/ci/detect.ts";

/** The `env` list of deno.json's default permission set: exact names and `PREFIX*` wildcards. */
async function allowedEnv(): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  const env: unknown = config.permissions?.default?.env;
  assert.ok(Array.isArray(env), "deno.json's default permission set has an env list");
  return env.map((name) => String(name).trim());
}

function covers(allowed: readonly string[], name: string): boolean {
  return allowed.some((entry) =>
    entry.endsWith("*") ? name.startsWith(entry.slice(0, -1)) : entry === name
  );
}

Deno.test("deno.json's --allow-env covers every variable CI detection reads", async () => {
  const allowed = await allowedEnv();
  const uncovered = CI_ENV_VARIABLES.filter((name) => !covers(allowed, name));
  assert.deepStrictEqual(uncovered, [], `add to --allow-env: ${uncovered.join(",")}`);
});

Deno.test("deno.json's env permission covers every variable the program reads", async () => {
  const allowed = await allowedEnv();
  const uncovered = ENV_VARIABLES.filter((name) => !covers(allowed, name));
  assert.deepStrictEqual(uncovered, [], `add to the env permission: ${uncovered.join(",")}`);
});

Deno.test("covers() reads a trailing * as a prefix and anything else as an exact name", () => {
  assert.equal(covers(["GITHUB_*"], "GITHUB_SHA"), true);
  assert.equal(covers(["GITHUB_*"], "GITHUB"), false);
  assert.equal(covers(["CI"], "CI"), true);
  assert.equal(covers(["CI"], "CI_JOB_URL"), false);
});
