/**
 * End to end: docs/install.md's mirror, Python's own HTTP server with `.ts` mapped to a
 * TypeScript type, serving a copy of src/ and deno.json on 127.0.0.1; the gate run from it with
 * the documented flags against the fake service, the `curl -sI` check the docs give, and plain
 * `python3 -m http.server` failing the documented way where /etc/mime.types makes it.
 */

import assert from "node:assert/strict";
import { runCommand } from "../support/command.ts";
import { AGENTS, defaultAgents, KEYS, startFakeService } from "../support/fake_service.ts";
import { documentedMirrorArgs, startPythonMirror, VERSION } from "../support/python_mirror.ts";
import { toolTest } from "../support/tools.ts";
import { runFromUrl, URL_RUN_FLAGS } from "../support/url_run.ts";

const NEEDS = { tools: ["python3"], notOn: ["windows"] } as const;

async function _contentType(url: string): Promise<string | undefined> {
  const response = await fetch(url, { method: "HEAD" });
  await response.body?.cancel();
  return response.headers.get("content-type") ?? undefined;
}

toolTest(
  "the documented Python mirror runs the gate: a pass exits 0, a failure 1",
  NEEDS,
  async () => {
    await using mirror = await startPythonMirror(documentedMirrorArgs());
    await using service = await startFakeService({ agents: defaultAgents(200) });
    assert.equal(await _contentType(mirror.main), "application/typescript");
    assert.equal(await _contentType(`${mirror.url}/v${VERSION}/deno.json`), "application/json");

    const common = ["--base-url", service.url, "--timeout-minutes", "1"];
    const env = { SERVICE_API_KEY: KEYS.ci };
    const passed = await runFromUrl(mirror.main, ["--agent", AGENTS.passing, ...common], { env });
    assert.equal(passed.code, 0, passed.stderr);
    assert.match(passed.stderr, /exit 0: 1 gate, 1 passed/);
    const failed = await runFromUrl(mirror.main, ["--agent", AGENTS.failing, ...common], { env });
    assert.equal(failed.code, 1, failed.stderr);
    assert.match(failed.stderr, /FAILED/);

    // A permission list without the key's variable: said as refused, never as "not set".
    const narrow = URL_RUN_FLAGS.map((flag) =>
      flag.startsWith("--allow-env=") ? "--allow-env=NO_COLOR" : flag
    );
    const refused = await runFromUrl(mirror.main, ["--agent", AGENTS.passing, ...common], {
      env,
      flags: narrow,
    });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(
      refused.stderr,
      /^service-ci: SERVICE_API_KEY cannot be read: Deno's permissions do not grant it \(--allow-env\)/,
    );
    assert.doesNotMatch(refused.stderr, /not set/);
  },
);

toolTest("docs/install.md's curl -sI check reads the type the mirror sends", {
  ...NEEDS,
  tools: ["python3", "curl"],
}, async () => {
  const docs = await Deno.readTextFile(new URL("../../docs/install.md", import.meta.url));
  const checks = [...docs.matchAll(/^curl -sI (\S+) \| grep -i '\^content-type' +# (\S+)$/gm)];
  assert.equal(checks.length, 2, "docs/install.md checks main.ts and deno.json with curl -sI");
  await using mirror = await startPythonMirror(documentedMirrorArgs());
  for (const [, url, expected] of checks) {
    const path = new URL(url!).pathname;
    const { code, stdout } = await runCommand("sh", [
      "-c",
      `curl -sI "$1" | grep -i '^content-type'`,
      "sh",
      `${mirror.url}${path}`,
    ]);
    assert.equal(code, 0);
    assert.equal(stdout.trim().toLowerCase(), `content-type: ${expected}`);
  }
});

toolTest(
  "plain python3 -m http.server: the type of .ts comes from /etc/mime.types",
  NEEDS,
  async () => {
    await using mirror = await startPythonMirror(["-m", "http.server", "--bind", "127.0.0.1", "0"]);
    const type = await _contentType(mirror.main);
    if (type !== "text/vnd.trolltech.linguist") {
      // This machine's mime.types (or none) gives .ts another type; the failure cannot show here.
      assert.ok(type !== undefined);
      return;
    }
    const result = await runFromUrl(mirror.main, ["--version"]);
    assert.equal(result.code, 1, result.stderr);
    // Deno reads the TypeScript as JavaScript: the first type annotation is a syntax error.
    assert.match(result.stderr, /^error: SyntaxError: /);
    assert.equal(result.stdout, "");
  },
);
