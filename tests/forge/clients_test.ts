/** The run's forge clients (issue 41): each is given the run's secrets with its own token. */

import assert from "node:assert/strict";
import { ForgeClients } from "../../src/forge/clients.ts";
import type { ForgeTarget } from "../../src/forge/forge.ts";
import { systemClock } from "../../src/platform/clock.ts";

const KEY = "sk_forge_clients_test_key_4f1c9a";
const TOKEN = "glpat_forge_clients_test_token_9b7a";

const GITLAB: ForgeTarget = {
  forge: "GitLab",
  apiUrl: "https://gitlab.example/api/v4",
  token: { value: TOKEN, variable: "SERVICE_GITLAB_TOKEN" },
  proxy: null,
  repository: "1234",
  commit: { sha: "4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c", of: "the commit built" },
  change: 7,
  ref: "feature",
  pipelineId: null,
  gate: { workflow: "ci", job: "gate" },
};

Deno.test("ForgeClients gives every forge client the run's secrets: GitLab's and Bitbucket's proxy mask them in each request body", async () => {
  const bodies: string[] = [];
  const fetchSpy: typeof fetch = async (_input, init) => {
    bodies.push(String(init?.body));
    return await Promise.resolve(Response.json({ id: 1 }, { status: 201 }));
  };
  const clients = new ForgeClients({
    userAgent: "service-ci/test",
    clock: systemClock,
    http: { makeFetch: () => fetchSpy, timeout: systemClock.timeout, secrets: [KEY] },
  });
  const link = new URL(`https://${KEY.toUpperCase()}.evil.example/r/1`).href;
  await clients.http(GITLAB).request("POST", "/projects/1234/statuses/4f1c2d3e", {
    target_url: link,
    description: `token ${TOKEN}`,
  });
  const bitbucket = {
    ...GITLAB,
    forge: "Bitbucket" as const,
    token: null,
    proxy: "http://localhost:29418",
  };
  await clients.http(bitbucket).request("PUT", "/reports/service-ci", { link });
  assert.deepEqual(bodies.map((body) => JSON.parse(body)), [
    { target_url: "https://***.evil.example/r/1", description: "token ***" },
    { link: "https://***.evil.example/r/1" },
  ]);
  clients.settle();
});
