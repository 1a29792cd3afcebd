import assert from "node:assert/strict";
import { ForgeHttp } from "../../src/forge/http.ts";
import { HttpFailure, networkFailure } from "../../src/http/failure.ts";

const TOKEN = "ghs_failure_test_token_9c2e";

Deno.test("networkFailure() words a forge's request without an answer as ForgeHttp does, the token masked", async () => {
  const url = new URL("https://api.github.com/repos/acme/widgets/issues/1/comments");
  const errors: unknown[] = [
    new TypeError(`connection refused for ${TOKEN}`),
    new DOMException("Signal timed out.", "TimeoutError"),
    new TypeError("fetch failed", { cause: new Error("connection reset by peer") }),
    new Error("x".repeat(300)),
    "not an error",
  ];
  for (const proxy of [undefined, "localhost:29418"]) {
    for (const error of errors) {
      const http = new ForgeHttp({
        forge: "GitHub",
        baseUrl: "https://api.github.com",
        headers: {},
        secrets: [TOKEN],
        fetch: () => Promise.reject(error),
        timeout: undefined,
        clock: { now: () => 0, sleep: () => Promise.resolve() },
        ...(proxy === undefined ? {} : { proxy }),
      });
      const request = http.request("GET", url.pathname, undefined, { attempts: 1 });
      const failure = await request.then(() => null, (thrown: unknown) => thrown);
      assert.ok(failure instanceof HttpFailure, String(failure));
      const forge = proxy === undefined ? "GitHub" : undefined;
      const worded = networkFailure(error, [TOKEN], { forge });
      assert.deepEqual([worded.kind, worded.message], [failure.kind, failure.message]);
      assert.equal(worded.cause, error);
      assert.ok(!worded.message.includes(TOKEN), worded.message);
    }
  }
});
