/**
 * End to end, one run tells one story: every report agrees with the exit code even when a
 * report cannot be written, and what cannot succeed fails at once with the fix named.
 */

import assert from "node:assert/strict";
import { AGENTS, json, KEYS, startFakeService } from "../support/fake_service.ts";
import { MAIN, PERMISSIONS, runProgram } from "../support/program.ts";

function env(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: url, ...extra };
}

Deno.test("--junit onto /dev/full, a device the permission set does not cover: exit 2 with our own line, nothing sent", async () => {
  await using service = await startFakeService();
  const result = await runProgram(["--agent", AGENTS.passing, "--json", "--junit", "/dev/full"], {
    env: env(service.url),
  });
  assert.equal(result.code, 2, result.stderr);
  assert.equal(
    result.stderr,
    'service-ci: --junit "/dev/full" is outside what service-ci may write (its permission set covers files, not devices): give it a writable file path (nothing was sent)\n',
  );
  // Deno's own prompt text never reaches a CI log.
  assert.doesNotMatch(result.stderr, /allow-all|--allow-write|Requires .* access/);
  assert.equal(service.requests.length, 0);
});

Deno.test("--json into a closed pipe: no stack trace, and a passing gate does not exit 0", async () => {
  await using service = await startFakeService();
  const command = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      ...PERMISSIONS,
      MAIN,
      "--agent",
      AGENTS.passing,
      "--json",
    ],
    env: { ...env(service.url), NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
  const child = command.spawn();
  // Close the read end of stdout at once: the document meets a closed pipe.
  await child.stdout.cancel();
  const [status, stderr] = await Promise.all([
    child.status,
    new Response(child.stderr).text(),
  ]);
  assert.equal(status.code, 3, stderr);
  assert.match(stderr, /cannot write the --json document \(stdout\)/);
  assert.doesNotMatch(stderr, /internal error|\n\s+at /);
});

Deno.test("a non-ASCII key is refused up front: exit 2 naming SERVICE_API_KEY, nothing sent", async () => {
  await using service = await startFakeService();
  const key = "sk_live_abc\u2013def";
  const result = await runProgram(["--agent", AGENTS.passing], {
    env: env(service.url, { SERVICE_API_KEY: key }),
  });
  assert.equal(result.code, 2);
  assert.match(
    result.stderr,
    /^service-ci: SERVICE_API_KEY must be printable ASCII.*character 12 of 15/,
  );
  assert.ok(!result.stderr.includes(key));
  assert.equal(result.stderr.trim().split("\n").length, 1);
  assert.equal(service.requests.length, 0);
});

Deno.test("https:// to a plain-HTTP port stops at the first answer: exit 3 with the hint", async () => {
  await using service = await startFakeService();
  const url = service.url.replace("http://", "https://");
  const started = performance.now();
  const result = await runProgram(["--agent", AGENTS.passing], { env: env(url) });
  assert.equal(result.code, 3, result.stderr);
  assert.match(
    result.stderr,
    /NOT CHECKED: TLS handshake with 127\.0\.0\.1:\d+ failed: the port answers in plain HTTP \(fix: check --base-url's scheme and port \(http:\/\/ is allowed only for loopback hosts\)\)$/m,
  );
  assert.doesNotMatch(result.stderr, /attempt \d/);
  assert.ok(performance.now() - started < 20_000);
});

Deno.test("a run id that makes an unusable URL stops at once: exit 3, unusable answer", async () => {
  await using service = await startFakeService();
  service.script({
    method: "POST",
    answer: () => json(201, { run_id: "r".repeat(1_000_000) }),
  });
  const result = await runProgram(["--agent", AGENTS.passing], { env: env(service.url) });
  assert.equal(result.code, 3, result.stderr);
  assert.match(result.stderr, /unusable run_id: run id "r+…" makes an address of \d+ characters/);
  assert.equal(service.requestsOf("GET").length, 0);
  assert.equal(service.requestsOf("POST").length, 1);
});

Deno.test("refusals name the flag and what would be valid, with a suggestion", async (t) => {
  const cases: [string[], RegExp][] = [
    [["--agents", AGENTS.passing], /unknown option --agents; did you mean --agent\?/],
    [
      ["--time-out-minutes", "5"],
      /unknown option --time-out-minutes; did you mean --timeout-minutes\?/,
    ],
    [
      ["--agent", AGENTS.passing, "--base-url", "127.0.0.1:8787"],
      /--base-url must be an https:\/\/ URL .*did you mean http:\/\/127\.0\.0\.1:8787\?/,
    ],
    [
      ["--agent", AGENTS.passing, "--base-url", "service.example:443/eval"],
      /--base-url must be an https:\/\/ URL .*did you mean https:\/\/service\.example:443\/eval\?/,
    ],
  ];
  for (const [args, expected] of cases) {
    await t.step(args.join(" "), async () => {
      const result = await runProgram(args, { env: { SERVICE_API_KEY: KEYS.ci } });
      assert.equal(result.code, 2);
      assert.match(result.stderr, expected);
      assert.equal(result.stderr.trim().split("\n").length, 1);
    });
  }
});
