/**
 * End to end under faults (contract §1, §3–§6): the gate against a fake service that fails,
 * stalls, redirects, cuts connections, answers garbage or hostile text, or is interrupted. Runs
 * whose waits are the service's play in process on virtual time, the service on the same clock
 * (tests/support/in_process.ts); the real entry point runs where a process or real timers are
 * the point: signals, hung requests cut by the request timeout or the deadline, hostile text
 * through real pipes.
 */

import assert from "node:assert/strict";
import {
  AGENTS,
  cutOff,
  defaultAgents,
  type FakeAgent,
  type FakeService,
  hang,
  json,
  KEYS,
  type LoggedRequest,
  problem,
  startFakeService,
} from "../support/fake_service.ts";
import { assertValidJunit, xmlTest } from "../support/junit.ts";
import { FakeTime } from "../support/fake_time.ts";
import { runInProcess } from "../support/in_process.ts";
import { type ProgramResult, runProgram, startProgram } from "../support/program.ts";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
// `Retry-After: 0` is bounded up to 0.5 s by the runner: the fastest retry a service can ask for.
const RETRY_NOW = { "retry-after": "0" };

function env(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: url, ...extra };
}

/** A fresh active agent whose gate passes (or fails), finishing after `runMs`. */
function agent(overrides: Partial<FakeAgent> = {}): FakeAgent {
  const base = defaultAgents(300).find((a) => a.id === AGENTS.passing)!;
  return { ...base, id: crypto.randomUUID(), ...overrides };
}

function runsPath(agentId: string): string {
  return `/api/v1/agents/${agentId}/runs`;
}

function html(status: number, text: string, headers: Record<string, string> = {}): Response {
  return new Response(`<!doctype html><html><body>${text}</body></html>`, {
    status,
    headers: { "content-type": "text/html; charset=utf-8", ...headers },
  });
}

function redirect(status: number, location: string): Response {
  return new Response(null, { status, headers: { location } });
}

/** Milliseconds between two logged requests, by the fake service's clock. */
function gap(from: LoggedRequest, to: LoggedRequest): number {
  return to.at - from.at;
}

// The workflow commands service-ci itself writes in GitHub Actions.
const OWN_COMMAND =
  /^::(?:group::service-ci progress|endgroup::|error title=service-ci%3A [^:]*::)/;

/** Every line a person or the Actions runner reads, checked for what the service could inject. */
function assertSafeText(text: string, what: string, github = false): void {
  for (const forbidden of ["\x1b", "\x07", "\r", "\x9b", "\x9d", "\x00"]) {
    assert.ok(!text.includes(forbidden), `${what} contains ${JSON.stringify(forbidden)}:\n${text}`);
  }
  for (const line of text.split("\n")) {
    const start = line.trim();
    if (github && OWN_COMMAND.test(start)) continue;
    assert.ok(
      !start.startsWith("::") && !start.startsWith("##["),
      `${what} has a line the Actions runner would read as a command: ${JSON.stringify(line)}`,
    );
  }
}

/** Every string inside a JSON value. */
function stringsOf(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(stringsOf);
  return [];
}

function hasControl(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

function assertNoStackTrace(result: ProgramResult): void {
  assert.doesNotMatch(result.stderr, /^\s+at /m, result.stderr);
  assert.doesNotMatch(result.stderr, /internal error|Uncaught/, result.stderr);
}

// §3 — retries of the trigger

Deno.test("503, then 502, then 201 on the trigger: one run, every attempt with the same Idempotency-Key", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  service.script({ method: "POST", answer: () => problem(503, "unavailable", "warming up") });
  service.script({ method: "POST", answer: () => html(502, "502 Bad Gateway") });
  const result = await runInProcess(["--agent", AGENTS.failing], { env: env(service.url), time });
  assert.equal(result.code, 1, result.stderr);
  const posts = service.requestsOf("POST");
  assert.equal(posts.length, 3);
  const keys = new Set(posts.map((post) => post.headers["idempotency-key"]));
  assert.equal(keys.size, 1, [...keys].join(", "));
  const [key] = keys;
  assert.match(key!, UUID_V4);
  assert.equal(new Set(posts.map((post) => post.body)).size, 1, "every retry sends the same body");
  assert.equal(service.runs.size, 1);
  assert.equal([...service.runs.values()][0]!.idempotencyKey, key);
  assert.match(
    result.stderr,
    /trigger failed: POST answered 503[^:]*: warming up; attempt 1 of 10/,
  );
  assert.match(
    result.stderr,
    /trigger failed: POST answered 502 Bad Gateway \(an HTML page: a proxy in front of the service\?\); attempt 2 of 10/,
  );
  assert.match(result.stderr, /FAILED \(run run_0001\)/);
});

Deno.test("a connection dropped after the service created the run: the retry's key finds it, one run", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  service.script({
    method: "POST",
    answer: async (_request, next) => {
      await next(); // the service creates the run…
      return cutOff(); // …and the answer never arrives whole.
    },
  });
  const result = await runInProcess(["--agent", AGENTS.passing], { env: env(service.url), time });
  assert.equal(result.code, 0, result.stderr);
  const posts = service.requestsOf("POST");
  assert.equal(posts.length, 2);
  assert.equal(posts[0]!.headers["idempotency-key"], posts[1]!.headers["idempotency-key"]);
  assert.equal(service.runs.size, 1);
  assert.match(result.stderr, /trigger failed: network error.*; attempt 1 of 10/);
  assert.equal(result.stderr.match(/triggered run/g)?.length, 1, result.stderr);
  assert.match(result.stderr, /PASSED \(run run_0001\)/);
  for (const read of service.requestsOf("GET")) {
    assert.equal(read.path, `${runsPath(AGENTS.passing)}/run_0001`);
  }
});

// §1 Retry-After, §3 transient faults while polling

Deno.test("429 with Retry-After: 2 on a poll: the next request comes 2 s later", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  service.script({
    method: "GET",
    answer: () =>
      json(429, { error: { code: "rate_limited", message: "slow down" } }, {
        "retry-after": "2",
      }),
  });
  const result = await runInProcess(["--agent", AGENTS.passing], { env: env(service.url), time });
  assert.equal(result.code, 0, result.stderr);
  const [limited, next] = service.requestsOf("GET");
  assert.ok(limited && next);
  assert.ok(gap(limited, next) >= 1_900, `the retry came after ${gap(limited, next)} ms`);
  assert.ok(gap(limited, next) < 2_000 + 1_500, `the retry came after ${gap(limited, next)} ms`);
  assert.match(
    result.stderr,
    /reading the run failed: GET answered 429[^:]*: slow down; attempt 1 of 10, next in 2\.0 s/,
  );
});

Deno.test("bursts of 503 and 500 while polling still end in the right verdict: pass 0, fail 1", async () => {
  const time = new FakeTime();
  const passing = agent();
  const failing = agent({ gate: { rule: "x < 1", passes: false } });
  await using service = await startFakeService({ now: time.now, agents: [passing, failing] });
  // Per agent: 503, 500, 503, a good "running" answer, 500, 503, then the real answers.
  for (const { id } of [passing, failing]) {
    const fault = (status: 500 | 503) => ({
      method: "GET" as const,
      path: id,
      answer: () =>
        status === 503
          ? json(503, { message: "overloaded" }, RETRY_NOW)
          : problem(500, "internal", "boom"),
    });
    service.script(fault(503));
    service.script(fault(500));
    service.script(fault(503));
    service.script({
      method: "GET",
      path: id,
      answer: () => json(200, { status: "running" }),
    });
    service.script(fault(500));
    service.script(fault(503));
  }
  const [pass, fail] = await Promise.all([
    runInProcess(["--agent", passing.id], { env: env(service.url), time }),
    runInProcess(["--agent", failing.id], { env: env(service.url), time }),
  ]);
  assert.equal(pass.code, 0, pass.stderr);
  assert.equal(fail.code, 1, fail.stderr);
  for (const [result, { id }] of [[pass, passing], [fail, failing]] as const) {
    const reads = service.requestsOf("GET").filter((read) => read.path.includes(id));
    assert.equal(reads.length, 7, result.stderr);
    assert.match(result.stderr, /GET answered 503[^:]*: overloaded; attempt 3 of 10/);
    // The good answer in between starts the count again.
    assert.match(result.stderr, /GET answered 500 .*boom; attempt 1 of 10/);
    assert.doesNotMatch(result.stderr, /attempt 4 of 10/);
  }
});

Deno.test("ten transient faults in a row on the poll: exit 3 naming the last, after exactly 10 reads", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  let count = 0;
  service.script({
    method: "GET",
    times: 10,
    answer: () => {
      count++;
      return count < 10
        ? json(503, { message: `busy ${count}` }, RETRY_NOW)
        : json(502, { message: "the tenth fault" }, RETRY_NOW);
    },
  });
  const result = await runInProcess(["--agent", AGENTS.passing], { env: env(service.url), time });
  assert.equal(result.code, 3, result.stderr);
  assert.equal(service.requestsOf("POST").length, 1);
  const reads = service.requestsOf("GET");
  assert.equal(reads.length, 10, "the first read and 9 retries");
  // Retry-After: 0 is raised to 0.5 s: 9 waits of at least 0.5 s.
  assert.ok(gap(reads[0]!, reads[9]!) >= 9 * 500 - 100, `${gap(reads[0]!, reads[9]!)} ms`);
  assert.match(
    result.stderr,
    /NOT CHECKED \(run run_0001\): gave up after 10 failed attempts in a row; the last: GET answered 502.*: the tenth fault/,
  );
  assert.match(result.stderr, /attempt 9 of 10/);
  assertNoStackTrace(result);
});

Deno.test("HTML, truncated JSON, an empty body and a JSON array on a poll are never a verdict", async () => {
  const time = new FakeTime();
  const id = crypto.randomUUID();
  await using service = await startFakeService({
    now: time.now,
    agents: [agent({ id, gate: { rule: "x", passes: false } })],
  });
  const garbage = [
    () => html(200, '{"status": "completed", "results": {"gate": {"passed": true}}}', RETRY_NOW),
    () =>
      new Response(
        '{"run_id": "run_0001", "status": "completed", "results": {"gate": {"passed": tr',
        {
          status: 200,
          headers: { "content-type": "application/json", ...RETRY_NOW },
        },
      ),
    () => new Response("", { status: 200, headers: RETRY_NOW }),
    () => json(200, [{ status: "completed", results: { gate: { passed: true } } }], RETRY_NOW),
  ];
  for (const answer of garbage) service.script({ method: "GET", answer });
  const result = await runInProcess(["--agent", id], { env: env(service.url), time });
  assert.equal(result.code, 1, result.stderr);
  assert.equal(service.requestsOf("GET").length, garbage.length + 1);
  assert.doesNotMatch(result.stderr, /PASSED/);
  assert.match(result.stderr, /FAILED \(run run_0001\)/);
  assert.match(
    result.stderr,
    /GET answered 200 OK with a body that is not a JSON object \(text\/html/,
  );
  assert.match(
    result.stderr,
    /not a JSON object \(application\/json, \d+ characters\); attempt 2 of 10/,
  );
  assert.match(result.stderr, /not a JSON object \(empty/);
});

Deno.test("answers that are never JSON objects: exit 3 after 10 reads, never a verdict", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  let count = 0;
  service.script({
    method: "GET",
    times: 100,
    answer: () =>
      ++count % 2 === 1
        ? html(200, "maintenance", RETRY_NOW)
        : new Response('{"status": "completed", "results": {"gate": {"pass', {
          status: 200,
          headers: { "content-type": "application/json", ...RETRY_NOW },
        }),
  });
  const result = await runInProcess(["--agent", AGENTS.passing], { env: env(service.url), time });
  assert.equal(result.code, 3, result.stderr);
  assert.equal(service.requestsOf("GET").length, 10);
  assert.doesNotMatch(result.stderr, /PASSED|FAILED/);
  assert.match(
    result.stderr,
    /gave up after 10 failed attempts in a row; the last: GET answered 200 OK with a body that is not a JSON object \(application\/json/,
  );
});

// §3 per-request timeout, §4 the overall deadline

Deno.test("--request-timeout-seconds cuts a hung trigger and a hung read; the retries succeed, one run", async () => {
  // On virtual time: the service's hangs say so to it, and each request's timer ends on it.
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  service.script({
    method: "POST",
    answer: async (request, next) => {
      await next(); // the run exists; the answer never comes
      return time.hang(hang(request.signal), request);
    },
  });
  service.script({ method: "GET", answer: (request) => time.hang(hang(request.signal), request) });
  const result = await runInProcess(
    ["--agent", AGENTS.passing, "--request-timeout-seconds", "1"],
    { env: env(service.url), time },
  );
  assert.equal(result.code, 0, result.stderr);
  const posts = service.requestsOf("POST");
  assert.equal(posts.length, 2);
  assert.equal(posts[0]!.headers["idempotency-key"], posts[1]!.headers["idempotency-key"]);
  assert.equal(service.runs.size, 1);
  assert.ok(gap(posts[0]!, posts[1]!) >= 950, `${gap(posts[0]!, posts[1]!)} ms`);
  const reads = service.requestsOf("GET");
  assert.ok(reads.length >= 2);
  assert.ok(gap(reads[0]!, reads[1]!) >= 950, `${gap(reads[0]!, reads[1]!)} ms`);
  assert.match(result.stderr, /trigger failed: request timed out after 1 s; attempt 1 of 10/);
  assert.match(
    result.stderr,
    /reading the run failed: request timed out after 1 s; attempt 1 of 10/,
  );
  assert.match(result.stderr, /PASSED \(run run_0001\)/);
});

Deno.test("the deadline cuts a hung read: exit 4 within a second of it, the run and its link printed", async () => {
  await using service = await startFakeService();
  service.script({ method: "GET", times: 100, answer: (request) => hang(request.signal) });
  const spawned = Date.now();
  const result = await runProgram(["--agent", AGENTS.passing, "--timeout-minutes", "0.05"], {
    env: env(service.url),
  });
  const ended = Date.now();
  assert.equal(result.code, 4, result.stderr);
  // The deadline counts from a moment after the program started and before the trigger reached
  // the service: never earlier than 3 s after the spawn (a bound no load can break, where one
  // from the trigger's arrival broke whenever sending it took over 100 ms), and not much later
  // than 3 s after the trigger arrived.
  const trigger = service.requestsOf("POST")[0]!;
  const afterSpawn = ended - spawned;
  const afterTrigger = ended - trigger.at;
  assert.ok(afterSpawn >= 3_000, `ended ${afterSpawn} ms after the program was started`);
  assert.ok(afterTrigger < 3_000 + 1_000 + 1_000, `ended ${afterTrigger} ms after the trigger`);
  assert.equal(service.requestsOf("GET").length, 1, "the one read hung until the deadline");
  assert.match(
    result.stderr,
    new RegExp(
      `triggered run run_0001: ${service.url}/dashboard/agents/${AGENTS.passing}/runs/run_0001`,
    ),
  );
  assert.match(
    result.stderr,
    /TIMED OUT \(run run_0001\): the timeout of 3 s ran out before a verdict/,
  );
  assertNoStackTrace(result);
});

// §3 redirects

Deno.test("a redirect to another origin is refused: exit 3, and the other origin receives nothing", async (t) => {
  const cases: Array<
    [string, "GET" | "POST", number, (service: FakeService, other: FakeService) => string]
  > = [
    [
      "POST 307 to another port",
      "POST",
      307,
      (_, other) => `${other.url}${runsPath(AGENTS.passing)}`,
    ],
    [
      "POST 308 to another port",
      "POST",
      308,
      (_, other) => `${other.url}${runsPath(AGENTS.passing)}`,
    ],
    [
      "GET 302 to another port",
      "GET",
      302,
      (_, other) => `${other.url}${runsPath(AGENTS.passing)}/run_0001`,
    ],
    [
      "GET 307 to another port",
      "GET",
      307,
      (_, other) => `${other.url}${runsPath(AGENTS.passing)}/run_0001`,
    ],
    // The same server under another name is another origin: the key must not go there either.
    [
      "GET 301 to localhost on the same port",
      "GET",
      301,
      (service) =>
        `${service.url.replace("127.0.0.1", "localhost")}${runsPath(AGENTS.passing)}/run_0001`,
    ],
    [
      "GET 308 to https on the same port",
      "GET",
      308,
      (service) => `${service.url.replace("http:", "https:")}${runsPath(AGENTS.passing)}/run_0001`,
    ],
  ];
  const outcomes = await Promise.all(cases.map(async ([name, method, status, location]) => {
    const service = await startFakeService();
    const other = await startFakeService();
    try {
      service.script({ method, answer: () => redirect(status, location(service, other)) });
      const result = await runProgram(["--agent", AGENTS.passing], { env: env(service.url) });
      return { name, method, result, requests: [...service.requests], other: [...other.requests] };
    } finally {
      await service.shutdown();
      await other.shutdown();
    }
  }));
  for (const { name, method, result, requests, other } of outcomes) {
    await t.step(name, () => {
      assert.equal(result.code, 3, result.stderr);
      assert.equal(other.length, 0, "the other origin received a request");
      assert.equal(requests.filter((request) => request.method === method).length, 1);
      assert.ok(requests.every((request) => request.path.startsWith(runsPath(AGENTS.passing))));
      assert.match(
        result.stderr,
        /redirect to another origin \(.*\); refused, the API key is only sent to http:\/\/127\.0\.0\.1:\d+/,
      );
      assert.match(result.stderr, /fix: check --base-url/);
      assertNoStackTrace(result);
    });
  }
});

Deno.test("a same-origin redirect outside the agent's runs, or a 302 on the trigger, is refused", async (t) => {
  const runs = runsPath(AGENTS.passing);
  const cases: Array<[string, "GET" | "POST", number, string, RegExp]> = [
    ["GET 302 to /admin", "GET", 302, "/admin", /outside .*\/runs \(.*\/admin\); refused/],
    [
      "GET 307 to another agent's run",
      "GET",
      307,
      `${runsPath(AGENTS.failing)}/run_0001`,
      /outside/,
    ],
    ["GET 302 to a look-alike path", "GET", 302, `${runs}x/run_0001`, /outside/],
    [
      "GET 302 climbing out with ..",
      "GET",
      302,
      `${runs}/../../../admin`,
      /outside.*\/api\/v1\/admin/,
    ],
    [
      "GET 302 climbing out with %2e%2e",
      "GET",
      302,
      `${runs}/%2e%2e/%2e%2e/%2e%2e/admin`,
      /outside.*\/api\/v1\/admin/,
    ],
    ["POST 307 to /admin", "POST", 307, "/admin", /outside/],
    [
      "POST 302 inside the runs (the trigger follows only 307/308)",
      "POST",
      302,
      `${runs}?x=1`,
      /only 307\/308 are followed/,
    ],
    ["POST 303 inside the runs", "POST", 303, runs, /only 307\/308 are followed/],
  ];
  const outcomes = await Promise.all(
    cases.map(async ([name, method, status, location, message]) => {
      const service = await startFakeService();
      try {
        service.script({ method, answer: () => redirect(status, location) });
        const result = await runProgram(["--agent", AGENTS.passing], { env: env(service.url) });
        return { name, method, message, result, requests: [...service.requests] };
      } finally {
        await service.shutdown();
      }
    }),
  );
  for (const { name, method, message, result, requests } of outcomes) {
    await t.step(name, () => {
      assert.equal(result.code, 3, result.stderr);
      assert.match(result.stderr, message);
      assert.equal(requests.filter((request) => request.method === method).length, 1);
      assert.ok(
        requests.every((request) => request.path.startsWith(`${runs}`)),
        requests.map((request) => request.path).join(", "),
      );
      assertNoStackTrace(result);
    });
  }
});

Deno.test("a same-origin redirect inside the agent's runs is followed, with the key, body and Idempotency-Key", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  const runs = runsPath(AGENTS.passing);
  service.script({ method: "POST", answer: () => redirect(307, `${runs}?region=eu`) });
  service.script({ method: "GET", answer: () => redirect(302, `${runs}/run_0001?moved=1`) });
  const result = await runInProcess(["--agent", AGENTS.passing], { env: env(service.url), time });
  assert.equal(result.code, 0, result.stderr);
  const posts = service.requestsOf("POST");
  assert.deepEqual(posts.map((post) => post.path), [runs, `${runs}?region=eu`]);
  assert.equal(posts[0]!.headers["idempotency-key"], posts[1]!.headers["idempotency-key"]);
  assert.equal(posts[1]!.body, posts[0]!.body);
  assert.equal(posts[1]!.headers["x-api-key"], KEYS.ci);
  assert.equal(service.runs.size, 1);
  const reads = service.requestsOf("GET");
  assert.equal(reads[0]!.path, `${runs}/run_0001`);
  assert.equal(reads[1]!.path, `${runs}/run_0001?moved=1`);
  assert.equal(reads[1]!.headers["x-api-key"], KEYS.ci);
  assert.match(result.stderr, /PASSED \(run run_0001\)/);
});

Deno.test("a sixth redirect in a row is refused after five were followed", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  const runs = runsPath(AGENTS.passing);
  let hop = 0;
  service.script({
    method: "GET",
    times: 6,
    answer: () => redirect(307, `${runs}/run_0001?hop=${++hop}`),
  });
  const result = await runInProcess(["--agent", AGENTS.passing], { env: env(service.url), time });
  assert.equal(result.code, 3, result.stderr);
  assert.deepEqual(
    service.requestsOf("GET").map((read) => read.path),
    [`${runs}/run_0001`, ...[1, 2, 3, 4, 5].map((n) => `${runs}/run_0001?hop=${n}`)],
  );
  assert.match(result.stderr, /more than 5 redirects; refused/);
});

// §1 run_id as one path segment, §6 printed as data

Deno.test("a hostile run_id stays one percent-encoded segment of the agent's runs, and prints as data", async () => {
  const hostile = [
    "../../admin",
    "a/b?x=1#f",
    "%2e%2e",
    "..%2F..%2Fadmin",
    `run_${"x".repeat(3_000)}`,
    "run\n::error::injected\r\x1b[31mred\x1b[0m",
    "ü/ ..\\..",
  ];
  const agents = hostile.map((runId) => ({ runId, agent: agent() }));
  await using service = await startFakeService({ agents: agents.map((a) => a.agent) });
  for (const { runId, agent: { id } } of agents) {
    service.script({
      method: "POST",
      path: id,
      answer: () => json(201, { run_id: runId, status: "queued" }),
    });
    service.script({
      method: "GET",
      path: id,
      times: 10,
      answer: () =>
        json(200, { run_id: runId, status: "completed", results: { gate: { passed: true } } }),
    });
  }
  const result = await runProgram(
    [...agents.flatMap(({ agent: { id } }) => ["--agent", id]), "--json"],
    { env: env(service.url) },
  );
  assert.equal(result.code, 0, result.stderr);
  for (const { runId, agent: { id } } of agents) {
    const reads = service.requestsOf("GET").filter((read) => read.path.includes(id));
    assert.equal(reads.length, 1, JSON.stringify(runId));
    assert.equal(reads[0]!.path, `/api/v1/agents/${id}/runs/${encodeURIComponent(runId)}`);
  }
  assert.equal(service.requests.length, 2 * hostile.length, "no request went anywhere else");
  assertSafeText(result.stderr, "stderr");
  assertSafeText(result.stdout, "stdout");
  const document = JSON.parse(result.stdout) as { agents: Array<{ run_id: string }> };
  const shown = document.agents.map((a) => a.run_id);
  assert.equal(shown[0], "../../admin");
  assert.equal(shown[1], "a/b?x=1#f");
  assert.equal(shown[5], "run ::error::injected red");
  assert.ok(shown.every((runId) => !hasControl(runId)), JSON.stringify(shown));
  assert.match(result.stderr, /triggered run run ::error::injected red/);
});

// §6 text from the service is data

/** A service whose every string is hostile: one agent fails, one is refused with 422. */
async function hostileService(): Promise<
  { service: FakeService; failing: string; refused: string }
> {
  const inject = "\n::error file=x,line=1::injected\r\n##[error]old\x1b[31m red\x1b]0;title\x07" +
    "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\\u2028::warning::sep\u0085\x9b31m";
  const failing = agent();
  const refused = agent();
  const service = await startFakeService({ agents: [failing, refused] });
  service.script({
    method: "POST",
    path: failing.id,
    answer: () =>
      json(201, {
        run_id: `run${inject}`,
        status: `queued${inject}`,
        url: `https://d.example/r${inject}`,
      }),
  });
  service.script({
    method: "GET",
    path: failing.id,
    answer: () => json(503, { error: { code: "busy", message: `busy${inject}` } }, RETRY_NOW),
  });
  service.script({
    method: "GET",
    path: failing.id,
    answer: () =>
      json(200, { status: `running${inject}`, url: `https://d.example/r${inject}` }, RETRY_NOW),
  });
  service.script({
    method: "GET",
    path: failing.id,
    times: 10,
    answer: () =>
      json(200, {
        status: `failed${inject}`,
        url: `::error::https://d.example/r${inject}`,
        results: { gate: { passed: false } },
      }),
  });
  service.script({
    method: "POST",
    path: refused.id,
    answer: () =>
      json(422, { error: { code: `quality_gate_missing${inject}`, message: `no gate${inject}` } }),
  });
  return { service, failing: failing.id, refused: refused.id };
}

xmlTest(
  "service text with newlines, workflow commands and escapes never reaches the log raw",
  async () => {
    const runs = await Promise.all([
      { github: false, json: false },
      { github: true, json: false },
      { github: true, json: true },
    ].map(async (mode) => {
      const { service, failing, refused } = await hostileService();
      try {
        const dir = await Deno.makeTempDir({ prefix: "service-ci-faults-" });
        const junit = `${dir}/gates.xml`;
        const extra = mode.github
          ? {
            GITHUB_ACTIONS: "true",
            GITHUB_OUTPUT: `${dir}/output`,
            GITHUB_STEP_SUMMARY: `${dir}/summary.md`,
          }
          : {};
        const result = await runProgram(
          [
            "--agent",
            failing,
            "--agent",
            refused,
            "--junit",
            junit,
            ...(mode.json ? ["--json"] : []),
          ],
          { env: env(service.url, extra) },
        );
        return { mode, dir, junit, result };
      } finally {
        await service.shutdown();
      }
    }));
    for (const { mode, dir, junit, result } of runs) {
      const what = JSON.stringify(mode);
      assert.equal(result.code, 3, `${what}: ${result.stderr}`);
      assert.match(result.stderr, /FAILED/);
      assert.match(result.stderr, /NOT CHECKED.*422.*no gate/);
      assertSafeText(result.stderr, `${what} stderr`, mode.github);
      assertSafeText(result.stdout, `${what} stdout`, mode.github);
      if (mode.github) {
        const commands = `${result.stdout}${result.stderr}`.split("\n").filter((line) =>
          line.startsWith("::")
        );
        assert.equal(
          commands.filter((line) => line.startsWith("::error ")).length,
          2,
          commands.join("\n"),
        );
        for (const file of ["output", "summary.md"]) {
          const text = await Deno.readTextFile(`${dir}/${file}`);
          for (const forbidden of ["\x1b", "\x07", "\r", "\x9b"]) {
            assert.ok(!text.includes(forbidden), `${what} ${file}: ${JSON.stringify(text)}`);
          }
        }
      } else {
        assert.ok(!`${result.stdout}${result.stderr}`.includes("::group::"));
      }
      if (mode.json) {
        const document = JSON.parse(result.stdout);
        for (const text of stringsOf(document)) {
          assert.ok(!hasControl(text), `${what} JSON string ${JSON.stringify(text)}`);
          assert.ok(!text.trim().startsWith("::"), `${what} JSON string ${JSON.stringify(text)}`);
        }
        assert.equal(document.agents[0].outcome, "failed");
        assert.equal(document.agents[1].outcome, "unchecked");
      }
      await assertValidJunit(junit);
      const xml = await Deno.readTextFile(junit);
      for (const forbidden of ["\x1b", "\x07", "\r", "\x9b"]) {
        assert.ok(!xml.includes(forbidden), `${what} JUnit: ${JSON.stringify(xml)}`);
      }
    }
  },
);

// §6 the key never appears

xmlTest(
  "a service that echoes the key back: it appears in no output, report or GitHub file",
  async () => {
    const unauthorized = agent();
    const forbidden = agent();
    const echoing = agent({ gate: { rule: "x", passes: false } });
    // The key split by an escape sequence is still the key once the escape is removed.
    const hidden = `${KEYS.ci.slice(0, 8)}\x1b[0m${KEYS.ci.slice(8)}`;
    const setUp = async () => {
      const service = await startFakeService({ agents: [unauthorized, forbidden, echoing] });
      service.script({
        method: "POST",
        path: unauthorized.id,
        answer: () => problem(401, "invalid_api_key", `the key ${KEYS.ci} is not valid`),
      });
      service.script({
        method: "POST",
        path: forbidden.id,
        answer: () => json(403, { detail: `key ${hidden} lacks CI access` }),
      });
      service.script({
        method: "POST",
        path: echoing.id,
        answer: () =>
          new Response(`internal error for X-API-Key: ${KEYS.ci}`, {
            status: 500,
            headers: RETRY_NOW,
          }),
      });
      service.script({
        method: "POST",
        path: echoing.id,
        answer: () =>
          json(201, {
            run_id: `run_${KEYS.ci}`,
            status: `queued for ${KEYS.ci}`,
            url: `https://d.example/runs/1?key=${encodeURIComponent(KEYS.ci)}`,
          }),
      });
      service.script({
        method: "GET",
        path: echoing.id,
        answer: () => json(500, { message: `retry with ${hidden}` }, RETRY_NOW),
      });
      service.script({
        method: "GET",
        path: echoing.id,
        times: 10,
        answer: () =>
          json(200, {
            run_id: `run_${KEYS.ci}`,
            status: `done ${hidden}`,
            url: `https://d.example/runs/1?key=${KEYS.ci}`,
            results: { gate: { passed: false } },
          }),
      });
      return service;
    };
    const runs = await Promise.all([[], ["--json"]].map(async (flags) => {
      const service = await setUp();
      try {
        const dir = await Deno.makeTempDir({ prefix: "service-ci-faults-" });
        const files = {
          junit: `${dir}/gates.xml`,
          output: `${dir}/output`,
          summary: `${dir}/summary.md`,
        };
        const result = await runProgram(
          [unauthorized.id, forbidden.id, echoing.id].flatMap((id) => ["--agent", id])
            .concat(["--junit", files.junit], flags),
          {
            env: env(service.url, {
              GITHUB_ACTIONS: "true",
              GITHUB_OUTPUT: files.output,
              GITHUB_STEP_SUMMARY: files.summary,
            }),
          },
        );
        const sent = service.requests.filter((request) => request.headers["x-api-key"] === KEYS.ci);
        return { flags, files, result, sent: sent.length };
      } finally {
        await service.shutdown();
      }
    }));
    for (const { flags, files, result, sent } of runs) {
      assert.equal(result.code, 3, result.stderr);
      assert.ok(sent >= 6, "the key was sent, so it was there to leak");
      assert.match(result.stderr, /401.*the key \*\*\* is not valid/);
      assert.match(result.stderr, /403.*key \*\*\* lacks CI access/);
      assert.match(result.stderr, /POST answered 500.*X-API-Key: \*\*\*/);
      assert.match(result.stderr, /triggered run run_\*\*\*/);
      assert.match(result.stderr, /FAILED \(run run_\*\*\*\)/);
      const texts: Array<[string, string]> = [
        ["stdout", result.stdout],
        ["stderr", result.stderr],
        ["--junit", await Deno.readTextFile(files.junit)],
        ["GITHUB_OUTPUT", await Deno.readTextFile(files.output)],
        ["GITHUB_STEP_SUMMARY", await Deno.readTextFile(files.summary)],
      ];
      for (const [what, text] of texts) {
        assert.ok(!text.includes(KEYS.ci), `${flags.join(" ")} ${what} shows the key:\n${text}`);
        assert.ok(
          !text.includes(KEYS.ci.slice(8)),
          `${flags.join(" ")} ${what} shows its tail:\n${text}`,
        );
      }
      if (flags.length > 0) JSON.parse(result.stdout);
      await assertValidJunit(files.junit);
    }
  },
);

// §5 interrupts

for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130]] as const) {
  Deno.test(`${signal} mid-poll exits ${code} within a second, naming the run and its link; --json says interrupted`, async () => {
    const slow = agent({ runMs: 60_000 });
    await using service = await startFakeService({ agents: [slow] });
    // SIGINT arrives while a read hangs, SIGTERM while the runner sleeps between polls.
    if (signal === "SIGINT") {
      service.script({
        method: "GET",
        path: slow.id,
        times: 2,
        answer: async (request, next) =>
          service.requestsOf("GET").length < 2 ? await next() : await hang(request.signal),
      });
    }
    const program = await startProgram(["--agent", slow.id, "--json"], { env: env(service.url) });
    try {
      await _within(program.waitForStderr("triggered run run_0001"), 6_000, "the trigger");
      const reads = signal === "SIGINT" ? 2 : 1;
      await _within(_until(() => service.requestsOf("GET").length >= reads), 6_000, "a read");
    } catch (error) {
      program.process.kill("SIGKILL");
      await program.finished();
      throw error;
    }
    const sent = performance.now();
    program.process.kill(signal);
    const result = await program.finished();
    const took = performance.now() - sent;
    assert.equal(result.code, code, result.stderr);
    assert.ok(took < 1_000, `exited ${took} ms after ${signal}`);
    const link = `${service.url}/dashboard/agents/${slow.id}/runs/run_0001`;
    assert.ok(
      result.stderr.includes(
        `run run_0001 of agent ${slow.id} is still going on the service: ${link}`,
      ),
      result.stderr,
    );
    assert.match(
      result.stderr,
      new RegExp(`INTERRUPTED \\(run run_0001\\): interrupted by ${signal}`),
    );
    const document = JSON.parse(result.stdout);
    assert.equal(document.exit_code, code);
    assert.equal(document.agents[0].outcome, "interrupted");
    assert.equal(document.agents[0].run_id, "run_0001");
    assert.equal(document.agents[0].url, link);
    assert.equal(document.agents[0].exit_code, code);
    assertNoStackTrace(result);
  });
}

function _within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function _until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

// §3 answers larger than the 1 MiB cap

function _largeStream(bytes: number): ReadableStream<Uint8Array> {
  const chunk = new TextEncoder().encode(" ".repeat(64 * 1024));
  let sent = 0;
  return new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"padding": "'));
    },
    pull(controller) {
      if (sent >= bytes) return controller.close();
      controller.enqueue(chunk);
      sent += chunk.byteLength;
    },
  });
}

Deno.test("an answer over 1 MiB, with or without Content-Length, fails cleanly: exit 3, one line", async (t) => {
  const big = 2 * 1024 * 1024;
  const cases: Array<[string, "GET" | "POST", () => Response]> = [
    [
      "a read with Content-Length",
      "GET",
      () => json(200, { status: "running", padding: " ".repeat(big) }),
    ],
    [
      "a chunked read",
      "GET",
      () => new Response(_largeStream(big), { headers: { "content-type": "application/json" } }),
    ],
    [
      "a chunked trigger",
      "POST",
      () =>
        new Response(_largeStream(big), {
          status: 201,
          headers: { "content-type": "application/json" },
        }),
    ],
  ];
  const outcomes = await Promise.all(cases.map(async ([name, method, answer]) => {
    const service = await startFakeService();
    try {
      service.script({ method, answer });
      const result = await runProgram(["--agent", AGENTS.passing], { env: env(service.url) });
      return { name, method, result, count: service.requestsOf(method).length };
    } finally {
      await service.shutdown();
    }
  }));
  for (const { name, method, result, count } of outcomes) {
    await t.step(name, () => {
      assert.equal(result.code, 3, result.stderr);
      assert.equal(count, 1, "not retried");
      const lines = result.stderr.split("\n").filter((line) => line.includes("larger than"));
      assert.ok(lines.length >= 1, result.stderr);
      assert.match(
        lines[0]!,
        new RegExp(`NOT CHECKED.*: answer 20[01] is larger than 1048576 bytes$`),
      );
      assert.ok(lines.every((line) => line.length < 300), lines.join("\n"));
      if (method === "GET") assert.match(result.stderr, /triggered run run_0001/);
      assertNoStackTrace(result);
    });
  }
});

// §3 404

Deno.test("a 404 on a run triggered moments ago is retried until it is readable", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  service.script({
    method: "GET",
    times: 2,
    answer: () => problem(404, "run_not_found", "no run run_0001"),
  });
  const result = await runInProcess(["--agent", AGENTS.failing], { env: env(service.url), time });
  assert.equal(result.code, 1, result.stderr);
  assert.equal(service.requestsOf("GET").length, 3);
  assert.equal(
    result.stderr.match(/run not visible yet \(404 right after the trigger\)/g)?.length,
    2,
  );
  assert.match(result.stderr, /FAILED \(run run_0001\)/);
});

Deno.test("a 404 on the trigger, or on a run attached with --run-id, is not retried: exit 3", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  service.script({
    method: "POST",
    answer: () =>
      json(404, { error: { code: "agent_not_found", message: "no such agent" } }, RETRY_NOW),
  });
  const trigger = await runInProcess(["--agent", AGENTS.passing], { env: env(service.url), time });
  assert.equal(trigger.code, 3, trigger.stderr);
  assert.equal(service.requests.length, 1);
  assert.match(
    trigger.stderr,
    /NOT CHECKED: POST answered 404.*no such agent \(fix: check the agent UUID/,
  );
  assert.doesNotMatch(trigger.stderr, /not visible yet/);

  const attached = await runInProcess(["--agent", AGENTS.passing, "--run-id", "run_9999"], {
    env: env(service.url),
    time,
  });
  assert.equal(attached.code, 3, attached.stderr);
  assert.equal(service.requestsOf("GET").length, 1);
  assert.match(
    attached.stderr,
    /GET answered 404.*no run run_9999.*fix: check the run id given with --run-id/,
  );
  assert.doesNotMatch(attached.stderr, /not visible yet/);
});

// §3 refusals are final

Deno.test("401, 403, 400 and 422 are never retried: one request each, exit 3, the message sanitized", async (t) => {
  const hostile = "\n::error::x \x1b[31mred\x1b[0m\r";
  const cases: Array<[string, "GET" | "POST", number, string, RegExp]> = [
    ["401 on a read", "GET", 401, "invalid_api_key", /fix: check that SERVICE_API_KEY/],
    ["403 on a read", "GET", 403, "ci_access_required", /fix: the API key needs CI access/],
    ["400 on a read", "GET", 400, "bad_request", /NOT CHECKED/],
    ["422 on a read", "GET", 422, "quality_gate_missing", /fix: the agent has no quality gate/],
    ["400 on the trigger", "POST", 400, "invalid_request", /NOT CHECKED/],
    ["403 on the trigger", "POST", 403, "ci_access_required", /fix: the API key needs CI access/],
  ];
  const outcomes = await Promise.all(cases.map(async ([name, method, status, code, hint]) => {
    const service = await startFakeService();
    try {
      service.script({
        method,
        times: 5,
        answer: () => json(status, { error: { code, message: `refused${hostile}` } }, RETRY_NOW),
      });
      const result = await runProgram(["--agent", AGENTS.passing], { env: env(service.url) });
      return { name, method, status, hint, result, count: service.requestsOf(method).length };
    } finally {
      await service.shutdown();
    }
  }));
  for (const { name, method, status, hint, result, count } of outcomes) {
    await t.step(name, () => {
      assert.equal(result.code, 3, result.stderr);
      assert.equal(count, 1, "not retried");
      assert.match(
        result.stderr,
        new RegExp(`${method} answered ${status}.*: refused ::error::x red`),
      );
      assert.match(result.stderr, hint);
      assert.doesNotMatch(result.stderr, /attempt \d of 10|not visible yet/);
      assertSafeText(result.stderr, "stderr");
      assertNoStackTrace(result);
    });
  }
});
