/** End to end: many agents in one invocation share a bounded number of requests in flight. */

import assert from "node:assert/strict";
import { AGENTS, defaultAgents, KEYS, startFakeService } from "../support/fake_service.ts";
import { runProgram } from "../support/program.ts";

/** The client's bound on simultaneous requests (src/service/client.ts). */
const MAX_IN_FLIGHT = 8;

Deno.test(
  "100 agents: every gate is checked, and never more than 8 requests are in flight at once",
  async () => {
    const template = defaultAgents(200).find((agent) => agent.id === AGENTS.passing)!;
    await using service = await startFakeService({ agents: [] });
    const ids = Array.from({ length: 100 }, () => crypto.randomUUID());
    for (const id of ids) service.setAgent({ ...template, id });
    // Every answer takes 100 ms, so requests pile up unless the runner bounds them itself.
    service.script({
      times: Number.POSITIVE_INFINITY,
      answer: async (_request, next) => {
        await new Promise((resolve) => setTimeout(resolve, 100));
        return next();
      },
    });

    const result = await runProgram(ids.flatMap((id) => ["--agent", id]), {
      env: { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: service.url },
    });

    assert.equal(result.code, 0, result.stderr);
    assert.equal(service.runs.size, 100);
    assert.equal(service.requestsOf("POST").length, 100);
    assert.match(result.stderr, /exit 0: 100 gates, 100 passed/);
    assert.ok(
      service.maxInFlight <= MAX_IN_FLIGHT,
      `${service.maxInFlight} requests were in flight at once`,
    );
    // The bound is a bound, not a queue of one: the agents really run side by side.
    assert.ok(service.maxInFlight >= 4, `only ${service.maxInFlight} in flight at most`);
  },
);

Deno.test("one agent's failure does not stop or hide the others' verdicts", async () => {
  const agents = defaultAgents(200);
  const passing = agents.find((agent) => agent.id === AGENTS.passing)!;
  const failing = agents.find((agent) => agent.id === AGENTS.failing)!;
  await using service = await startFakeService({ agents: [] });
  const ids = Array.from({ length: 20 }, (_, index) => {
    const id = crypto.randomUUID();
    service.setAgent({ ...(index === 7 ? failing : passing), id });
    return id;
  });

  const result = await runProgram([...ids.flatMap((id) => ["--agent", id]), "--json"], {
    env: { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: service.url },
  });

  assert.equal(result.code, 1, result.stderr);
  const report = JSON.parse(result.stdout) as {
    agents: Array<{ agent_id: string; outcome: string }>;
  };
  assert.deepEqual(report.agents.map((agent) => agent.agent_id), ids);
  assert.deepEqual(
    report.agents.map((agent) => agent.outcome),
    ids.map((_, index) => index === 7 ? "failed" : "passed"),
  );
  assert.ok(service.maxInFlight <= MAX_IN_FLIGHT, `${service.maxInFlight} in flight`);
});
