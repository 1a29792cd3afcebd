/**
 * The gate against evaluation services written as teams write them, on Python's http.server,
 * FastAPI under uvicorn and Flask (Debian's packages), on plain-http loopback: every request
 * carries its target in origin form (`/api/v1/…`), the key, and never goes through a proxy,
 * whatever the proxy variables say. (1.4 sent the absolute form here; uvicorn and http.server
 * answered 404 to every request.)
 */

import assert from "node:assert/strict";
import { AGENTS, KEYS } from "../support/fake_service.ts";
import {
  type EvalService,
  type Framework,
  frameworkTest,
  startEvalService,
} from "../support/interop.ts";
import { type ProgramResult, runProgram } from "../support/program.ts";
import { startProxy } from "../support/proxy.ts";

const FRAMEWORKS: readonly Framework[] = ["http.server", "fastapi", "flask"];
const ORIGIN_FORM = /^\/api\/v1\/agents\/[0-9a-f-]{36}\/runs(\/run_\d+)?$/;
/** Nothing listens on port 1 of loopback: a proxy there refuses every connection. */
const DEAD_PROXY = "http://127.0.0.1:1";

function _gate(
  service: EvalService,
  agent: string,
  env: Record<string, string> = {},
  permissions?: readonly string[],
): Promise<ProgramResult> {
  return runProgram(["--agent", agent, "--timeout-minutes", "0.5"], {
    // No update check: Deno's own request to its download host would go through the proxy.
    env: {
      SERVICE_API_KEY: KEYS.ci,
      SERVICE_BASE_URL: service.url,
      DENO_NO_UPDATE_CHECK: "1",
      ...env,
    },
    ...(permissions === undefined ? {} : { permissions }),
  });
}

function _assertOriginForm(service: EvalService, runs: number): void {
  const requests = service.requests();
  assert.ok(requests.length >= runs * 3, JSON.stringify(requests));
  for (const request of requests) {
    assert.match(request.target, ORIGIN_FORM, JSON.stringify(request));
    assert.equal(request.key, true, JSON.stringify(request));
  }
  assert.equal(requests.filter((request) => request.method === "POST").length, runs);
}

for (const framework of FRAMEWORKS) {
  frameworkTest(
    `on ${framework}, a passing gate exits 0 and a failing one 1, every request in origin form`,
    framework,
    async () => {
      await using service = await startEvalService(framework);
      const [passing, failing] = await Promise.all([
        _gate(service, AGENTS.passing),
        _gate(service, AGENTS.failing),
      ]);
      assert.equal(passing.code, 0, passing.stderr);
      assert.match(passing.stdout + passing.stderr, /PASSED/);
      assert.equal(failing.code, 1, failing.stderr);
      // Exit 1 is also Deno's own failure; the gate's says FAILED.
      assert.match(failing.stdout + failing.stderr, /FAILED/);
      _assertOriginForm(service, 2);
    },
  );

  frameworkTest(
    `on ${framework}, the proxy variables (live or dead, with or without NO_PROXY) change nothing: origin form, no proxy`,
    framework,
    async () => {
      await using service = await startEvalService(framework);
      await using proxy = startProxy("relay");
      const settings: Record<string, string>[] = [
        { HTTP_PROXY: proxy.url },
        { http_proxy: proxy.url, NO_PROXY: "example.com" },
        { ALL_PROXY: proxy.url, all_proxy: proxy.url },
        { HTTP_PROXY: DEAD_PROXY, ALL_PROXY: DEAD_PROXY },
        { http_proxy: DEAD_PROXY, no_proxy: "localhost" },
      ];
      const results = await Promise.all(
        settings.map((env, index) =>
          _gate(service, index % 2 ? AGENTS.failing : AGENTS.passing, env)
        ),
      );
      for (const [index, result] of results.entries()) {
        const setting = JSON.stringify(settings[index]);
        assert.equal(result.code, index % 2, `${setting}: ${result.stderr}`);
        assert.match(result.stdout + result.stderr, index % 2 ? /FAILED/ : /PASSED/, setting);
      }
      assert.equal(proxy.connections, 0, `the proxy saw ${JSON.stringify(proxy.requests)}`);
      _assertOriginForm(service, settings.length);
    },
  );
}

frameworkTest(
  "on uvicorn, the same holds under -A and under the documented permission set with the proxy set",
  "fastapi",
  async () => {
    await using service = await startEvalService("fastapi");
    const env = { HTTP_PROXY: DEAD_PROXY, ALL_PROXY: DEAD_PROXY };
    // runProgram passes deno.json's set, the one docs/install.md spells out and the compile step
    // bakes in; -A grants everything.
    const [documented, all] = await Promise.all([
      _gate(service, AGENTS.passing, env),
      _gate(service, AGENTS.failing, env, ["-A"]),
    ]);
    assert.equal(documented.code, 0, documented.stderr);
    assert.equal(all.code, 1, all.stderr);
    assert.match(all.stdout + all.stderr, /FAILED/);
    _assertOriginForm(service, 2);
  },
);
