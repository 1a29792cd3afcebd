/**
 * End to end against docs/openapi.yaml: the gate, in process on virtual time, and the real entry
 * point once, drive the fake service through passing and failing gates, refusals with each error
 * body form, transient faults with `Retry-After`, redirects and a run without a verdict; every
 * request the runner sends and every answer the fake service gives is validated against the
 * description.
 */

import assert from "node:assert/strict";
import {
  AGENTS,
  defaultAgents,
  type FakeAgent,
  type FakeService,
  json,
  KEYS,
  problem,
  startFakeService,
} from "../support/fake_service.ts";
import { type Exchange, recordExchanges, SpecValidator } from "../support/openapi.ts";
import { FakeTime } from "../support/fake_time.ts";
import { runInProcess } from "../support/in_process.ts";
import { runProgram } from "../support/program.ts";

const validator = await SpecValidator.create();

/** A fresh active agent whose gate passes, finishing after 100 ms. */
function agent(overrides: Partial<FakeAgent> = {}): FakeAgent {
  const base = defaultAgents(100).find((a) => a.id === AGENTS.passing)!;
  return { ...base, id: crypto.randomUUID(), ...overrides };
}

function runsPath(agentId: string): string {
  return `/api/v1/agents/${agentId}/runs`;
}

/**
 * Starts a recording fake service, lets `setUp` add agents and scripted answers, runs the gate
 * for `agents` in process on virtual time (the service on the same clock), and returns its exit code and every exchange once all of them follow the spec.
 */
async function runChecked(
  agents: readonly string[],
  setUp: (service: FakeService) => void = () => {},
): Promise<{ code: number; stderr: string; exchanges: Exchange[] }> {
  const recorder = recordExchanges();
  const time = new FakeTime();
  await using service = await startFakeService({
    agents: defaultAgents(100),
    onExchange: recorder.onExchange,
    now: time.now,
  });
  setUp(service);
  const result = await runInProcess(agents.flatMap((id) => ["--agent", id]), {
    env: { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: service.url },
    time,
  });
  const exchanges = await recorder.exchanges();
  assert.equal(exchanges.length, service.requests.length, "every request was recorded");
  assert.deepEqual(validator.checkExchanges(exchanges), [], result.stderr);
  return { code: result.code, stderr: result.stderr, exchanges };
}

function statuses(exchanges: readonly Exchange[], method: string, agentId: string): number[] {
  return exchanges
    .filter(({ request }) => request.method === method && request.path.includes(agentId))
    .map(({ answer }) => answer.status);
}

Deno.test("a passing and a failing gate send and get only what docs/openapi.yaml describes", async () => {
  const { code, exchanges } = await runChecked([AGENTS.passing, AGENTS.failing]);
  assert.equal(code, 1);
  for (const id of [AGENTS.passing, AGENTS.failing]) {
    assert.deepEqual(statuses(exchanges, "POST", id), [201]);
    assert.ok(statuses(exchanges, "GET", id).every((status) => status === 200));
  }
});

Deno.test("refusals in each error body form of the spec follow it", async () => {
  const forms: Array<[string, () => Response]> = [
    ["message", () => json(400, { message: "ci_metadata.branch is too long" })],
    ["detail", () => json(422, { detail: [{ loc: ["body"], msg: "field required" }] })],
    ["error string", () => json(400, { error: "bad request" })],
    [
      "plain text",
      () =>
        new Response("forbidden by policy", {
          status: 403,
          headers: { "content-type": "text/plain" },
        }),
    ],
  ];
  const scripted = forms.map(([form, answer]) => ({ form, answer, agent: agent() }));
  const unknownAgent = crypto.randomUUID();
  const { code, exchanges, stderr } = await runChecked(
    [AGENTS.inactive, AGENTS.noGate, unknownAgent, ...scripted.map(({ agent }) => agent.id)],
    (service) => {
      for (const { agent, answer } of scripted) {
        service.setAgent(agent);
        service.script({ method: "POST", path: runsPath(agent.id), answer });
      }
    },
  );
  assert.equal(code, 3);
  assert.deepEqual(statuses(exchanges, "POST", AGENTS.inactive), [409]);
  assert.deepEqual(statuses(exchanges, "POST", AGENTS.noGate), [422]);
  assert.deepEqual(statuses(exchanges, "POST", unknownAgent), [404]);
  assert.deepEqual(scripted.map(({ agent }) => statuses(exchanges, "POST", agent.id)), [
    [400],
    [422],
    [400],
    [403],
  ]);
  for (
    const shown of [
      "ci_metadata.branch is too long",
      "field required",
      "bad request",
      "forbidden by policy",
    ]
  ) {
    assert.ok(stderr.includes(shown), `stderr shows ${shown}`);
  }
});

Deno.test("transient faults with Retry-After in seconds and as an HTTP date, a 202 and a young run's 404 follow the spec", async () => {
  const id = AGENTS.passing;
  const { code, exchanges } = await runChecked([id], (service) => {
    service.script({
      method: "POST",
      answer: () =>
        new Response(JSON.stringify({ error: { code: "rate_limited", message: "slow down" } }), {
          status: 429,
          headers: { "content-type": "application/json", "retry-after": "0" },
        }),
    });
    service.script({
      method: "POST",
      answer: () =>
        new Response("<!doctype html><title>502</title><p>Bad gateway</p>", {
          status: 502,
          headers: {
            "content-type": "text/html; charset=utf-8",
            "retry-after": new Date().toUTCString(),
          },
        }),
    });
    service.script({
      method: "POST",
      answer: async (_request, next) => {
        const created = await next();
        return new Response(created.body, { status: 202, headers: created.headers });
      },
    });
    service.script({
      method: "GET",
      answer: () => problem(404, "run_not_found", "no run run_0001 yet"),
    });
    service.script({ method: "GET", answer: () => problem(503, "unavailable", "try again") });
  });
  assert.equal(code, 0);
  assert.deepEqual(statuses(exchanges, "POST", id), [429, 502, 202]);
  assert.deepEqual(statuses(exchanges, "GET", id).slice(0, 3), [404, 503, 200]);
});

Deno.test("redirects the runner follows follow the spec", async () => {
  const id = AGENTS.passing;
  const { code, exchanges } = await runChecked([id], (service) => {
    service.script({
      method: "POST",
      answer: (request) => new Response(null, { status: 307, headers: { location: request.url } }),
    });
    service.script({
      method: "GET",
      answer: () => new Response(null, { status: 302, headers: { location: "run_0001" } }),
    });
    service.script({
      method: "GET",
      answer: (request) =>
        new Response(null, { status: 308, headers: { location: new URL(request.url).pathname } }),
    });
  });
  assert.equal(code, 0);
  assert.deepEqual(statuses(exchanges, "POST", id), [307, 201]);
  assert.deepEqual(statuses(exchanges, "GET", id).slice(0, 3), [302, 308, 200]);
});

Deno.test("a run that ends without a verdict follows the spec", async () => {
  const cancelled = agent({ finished: () => ({ status: "Cancelled" }) });
  const { code, exchanges } = await runChecked([cancelled.id], (service) => {
    service.setAgent(cancelled);
  });
  assert.equal(code, 3);
  const last = exchanges.at(-1)!;
  assert.equal(JSON.parse(last.answer.body).status, "Cancelled");
});

Deno.test("an answer that breaks the spec in an end-to-end run is caught", async () => {
  const recorder = recordExchanges();
  await using service = await startFakeService({ onExchange: recorder.onExchange });
  service.script({ method: "POST", answer: () => json(201, { id: "run_0001" }) });
  const result = await runProgram(["--agent", AGENTS.passing], {
    env: { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: service.url },
  });
  assert.equal(result.code, 3);
  assert.deepEqual(validator.checkExchanges(await recorder.exchanges()), [
    "triggerRun answer 201: / must have required property 'run_id'",
  ]);
});
