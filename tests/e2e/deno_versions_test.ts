/**
 * End to end: the user's own Deno. The gate runs from the Python mirror of docs/install.md with
 * the documented flags on the oldest Deno it supports (MINIMUM_DENO_VERSION; the newest, 2.9.6,
 * runs every other test), and the releases before it are refused with exit 2 and one line. Each
 * Deno comes from npm (`npx --yes deno@<version>`, cached by npm after the first download);
 * without the registry these tests are skipped, except under CI=true.
 */

import assert from "node:assert/strict";
import { MINIMUM_DENO_VERSION } from "../../src/platform/deno_version.ts";
import { runCommand } from "../support/command.ts";
import { AGENTS, defaultAgents, KEYS, startFakeService } from "../support/fake_service.ts";
import { documentedMirrorArgs, startPythonMirror } from "../support/python_mirror.ts";
import { needsTools } from "../support/tools.ts";
import { runFromUrl, URL_RUN_FLAGS } from "../support/url_run.ts";

/** The last release of each line before the minimum: 2.0 lacks env wildcards, 1.x crashes. */
const TOO_OLD = ["2.0.6", "1.46.3"];

const needs = needsTools({ tools: ["python3", "npx", "npm"], notOn: ["windows"] });

// The Deno binary npm installs for `version`, or why there is none, asked of npx once per version
// (each npx costs a Node start-up and a registry round trip). Run outside the checkout: an old
// Deno stops at its lock file.
const _found = new Map<string, Promise<string | Error>>();
function _denoFromNpm(version: string): Promise<string | Error> {
  let found = _found.get(version);
  if (found === undefined) _found.set(version, found = _npx(version));
  return found;
}

async function _npx(version: string): Promise<string | Error> {
  const cwd = await Deno.makeTempDir({ prefix: "service-ci-npx-deno-" });
  try {
    const result = await runCommand("npx", [
      "--yes",
      `deno@${version}`,
      "eval",
      "console.log(Deno.execPath())",
    ], { cwd, env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" } });
    if (result.code === 0) return result.stdout.trim();
    return new Error(`npx --yes deno@${version} failed (exit ${result.code}): ${result.stderr}`);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
}

// Whether npm's registry answers at all: a failed npx with a registry that answers is a failure.
async function _registryAnswers(): Promise<boolean> {
  const result = await runCommand("npm", ["view", `deno@${MINIMUM_DENO_VERSION}`, "version"])
    .catch(() => undefined);
  return result?.code === 0;
}

// Asked once, when the tests are registered: the minimum's download tells whether npm answers.
const minimum = needs.ignore ? undefined : await _denoFromNpm(MINIMUM_DENO_VERSION);
const offline = minimum instanceof Error && Deno.env.get("CI") !== "true" &&
  !(await _registryAnswers());
const suffix = needs.nameSuffix || (offline ? " (skipped: the npm registry is not reachable)" : "");

async function _deno(version: string): Promise<string> {
  needs.assertFound();
  const found = await _denoFromNpm(version);
  if (found instanceof Error) throw found;
  return found;
}

Deno.test({
  name: `Deno ${MINIMUM_DENO_VERSION}, the minimum, runs the gate from the mirror${suffix}`,
  ignore: needs.ignore || offline,
  async fn() {
    const deno = await _deno(MINIMUM_DENO_VERSION);
    await using mirror = await startPythonMirror(documentedMirrorArgs());
    await using service = await startFakeService({ agents: defaultAgents(200) });
    const denoDir = await Deno.makeTempDir({ prefix: "service-ci-old-deno-dir-" });
    try {
      const env = { SERVICE_API_KEY: KEYS.ci };
      const common = ["--base-url", service.url, "--timeout-minutes", "1"];
      const passed = await runFromUrl(mirror.main, ["--agent", AGENTS.passing, ...common], {
        deno,
        env,
        denoDir,
      });
      assert.equal(passed.code, 0, passed.stderr);
      assert.match(passed.stderr, /exit 0: 1 gate, 1 passed/);
      const failed = await runFromUrl(mirror.main, ["--agent", AGENTS.failing, ...common], {
        deno,
        env,
        denoDir,
      });
      assert.equal(failed.code, 1, failed.stderr);
      assert.match(failed.stderr, /exit 1: 1 gate, 1 failed/);
    } finally {
      await Deno.remove(denoDir, { recursive: true });
    }
  },
});

Deno.test({
  name: `an older Deno (${TOO_OLD.join(", ")}) is refused with exit 2 and one line${suffix}`,
  ignore: needs.ignore || offline,
  async fn() {
    await using mirror = await startPythonMirror(documentedMirrorArgs());
    await using service = await startFakeService({ agents: defaultAgents(200) });
    // The versions one after the other would wait for npx and the downloads twice.
    await Promise.all(TOO_OLD.map(async (version) => {
      const deno = await _deno(version);
      const denoDir = await Deno.makeTempDir({ prefix: "service-ci-old-deno-dir-" });
      try {
        const result = await runFromUrl(mirror.main, [
          "--agent",
          AGENTS.passing,
          "--base-url",
          service.url,
        ], { deno, env: { SERVICE_API_KEY: KEYS.ci }, denoDir });
        assert.equal(result.code, 2, `${version}: ${result.stderr}`);
        assert.equal(
          result.stderr,
          `service-ci: Deno ${version} is older than ${MINIMUM_DENO_VERSION}, the oldest that runs service-ci: upgrade Deno (deno upgrade, or npx --yes deno@${MINIMUM_DENO_VERSION} or later) or use the release binary, which needs no Deno (docs/install.md)\n`,
        );
        assert.equal(result.stdout, "");
      } finally {
        await Deno.remove(denoDir, { recursive: true });
      }
    }));
    assert.deepEqual(service.requestsOf("POST"), []);
  },
});

Deno.test({
  name:
    `the Deno before the minimum (2.0.6) cannot read SERVICE_* with the documented flags${suffix}`,
  ignore: needs.ignore || offline,
  async fn() {
    // Why the minimum is what it is: 2.0 takes `SERVICE_*` in --allow-env as one name.
    const deno = await _deno("2.0.6");
    const dir = await Deno.makeTempDir({ prefix: "service-ci-env-probe-" });
    const file = `${dir}/probe.ts`;
    await Deno.writeTextFile(
      file,
      "try { console.log(Deno.env.get('SERVICE_API_KEY')) } catch (e) { console.log(e.name) }\n",
    );
    const allowEnv = URL_RUN_FLAGS.filter((flag) => flag.startsWith("--allow-env="));
    const probe = await runCommand(deno, ["run", "--no-config", "--no-prompt", ...allowEnv, file], {
      cwd: dir,
      env: { SERVICE_API_KEY: "sk_probe", DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    }).finally(() => Deno.remove(dir, { recursive: true }));
    assert.equal(probe.code, 0, probe.stderr);
    assert.equal(probe.stdout.trim(), "NotCapable");
  },
});
