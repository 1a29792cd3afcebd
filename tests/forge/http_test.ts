/**
 * The forge client's own rules that no writer shows alone (issue 41): every request body leaves
 * masked of the run's secrets, as every report file does.
 */

import assert from "node:assert/strict";
import { apiClient } from "../support/forge_http.ts";
import { systemClock } from "../../src/platform/clock.ts";

const TOKEN = "ghs_forge_http_test_token_4f1c9a";
const KEY = "sk_forge_http_test_key_9b7a1e2f";

Deno.test("ForgeHttp masks its secrets in every request body, in the spelling a URL parser gives a link's host", async () => {
  const bodies: string[] = [];
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (
    request,
  ) => {
    bodies.push(await request.text());
    return Response.json({ id: 1 }, { status: 201 });
  });
  const http = apiClient({
    baseUrl: `http://127.0.0.1:${server.addr.port}`,
    token: TOKEN,
    secrets: [KEY],
    fetch,
    clock: systemClock,
    timeout: systemClock.timeout,
  });
  // The service spelled the key in the link's host in capitals: parsing gives it in lower case.
  const link = new URL(`https://${KEY.toUpperCase()}.evil.example/r/1`).href;
  assert.ok(link.includes(KEY));
  await http.request("POST", "/repos/acme/widgets/check-runs", {
    details_url: link,
    output: { summary: `[dashboard](${link}) ${TOKEN}` },
  });
  assert.deepEqual(bodies.map((body) => JSON.parse(body)), [{
    details_url: "https://***.evil.example/r/1",
    output: { summary: "[dashboard](https://***.evil.example/r/1) ***" },
  }]);
});
