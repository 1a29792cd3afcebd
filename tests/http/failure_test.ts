import assert from "node:assert/strict";
import { ForgeClients } from "../../src/forge/clients.ts";
import { apiClient } from "../support/forge_http.ts";
import { HttpFailure, networkFailure } from "../../src/http/failure.ts";

const TOKEN = "ghs_failure_test_token_9c2e";

Deno.test("a forge's request without an answer is one line: the API's names the forge and the error, the proxy's the error alone, the token masked", async () => {
  const errors: [unknown, string][] = [
    [new TypeError(`connection refused for ${TOKEN}`), "TypeError: connection refused for ***"],
    [new DOMException("Signal timed out.", "TimeoutError"), "TimeoutError: Signal timed out."],
    ["not an error", "not an error"],
  ];
  const clock = { now: () => 0, sleep: () => Promise.resolve() };
  for (const [error, words] of errors) {
    const fetch = () => Promise.reject(error);
    const api = apiClient({
      baseUrl: "https://api.github.com",
      token: TOKEN,
      fetch,
      timeout: () => new AbortController().signal,
      clock,
    });
    const proxied = new ForgeClients({
      userAgent: "service-ci/test",
      clock,
      http: {
        makeFetch: () => fetch,
        timeout: () => new AbortController().signal,
        secrets: [TOKEN],
      },
    }).http({
      forge: "Bitbucket",
      apiUrl: "http://api.bitbucket.org/2.0/repositories/acme/widgets/commit/abc",
      token: null,
      proxy: "http://localhost:29418",
      repository: "acme/widgets",
      commit: { sha: "abc", of: "the commit built" },
      change: null,
      ref: null,
      pipelineId: null,
      gate: { workflow: "", job: "" },
    });
    for (
      const [http, path, expected] of [
        [api, "/repos/acme/widgets/issues/1/comments", `GitHub could not be reached (${words})`],
        [proxied, "http://api.bitbucket.org/2.0/x", words.replace(/^\w+: /, "")],
      ] as const
    ) {
      const request = http.request("GET", path, undefined, { attempts: 1 });
      const failure = await request.then(() => null, (thrown: unknown) => thrown);
      assert.ok(failure instanceof HttpFailure, String(failure));
      assert.deepEqual([failure.kind, failure.message], ["network", expected]);
      assert.equal(failure.cause, error);
    }
  }
  const long = networkFailure(new Error("x".repeat(300)), [], { forge: "GitLab" });
  assert.ok(long.message.length < 240, long.message);
});
