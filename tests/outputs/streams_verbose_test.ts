/** Tests the verbose mode's line and when it is on, in which CI's format. */

import assert from "node:assert/strict";
import type { Exchange } from "../../src/effects.ts";
import { exchangeLine, exchangeLog, Output } from "../../src/outputs/streams.ts";

const EXCHANGE: Exchange = {
  method: "POST",
  host: "service.example",
  path: "/api/v1/agents/a/runs",
  status: 500,
  durationMs: 12.4,
  attempt: 2,
  requestId: "req\n::error::x",
  errorBody: `sk_live_1 ##vso[task.complete]\n::warning::y ${"z".repeat(500)}`,
};

Deno.test("exchangeLine() bounds, masks and neutralises what came from elsewhere", () => {
  const line = exchangeLine(EXCHANGE, ["sk_live_1"]);
  assert.ok(line.startsWith("POST service.example/api/v1/agents/a/runs → 500 in 12 ms, attempt 2"));
  assert.match(
    line,
    /, request id req ::error::x, body: \*\*\* ##vso \[task\.complete\] ::warning::y z+…$/,
  );
  assert.ok(!line.includes("sk_live_1") && !line.includes("\n"));
  const body = line.slice(line.indexOf("body: ") + 6);
  assert.equal(body.length, 200);
  assert.equal(
    exchangeLine({ ...EXCHANGE, status: null, requestId: null, errorBody: null }, []),
    "POST service.example/api/v1/agents/a/runs → no answer in 12 ms, attempt 2",
  );
});

Deno.test("exchangeLog() is on with --verbose, off with false, else by the detected CI's own switch and in its format", () => {
  const make = (verbose: boolean | undefined, provider: string, vars: Record<string, string>) => {
    let stderr = "";
    const output = new Output({ stdout: () => {}, stderr: (text) => stderr += text });
    const log = exchangeLog(output, verbose, provider, vars, { monotonic: () => 0 });
    log?.tell({ ...EXCHANGE, status: 200, requestId: null, errorBody: null });
    return log === undefined ? null : stderr;
  };
  const line = "POST service.example/api/v1/agents/a/runs → 200 in 12 ms, attempt 2\n";
  assert.equal(make(undefined, "local", {}), null);
  assert.equal(make(true, "local", {}), `service-ci: ${line}`);
  assert.equal(make(undefined, "github_actions", { RUNNER_DEBUG: "1" }), `::debug::${line}`);
  assert.equal(make(true, "github_actions", { RUNNER_DEBUG: "1" }), `::debug::${line}`);
  assert.equal(make(false, "github_actions", { RUNNER_DEBUG: "1" }), null);
  assert.equal(make(undefined, "github_actions", { RUNNER_DEBUG: "0" }), null);
  assert.equal(make(undefined, "azure_pipelines", { SYSTEM_DEBUG: "True" }), `##[debug]${line}`);
  assert.equal(make(undefined, "gitlab", { CI_DEBUG_TRACE: "true" }), `service-ci: ${line}`);
  assert.equal(make(undefined, "gitlab", { RUNNER_DEBUG: "1" }), null);
});
