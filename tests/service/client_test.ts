import assert from "node:assert/strict";
import { systemClock } from "../../src/platform/clock.ts";
import { FakeTime } from "../support/fake_time.ts";
import fc from "npm:fast-check@3.23.2";
import denoConfig from "../../deno.json" with { type: "json" };
import type { CiMetadata } from "../../src/ci/detect.ts";
import { ServiceClient, type ServiceClientOptions } from "../../src/service/client.ts";
import { userAgent, VERSION } from "../../src/config/version.ts";
import { anyString } from "../support/report_fixtures.ts";
import { REFUSED_PORT, REFUSED_URL } from "../support/refused_address.ts";
import { type FailureKind, HttpFailure } from "../../src/http/failure.ts";
import { MAX_BODY_BYTES, MAX_REDIRECTS } from "../../src/http/fetch.ts";

const AGENT = "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10";
const KEY = "sk_test_ci_4f1c9a7e2b3d";
const IDEMPOTENCY_KEY = "7d444840-9dc0-4c4f-8f5a-3b1d2e6f9a10";
const BASE = "https://service.example/eval/";
const RUNS_PATH = `/eval/api/v1/agents/${AGENT}/runs`;
// Sun, 06 Nov 1994 08:49:37 GMT
const NOW = Date.UTC(1994, 10, 6, 8, 49, 37);
const METADATA: CiMetadata = {
  commit_sha: "4f1c9a7e2b3d4f1c9a7e2b3d4f1c9a7e2b3d4f1c",
  branch: "feature/login",
  pull_request_number: 42,
  repository: "acme/widgets",
  actor: "octocat",
  provider: "github_actions",
  build_url: "https://github.com/acme/widgets/actions/runs/1",
};
const OPEN = new AbortController().signal;
// Built once: the first string arbitrary over all of Unicode takes a second to set up.
const runIds: fc.Arbitrary<string> = fc.oneof(fc.string(), anyString(30));

/** One request the injected fetch received. */
interface Call {
  readonly url: URL;
  readonly method: string;
  readonly headers: Headers;
  readonly body: string | undefined;
  readonly redirect: RequestRedirect | undefined;
  readonly signal: AbortSignal;
}

/** A fetch that records each request and answers it with `answer`. */
function fakeFetch(answer: (call: Call, index: number) => Response | Promise<Response>): {
  fetch: typeof fetch;
  calls: Call[];
} {
  const calls: Call[] = [];
  const fake = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const call: Call = {
      url: new URL(input instanceof Request ? input.url : String(input)),
      method: init?.method ?? "GET",
      headers: new Headers(init?.headers),
      body: typeof init?.body === "string" ? init.body : undefined,
      redirect: init?.redirect,
      signal: init?.signal ?? OPEN,
    };
    calls.push(call);
    const index = calls.length - 1;
    return Promise.resolve().then(() => answer(call, index));
  };
  return { fetch: fake as typeof fetch, calls };
}

function makeClient(
  fetch: typeof globalThis.fetch,
  options: Partial<ServiceClientOptions> = {},
): ServiceClient {
  return new ServiceClient({
    baseUrl: new URL(BASE),
    apiKey: KEY,
    userAgent: userAgent(),
    requestTimeoutMs: 5_000,
    fetch,
    clock: { now: () => NOW },
    timeout: systemClock.timeout,
    ...options,
  });
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

function redirect(status: number, location: string | null): Response {
  return new Response(null, { status, headers: location === null ? {} : { location } });
}

/** A fetch answer that never comes, rejecting as fetch does when its signal aborts. */
function hang(call: Call): Promise<Response> {
  return new Promise((_, reject) => {
    call.signal.throwIfAborted();
    call.signal.addEventListener("abort", () => reject(call.signal.reason), { once: true });
  });
}

async function apiError(promise: Promise<unknown>): Promise<HttpFailure> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof HttpFailure, `not an HttpFailure: ${error}`);
    return error;
  }
  assert.fail("expected an HttpFailure");
}

function assertOneLine(text: string): void {
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    assert.ok(unit >= 0x20 && (unit < 0x7f || unit > 0x9f), `control in ${JSON.stringify(text)}`);
  }
  assert.ok(!text.includes("\u2028") && !text.includes("\u2029"), JSON.stringify(text));
}

function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** A loopback service for the tests that need the real fetch; use with `await using`. */
function serve(handler: (request: Request, body: string) => Response | Promise<Response>) {
  const requests: Array<{ method: string; url: string; headers: Headers; body: string }> = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const body = await request.text();
      requests.push({ method: request.method, url: request.url, headers: request.headers, body });
      return await handler(request, body);
    },
  );
  return {
    url: new URL(`http://127.0.0.1:${server.addr.port}/`),
    requests,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

// Addresses

Deno.test("runsUrl() keeps the base path prefix and ignores a trailing slash, query and hash", () => {
  for (const base of [BASE, "https://service.example/eval", "https://service.example/eval//"]) {
    const client = makeClient(fetch, { baseUrl: new URL(base) });
    assert.equal(client.runsUrl(AGENT).href, `https://service.example${RUNS_PATH}`);
  }
  const bare = makeClient(fetch, { baseUrl: new URL("https://service.example?x=1#y") });
  assert.equal(bare.runsUrl(AGENT).href, `https://service.example/api/v1/agents/${AGENT}/runs`);
});

Deno.test("runUrl() percent-encodes a run id as one path segment", () => {
  const client = makeClient(fetch);
  const cases: Array<[string, string]> = [
    ["run_1", "run_1"],
    ["a/b", "a%2Fb"],
    ["../../admin", "..%2F..%2Fadmin"],
    ["a?b#c", "a%3Fb%23c"],
    ["%2e%2e", "%252e%252e"],
    ["a b", "a%20b"],
    ["a\\b", "a%5Cb"],
    ["ü", "%C3%BC"],
    ["...", "..."],
  ];
  for (const [runId, segment] of cases) {
    const url = client.runUrl(AGENT, runId);
    assert.equal(url.pathname, `${RUNS_PATH}/${segment}`, runId);
    assert.equal(url.search, "");
    assert.equal(url.hash, "");
  }
});

Deno.test("runUrl() refuses a run id that cannot be one path segment", () => {
  const client = makeClient(fetch);
  for (const runId of ["", ".", "..", "\ud800", "run\udfff"]) {
    assert.throws(
      () => client.runUrl(AGENT, runId),
      (error) => error instanceof HttpFailure && error.kind === "unusable",
      JSON.stringify(runId),
    );
  }
});

Deno.test("runUrl() keeps any run id inside one segment, or refuses it as unusable", () => {
  const client = makeClient(fetch);
  fc.assert(
    fc.property(runIds, (runId) => {
      let url: URL;
      try {
        url = client.runUrl(AGENT, runId);
      } catch (error) {
        assert.ok(error instanceof HttpFailure && error.kind === "unusable", `${error}`);
        assert.ok(["", ".", ".."].includes(runId) || !runId.isWellFormed(), runId);
        return;
      }
      assert.ok(url.pathname.startsWith(`${RUNS_PATH}/`), url.pathname);
      const segment = url.pathname.slice(RUNS_PATH.length + 1);
      assert.ok(!segment.includes("/"), segment);
      assert.equal(decodeURIComponent(segment), runId);
      assert.equal(url.search + url.hash, "");
      assert.equal(url.origin, "https://service.example");
    }),
    { numRuns: 2000 },
  );
});

Deno.test("readRun() with an unusable run id fails as unusable without sending anything", async () => {
  const { fetch, calls } = fakeFetch(() => json(200, {}));
  const client = makeClient(fetch);
  for (const runId of ["..", "\ud800"]) {
    const error = await apiError((async () => await client.readRun(AGENT, runId, OPEN))());
    assert.equal(error.kind, "unusable");
  }
  assert.equal(calls.length, 0);
});

// Headers and body

Deno.test("the User-Agent names service-ci's version, os and arch", () => {
  assert.equal(VERSION, denoConfig.version);
  assert.equal(userAgent(), `service-ci/${VERSION} (${Deno.build.os}; ${Deno.build.arch})`);
});

Deno.test("every request carries the key, Accept and User-Agent; only the trigger its body headers", async () => {
  const { fetch, calls } = fakeFetch((call) =>
    call.method === "POST"
      ? json(201, { run_id: "run_1", status: "queued" })
      : json(200, { status: "running" })
  );
  const client = makeClient(fetch);
  await client.trigger(AGENT, METADATA, IDEMPOTENCY_KEY, OPEN);
  await client.readRun(AGENT, "run_1", OPEN);
  const [post, get] = calls;
  assert.ok(post && get);
  for (const call of [post, get]) {
    assert.equal(call.headers.get("x-api-key"), KEY);
    assert.equal(call.headers.get("accept"), "application/json");
    assert.equal(call.headers.get("user-agent"), userAgent());
    assert.equal(call.redirect, "manual");
    assert.ok(!call.url.href.includes(KEY));
  }
  assert.equal(post.method, "POST");
  assert.equal(post.url.href, `https://service.example${RUNS_PATH}`);
  assert.equal(post.headers.get("content-type"), "application/json");
  assert.equal(post.headers.get("idempotency-key"), IDEMPOTENCY_KEY);
  assert.deepEqual(JSON.parse(post.body ?? ""), { ci_metadata: METADATA });
  assert.deepEqual([...post.headers.keys()].sort(), [
    "accept",
    "content-type",
    "idempotency-key",
    "user-agent",
    "x-api-key",
  ]);
  assert.equal(get.method, "GET");
  assert.equal(get.url.href, `https://service.example${RUNS_PATH}/run_1`);
  assert.equal(get.body, undefined);
  assert.deepEqual([...get.headers.keys()].sort(), ["accept", "user-agent", "x-api-key"]);
});

Deno.test("the headers and the encoded run id reach a real service as sent", async () => {
  await using service = serve((request) =>
    request.method === "POST"
      ? json(201, { run_id: "a/b ..", url: "https://dash.example/r/1" })
      : json(200, { status: "running" })
  );
  const client = makeClient(fetch, { baseUrl: new URL("eval", service.url) });
  const answer = await client.trigger(AGENT, METADATA, IDEMPOTENCY_KEY, OPEN);
  assert.equal(answer.runId, "a/b ..");
  assert.equal(answer.status, 201);
  await client.readRun(AGENT, answer.runId, OPEN);
  const [post, get] = service.requests;
  assert.ok(post && get);
  assert.equal(post.headers.get("x-api-key"), KEY);
  assert.equal(post.headers.get("user-agent"), userAgent());
  assert.equal(post.headers.get("accept"), "application/json");
  assert.equal(post.headers.get("content-type"), "application/json");
  assert.equal(post.headers.get("idempotency-key"), IDEMPOTENCY_KEY);
  assert.deepEqual(JSON.parse(post.body), { ci_metadata: METADATA });
  assert.equal(new URL(get.url).pathname, `${RUNS_PATH}/a%2Fb%20..`);
  assert.equal(get.headers.get("x-api-key"), KEY);
  assert.equal(get.headers.get("user-agent"), userAgent());
  assert.equal(get.headers.get("idempotency-key"), null);
  assert.equal(get.headers.get("content-type"), null);
});

// Answers

Deno.test("trigger() returns the run id, and reads 201 and 202 alike", async () => {
  for (const status of [201, 202, 200]) {
    const { fetch } = fakeFetch(() =>
      json(status, { run_id: "run_7", status: "queued", url: "https://dash.example/r/7" }, {
        "retry-after": "3",
      })
    );
    const answer = await makeClient(fetch).trigger(AGENT, METADATA, IDEMPOTENCY_KEY, OPEN);
    assert.equal(answer.runId, "run_7");
    assert.equal(answer.status, status);
    assert.equal(answer.retryAfterMs, 3_000);
    assert.equal(answer.document.url, "https://dash.example/r/7");
  }
});

Deno.test("trigger() without a usable run_id is unusable, not transient", async () => {
  for (const runId of [undefined, null, 42, "", ".", "..", ["run_1"], { id: "run_1" }, true]) {
    const { fetch, calls } = fakeFetch(() => json(201, { run_id: runId, status: "queued" }));
    const error = await apiError(makeClient(fetch).trigger(AGENT, METADATA, IDEMPOTENCY_KEY, OPEN));
    assert.equal(error.kind, "unusable", JSON.stringify(runId));
    assert.equal(error.status, 201);
    assert.match(error.message, /run_id/);
    assertOneLine(error.message);
    assert.equal(calls.length, 1);
  }
});

Deno.test("each HTTP status becomes the error kind contract §3 gives it", async () => {
  const expected: Array<[number, FailureKind]> = [
    [400, "refused"],
    [401, "auth"],
    [403, "auth"],
    [404, "not_found"],
    [405, "refused"],
    [408, "transient"],
    [409, "refused"],
    [410, "refused"],
    [418, "refused"],
    [422, "refused"],
    [425, "transient"],
    [429, "transient"],
    [451, "refused"],
    [500, "transient"],
    [502, "transient"],
    [503, "transient"],
    [504, "transient"],
    [599, "transient"],
  ];
  for (const [status, kind] of expected) {
    for (const method of ["GET", "POST"] as const) {
      const { fetch, calls } = fakeFetch(() =>
        json(status, { error: { code: "x", message: "m" } })
      );
      const client = makeClient(fetch);
      const error = await apiError(
        method === "GET"
          ? client.readRun(AGENT, "run_1", OPEN)
          : client.trigger(AGENT, METADATA, IDEMPOTENCY_KEY, OPEN),
      );
      assert.equal(error.kind, kind, `${method} ${status}`);
      assert.equal(error.status, status);
      assert.match(error.message, new RegExp(`^${method} answered ${status}`));
      assert.equal(calls.length, 1, "one attempt: retrying is the poller's job");
    }
  }
});

Deno.test("an error answer's Retry-After is kept, in seconds or as an HTTP date", async () => {
  const cases: Array<[string, number | undefined]> = [
    ["7", 7_000],
    ["Sun, 06 Nov 1994 08:49:49 GMT", 12_000],
    ["soon", undefined],
    ["2099 GMT", undefined],
  ];
  for (const [header, ms] of cases) {
    const { fetch } = fakeFetch(() =>
      json(429, { message: "slow down" }, { "retry-after": header })
    );
    const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
    assert.equal(error.kind, "transient");
    assert.equal(error.retryAfterMs, ms, header);
  }
  const { fetch } = fakeFetch(() => json(200, { status: "running" }, { "retry-after": "4" }));
  assert.equal((await makeClient(fetch).readRun(AGENT, "run_1", OPEN)).retryAfterMs, 4_000);
});

Deno.test("an error body is read from error.message, message, detail or plain text, on one line", async () => {
  const cases: Array<[BodyInit, string, string | undefined]> = [
    [
      JSON.stringify({ error: { code: "agent_inactive", message: "Agent is inactive" } }),
      "Agent is inactive",
      "agent_inactive",
    ],
    [JSON.stringify({ error: "quality gate missing" }), "quality gate missing", undefined],
    [JSON.stringify({ message: "no quality gate" }), "no quality gate", undefined],
    [JSON.stringify({ detail: "Not authenticated" }), "Not authenticated", undefined],
    [JSON.stringify({ detail: [{ msg: "bad" }] }), '[{"msg":"bad"}]', undefined],
    ["upstream\r\nfailed\x1b[31m red\x1b[0m", "upstream failed red", undefined],
    ["::error::injected", '"::error::injected"', undefined],
  ];
  for (const [body, message, code] of cases) {
    const { fetch } = fakeFetch(() => new Response(body, { status: 409 }));
    const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
    assert.equal(error.message, `GET answered 409: ${message}`);
    assert.equal(error.code, code);
    assertOneLine(error.message);
  }
  const { fetch } = fakeFetch(() => new Response("", { status: 403 }));
  assert.equal(
    (await apiError(makeClient(fetch).readRun(AGENT, "r", OPEN))).message,
    "GET answered 403",
  );
});

Deno.test("an HTML error page is described, not quoted: by its type, or by how it starts", async () => {
  const nginx =
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n";
  const pages: Array<[string, Record<string, string>]> = [
    [nginx, { "content-type": "text/html" }],
    [nginx, {}],
    ["<!DOCTYPE html><p>Sign in to continue</p>", { "content-type": "text/plain" }],
    ["Service unavailable", { "content-type": "text/html; charset=utf-8" }],
  ];
  for (const [body, headers] of pages) {
    const { fetch } = fakeFetch(() =>
      new Response(body, { status: 502, statusText: "Bad Gateway", headers })
    );
    const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
    assert.equal(
      error.message,
      "GET answered 502 Bad Gateway (an HTML page: a proxy in front of the service?)",
    );
    assert.equal(error.kind, "transient");
  }
  // Plain text is the service's words; an empty page says nothing.
  const cases: Array<[string, string, string]> = [
    ["upstream <b> failed", "text/plain", ": upstream <b> failed"],
    ["", "text/html", ""],
  ];
  for (const [body, type, shown] of cases) {
    const { fetch } = fakeFetch(() =>
      new Response(body, { status: 502, headers: { "content-type": type } })
    );
    const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
    assert.equal(error.message, `GET answered 502${shown}`);
  }
});

Deno.test("a key the service echoes back is masked, even split by a control character", async () => {
  const split = `${KEY.slice(0, 5)}\x1b${KEY.slice(5, 9)}\u202e${KEY.slice(9)}`;
  for (const body of [`bad key ${KEY}`, `bad key ${split}`, JSON.stringify({ detail: split })]) {
    const { fetch } = fakeFetch(() => new Response(body, { status: 401 }));
    const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
    assert.equal(error.kind, "auth");
    assert.ok(!error.message.includes(KEY), error.message);
    assert.match(error.message, /\*\*\*/);
  }
});

Deno.test("a 2xx answer that is not a JSON object is transient, never a verdict", async () => {
  const bodies: Array<[string, string | undefined]> = [
    ["<html><body>Bad gateway</body></html>", "text/html"],
    ['{"status": "completed", "results": {"gate": {"passed": tr', "application/json"],
    ['[{"status": "completed"}]', "application/json"],
    ['"completed"', "application/json"],
    ["true", "application/json"],
    ["42", "application/json"],
    ["null", "application/json"],
    ["", "application/json"],
    ["", undefined],
    ["\ufeff{", "application/json"],
  ];
  for (const [body, type] of bodies) {
    for (const method of ["GET", "POST"] as const) {
      const { fetch } = fakeFetch(() =>
        new Response(body, {
          status: method === "POST" ? 201 : 200,
          headers: type === undefined ? {} : { "content-type": type, "retry-after": "2" },
        })
      );
      const client = makeClient(fetch);
      const error = await apiError(
        method === "GET"
          ? client.readRun(AGENT, "run_1", OPEN)
          : client.trigger(AGENT, METADATA, IDEMPOTENCY_KEY, OPEN),
      );
      assert.equal(error.kind, "transient", `${method} ${JSON.stringify(body)}`);
      assert.match(error.message, /not a JSON object/);
      assert.equal(error.retryAfterMs, type === undefined ? undefined : 2_000);
      assertOneLine(error.message);
    }
  }
});

Deno.test("a network error is transient and says what failed, without the key", async () => {
  const split = `${KEY.slice(0, 5)}\x1b${KEY.slice(5)}`;
  const causes = [
    new TypeError("error sending request for url (https://service.example/x): connection reset"),
    new TypeError("fetch failed", { cause: new Error(`proxy said: ${KEY}`) }),
    new TypeError(`connection closed\nby ${split}`),
  ];
  for (const cause of causes) {
    const { fetch } = fakeFetch(() => Promise.reject(cause));
    const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
    assert.equal(error.kind, "transient");
    assert.match(error.message, /^network error: /);
    assert.equal(error.cause, cause);
    assert.ok(!error.message.includes(KEY), error.message);
    assert.ok(!error.message.includes("service.example/x"), error.message);
    assertOneLine(error.message);
  }
});

Deno.test("a certificate the client does not trust is a tls error, not retried", async () => {
  // Deno 2.9.6's words, without the HTTP stack's layers.
  const cause = new TypeError("fetch failed", {
    cause: new Error(
      "error sending request for url (https://service.example/x): client error (Connect): invalid peer certificate: UnknownIssuer",
    ),
  });
  const { fetch } = fakeFetch(() => Promise.reject(cause));
  const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
  assert.equal(error.kind, "tls");
  assert.equal(
    error.message,
    "the TLS certificate of service.example was refused: invalid peer certificate: UnknownIssuer",
  );
});

Deno.test("an https:// address whose port answers in plain HTTP says so without rustls' words", async () => {
  const cause = new TypeError("fetch failed", {
    cause: new Error(
      "error sending request for url (https://service.example/x): client error (Connect): received corrupt message of type InvalidContentType",
    ),
  });
  const { fetch } = fakeFetch(() => Promise.reject(cause));
  const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
  assert.equal(error.kind, "plain_http");
  assert.equal(
    error.message,
    "TLS handshake with service.example failed: the port answers in plain HTTP",
  );
});

Deno.test("a certificate issued for another name says so, names the names, and is not retried", async () => {
  const causes = [
    new TypeError("fetch failed", {
      cause: new Error(
        'error sending request for url (https://service.example/x): client error (Connect): invalid peer certificate: certificate not valid for name "service.example"; certificate is only valid for DnsName("other.example")',
      ),
    }),
    new TypeError("invalid peer certificate: NotValidForName"),
  ];
  for (const cause of causes) {
    const { fetch } = fakeFetch(() => Promise.reject(cause));
    const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
    assert.equal(error.kind, "tls");
    assert.equal(error.code, "certificate_name_mismatch");
    assert.match(
      error.message,
      /^the TLS certificate of service\.example is not valid for the name service\.example/,
    );
    assertOneLine(error.message);
  }
  const { fetch } = fakeFetch(() => Promise.reject(causes[0]));
  const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
  assert.match(error.message, /\(it names other\.example\)$/);
  // Deno 2.9.6's words for a certificate naming several hosts and an IP address.
  const several = fakeFetch(() =>
    Promise.reject(
      new TypeError("fetch failed", {
        cause: new Error(
          'error sending request for url (https://service.example/x): client error (Connect): invalid peer certificate: certificate not valid for name "service.example"; certificate is only valid for DnsName("other.example"), DnsName("localhost") or IpAddress(127.0.0.1)',
        ),
      }),
    )
  );
  assert.equal(
    (await apiError(makeClient(several.fetch).readRun(AGENT, "run_1", OPEN))).message,
    "the TLS certificate of service.example is not valid for the name service.example (it names other.example, localhost or 127.0.0.1)",
  );
});

Deno.test("a refused connection names the address, where it came from and what to check, and is marked unreachable", async () => {
  const client = makeClient(fetch, {
    baseUrl: new URL(REFUSED_URL),
    baseUrlSource: "SERVICE_BASE_URL",
  });
  const error = await apiError(client.readRun(AGENT, "run_1", OPEN));
  assert.equal(error.kind, "transient");
  assert.equal(error.unreachable, "refused");
  assert.equal(
    error.message,
    `connection refused by 127.0.0.1:${REFUSED_PORT} (from SERVICE_BASE_URL): check the address and its port, that the service is up, and any proxy in HTTP_PROXY/ALL_PROXY`,
  );
  assertOneLine(error.message);
});

Deno.test("a refused connection is recognized in the words of Linux, macOS and Windows", async () => {
  for (
    const text of [
      "client error (Connect): tcp connect error: Connection refused (os error 111)",
      "client error (Connect): tcp connect error: Connection refused (os error 61)",
      "client error (Connect): tcp connect error: No connection could be made because the target machine actively refused it. (os error 10061)",
    ]
  ) {
    const { fetch } = fakeFetch(() =>
      Promise.reject(new TypeError("fetch failed", { cause: new Error(text) }))
    );
    const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
    assert.equal(error.unreachable, "refused", text);
    assert.equal(
      error.message,
      "connection refused by service.example: check the address and its port, that the service is up, and any proxy in HTTPS_PROXY/ALL_PROXY",
    );
  }
});

Deno.test("a refused connection after the service has answered is an outage: not marked unreachable", async () => {
  let up = true;
  const { fetch } = fakeFetch(() =>
    up ? Promise.resolve(json(200, { run_id: "run_1", status: "running" })) : Promise.reject(
      new TypeError("fetch failed", {
        cause: new Error(
          "client error (Connect): tcp connect error: Connection refused (os error 111)",
        ),
      }),
    )
  );
  const client = makeClient(fetch);
  await client.readRun(AGENT, "run_1", OPEN);
  up = false;
  const error = await apiError(client.readRun(AGENT, "run_1", OPEN));
  assert.equal(error.kind, "transient");
  assert.equal(error.unreachable, undefined);
  // Not "check the address": it was right a moment ago.
  assert.equal(
    error.message,
    "connection refused by service.example, which answered before: check that the service (and any proxy in HTTPS_PROXY/ALL_PROXY) is up",
  );
});

Deno.test("a host name that does not resolve says so plainly and is marked unreachable", async () => {
  for (
    const text of [
      "client error (Connect): dns error: failed to lookup address information: Name or service not known",
      "client error (Connect): dns error: failed to lookup address information: nodename nor servname provided, or not known",
      "client error (Connect): dns error: No such host is known. (os error 11001)",
    ]
  ) {
    const { fetch } = fakeFetch(() =>
      Promise.reject(new TypeError("fetch failed", { cause: new Error(text) }))
    );
    const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
    assert.equal(error.kind, "transient");
    assert.equal(error.unreachable, "dns");
    assert.equal(
      error.message,
      "could not resolve host service.example: check the address, this machine's DNS, and any proxy in HTTPS_PROXY/ALL_PROXY",
    );
  }
});

Deno.test("this Deno's own words for a name that does not resolve are recognized", async () => {
  // .invalid never resolves (RFC 6761).
  const client = makeClient(fetch, {
    baseUrl: new URL("https://service.invalid:8443"),
    baseUrlSource: "--base-url",
  });
  const error = await apiError(client.readRun(AGENT, "run_1", OPEN));
  assert.equal(error.unreachable, "dns");
  assert.equal(
    error.message,
    "could not resolve host service.invalid (from --base-url): check the address, this machine's DNS, and any proxy in HTTPS_PROXY/ALL_PROXY",
  );
});

Deno.test("a name that stops resolving after the service has answered is not marked unreachable", async () => {
  let up = true;
  const { fetch } = fakeFetch(() =>
    up ? Promise.resolve(json(200, { run_id: "run_1", status: "running" })) : Promise.reject(
      new TypeError("fetch failed", {
        cause: new Error("client error (Connect): dns error: failed to lookup address information"),
      }),
    )
  );
  const client = makeClient(fetch);
  await client.readRun(AGENT, "run_1", OPEN);
  up = false;
  const error = await apiError(client.readRun(AGENT, "run_1", OPEN));
  assert.equal(error.kind, "transient");
  assert.equal(error.unreachable, undefined);
  assert.equal(
    error.message,
    "could not resolve host service.example, which resolved before: check this machine's DNS (and any proxy in HTTPS_PROXY/ALL_PROXY)",
  );
});

// The 1 MiB cap

function endlessStream(): {
  stream: ReadableStream<Uint8Array>;
  pulled: () => number;
  cancelled: () => boolean;
} {
  let pulls = 0;
  let cancelled = false;
  const chunk = new TextEncoder().encode(" ".repeat(64 * 1024));
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"status": "running", "padding": "'));
    },
    pull(controller) {
      pulls++;
      controller.enqueue(chunk);
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, pulled: () => pulls, cancelled: () => cancelled };
}

Deno.test("an answer of exactly 1 MiB is read", async () => {
  const head = '{"status": "running", "padding": "';
  const body = `${head}${" ".repeat(MAX_BODY_BYTES - head.length - 2)}"}`;
  assert.equal(new TextEncoder().encode(body).byteLength, MAX_BODY_BYTES);
  const { fetch } = fakeFetch(() =>
    new Response(body, { status: 200, headers: { "content-length": String(MAX_BODY_BYTES) } })
  );
  const answer = await makeClient(fetch).readRun(AGENT, "run_1", OPEN);
  assert.equal(answer.document.status, "running");
});

Deno.test("an answer over 1 MiB is unusable, with or without Content-Length", async () => {
  const big = `{"status": "running", "padding": "${" ".repeat(MAX_BODY_BYTES)}"}`;
  const answers: Array<[string, () => Response]> = [
    [
      "declared",
      () => new Response(big, { status: 200, headers: { "content-length": String(big.length) } }),
    ],
    ["undeclared", () => new Response(big, { status: 200 })],
    [
      "declared too small",
      () => new Response(big, { status: 200, headers: { "content-length": "100" } }),
    ],
    ["endless", () => new Response(endlessStream().stream, { status: 200 })],
  ];
  for (const [name, answer] of answers) {
    for (const method of ["GET", "POST"] as const) {
      const { fetch } = fakeFetch(answer);
      const client = makeClient(fetch);
      const error = await apiError(
        method === "GET"
          ? client.readRun(AGENT, "run_1", OPEN)
          : client.trigger(AGENT, METADATA, IDEMPOTENCY_KEY, OPEN),
      );
      assert.equal(error.kind, "unusable", `${name} ${method}`);
      assert.equal(error.message, `answer 200 is larger than ${MAX_BODY_BYTES} bytes`);
    }
  }
});

Deno.test("an endless answer is cancelled soon after 1 MiB", async () => {
  const endless = endlessStream();
  const { fetch } = fakeFetch(() => new Response(endless.stream, { status: 200 }));
  const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
  assert.equal(error.kind, "unusable");
  assert.ok(endless.cancelled(), "the stream is cancelled");
  assert.ok(endless.pulled() <= MAX_BODY_BYTES / (64 * 1024) + 2, `${endless.pulled()} pulls`);
});

Deno.test("a declared Content-Length over 1 MiB is refused before the body is read", async () => {
  const endless = endlessStream();
  const { fetch } = fakeFetch(() =>
    new Response(endless.stream, {
      status: 200,
      headers: { "content-length": String(MAX_BODY_BYTES + 1) },
    })
  );
  const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
  assert.equal(error.kind, "unusable");
  assert.ok(endless.cancelled());
  assert.ok(endless.pulled() <= 1, `${endless.pulled()} pulls`);
});

Deno.test("an oversized error answer is still classified by its status", async () => {
  const cases: Array<[number, FailureKind]> = [
    [503, "transient"],
    [429, "transient"],
    [
      401,
      "auth",
    ],
    [404, "not_found"],
    [409, "refused"],
  ];
  for (const [status, kind] of cases) {
    for (const declared of [true, false]) {
      const endless = endlessStream();
      const { fetch } = fakeFetch(() =>
        new Response(endless.stream, {
          status,
          headers: declared ? { "content-length": String(2 * MAX_BODY_BYTES) } : {},
        })
      );
      const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
      assert.equal(error.kind, kind, `${status}, declared ${declared}`);
      assert.equal(error.status, status);
      assert.ok(endless.cancelled());
    }
  }
});

Deno.test("a real service's answer over 1 MiB is unusable", async () => {
  const padding = " ".repeat(MAX_BODY_BYTES + 10);
  await using service = serve(() => json(200, { status: "running", padding }));
  const client = makeClient(fetch, { baseUrl: service.url });
  const error = await apiError(client.readRun(AGENT, "run_1", OPEN));
  assert.equal(error.kind, "unusable");
  assert.match(error.message, /larger than 1048576 bytes/);
});

// Redirects

Deno.test("a read follows same-origin redirects within the agent's runs, up to 5", async () => {
  for (const status of [301, 302, 303, 307, 308]) {
    const { fetch, calls } = fakeFetch((_, index) =>
      index < MAX_REDIRECTS
        ? redirect(
          status,
          index % 2 === 0 ? `${RUNS_PATH}/run_${index + 2}?p=1` : `run_${index + 2}`,
        )
        : json(200, { status: "running" })
    );
    const answer = await makeClient(fetch).readRun(AGENT, "run_1", OPEN);
    assert.equal(answer.document.status, "running");
    assert.equal(calls.length, MAX_REDIRECTS + 1);
    for (const call of calls) {
      assert.equal(call.url.origin, "https://service.example");
      assert.ok(call.url.pathname.startsWith(`${RUNS_PATH}/`), call.url.pathname);
      assert.equal(call.method, "GET");
      assert.equal(call.headers.get("x-api-key"), KEY);
    }
  }
});

Deno.test("a sixth redirect is refused", async () => {
  const { fetch, calls } = fakeFetch((_, index) => redirect(302, `${RUNS_PATH}/run_${index + 2}`));
  const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
  assert.equal(error.kind, "redirect");
  assert.match(error.message, /more than 5 redirects/);
  assert.equal(calls.length, MAX_REDIRECTS + 1);
});

Deno.test("a redirect to another origin is refused and the key is never sent there", async () => {
  const elsewhere = [
    "https://evil.example/eval/api/v1/agents/x/runs/run_1",
    `http://service.example${RUNS_PATH}/run_1`,
    `https://service.example:8443${RUNS_PATH}/run_1`,
    `https://api.service.example${RUNS_PATH}/run_1`,
    `//evil.example${RUNS_PATH}/run_1`,
    `https://${KEY}@service.example.evil.example/`,
  ];
  for (const location of elsewhere) {
    for (const method of ["GET", "POST"] as const) {
      const { fetch, calls } = fakeFetch(() => redirect(307, location));
      const client = makeClient(fetch);
      const error = await apiError(
        method === "GET"
          ? client.readRun(AGENT, "run_1", OPEN)
          : client.trigger(AGENT, METADATA, IDEMPOTENCY_KEY, OPEN),
      );
      assert.equal(error.kind, "redirect", location);
      assert.match(error.message, /another origin/);
      assert.ok(!error.message.includes(KEY), error.message);
      assertOneLine(error.message);
      assert.equal(calls.length, 1, `only the service was asked (${location})`);
    }
  }
});

Deno.test("a same-origin redirect that carries credentials is refused", async () => {
  const locations = [
    `https://user:pw@service.example${RUNS_PATH}/run_2`,
    `https://u@service.example${RUNS_PATH}/run_2`,
  ];
  for (const location of locations) {
    const { fetch, calls } = fakeFetch(() => redirect(307, location));
    const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
    assert.equal(error.kind, "redirect");
    assert.match(error.message, /with credentials/);
    assert.ok(!error.message.includes("pw"), error.message);
    assert.equal(calls.length, 1);
  }
});

Deno.test("a same-origin redirect outside the agent's runs is refused", async () => {
  const outside = [
    "/eval/admin",
    "/api/v1/agents/x/runs/run_1",
    `/eval/api/v1/agents/1c1d5b6f-9a5f-4b9f-8b64-4a2d3cae8f21/runs/run_1`,
    `${RUNS_PATH}x/run_1`,
    `${RUNS_PATH}/../../other/runs`,
    `${RUNS_PATH}/%2e%2e/%2e%2e/other`,
  ];
  for (const location of outside) {
    const { fetch, calls } = fakeFetch(() => redirect(302, location));
    const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
    assert.equal(error.kind, "redirect", location);
    assert.match(error.message, /outside/);
    assert.equal(calls.length, 1);
  }
});

Deno.test("a trigger follows only 307 and 308, keeping its method, body and key", async () => {
  for (const status of [307, 308]) {
    const { fetch, calls } = fakeFetch((_, index) =>
      index === 0 ? redirect(status, `${RUNS_PATH}/`) : json(201, { run_id: "run_1" })
    );
    const answer = await makeClient(fetch).trigger(AGENT, METADATA, IDEMPOTENCY_KEY, OPEN);
    assert.equal(answer.runId, "run_1");
    assert.equal(calls.length, 2);
    const [first, second] = calls;
    assert.ok(first && second);
    assert.equal(second.method, "POST");
    assert.equal(second.body, first.body);
    assert.equal(second.url.pathname, `${RUNS_PATH}/`);
    assert.equal(second.headers.get("idempotency-key"), IDEMPOTENCY_KEY);
    assert.equal(second.headers.get("content-type"), "application/json");
  }
  for (const status of [300, 301, 302, 303, 304]) {
    const { fetch, calls } = fakeFetch(() => redirect(status, `${RUNS_PATH}/`));
    const error = await apiError(makeClient(fetch).trigger(AGENT, METADATA, IDEMPOTENCY_KEY, OPEN));
    assert.equal(error.kind, "redirect", `${status}`);
    assert.match(error.message, /only 307\/308 are followed/);
    assert.equal(calls.length, 1);
  }
});

Deno.test("a redirect without a Location, or one a read does not follow, is refused", async () => {
  const { fetch } = fakeFetch(() => redirect(302, null));
  const missing = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
  assert.equal(missing.kind, "unusable");
  assert.match(missing.message, /without a Location header/);
  for (const status of [300, 304, 305, 306]) {
    const { fetch } = fakeFetch(() => redirect(status, `${RUNS_PATH}/run_2`));
    const error = await apiError(makeClient(fetch).readRun(AGENT, "run_1", OPEN));
    assert.equal(error.kind, "redirect", `${status}`);
  }
});

Deno.test("a real service's cross-origin redirect is refused and the other origin never hears", async () => {
  await using other = serve(() =>
    json(200, { status: "completed", results: { gate: { passed: true } } })
  );
  await using service = serve(() => redirect(302, new URL(`${RUNS_PATH}/run_1`, other.url).href));
  const client = makeClient(fetch, { baseUrl: new URL("eval", service.url) });
  const error = await apiError(client.readRun(AGENT, "run_1", OPEN));
  assert.equal(error.kind, "redirect");
  assert.equal(service.requests.length, 1);
  assert.equal(other.requests.length, 0);
});

// Time limits, aborts and concurrency

Deno.test("a request that takes longer than the per-request timeout is transient", async () => {
  const { fetch } = fakeFetch(hang);
  const error = await apiError(
    makeClient(fetch, { requestTimeoutMs: 20, timeout: new FakeTime().timeout }).readRun(
      AGENT,
      "r",
      OPEN,
    ),
  );
  assert.equal(error.kind, "transient");
  assert.equal(error.message, "request timed out after 20 ms");
});

Deno.test("an answer whose body stalls past the per-request timeout is transient", async () => {
  const { fetch } = fakeFetch(() =>
    new Response(new ReadableStream({ start() {} }), { status: 200 })
  );
  const error = await apiError(
    makeClient(fetch, { requestTimeoutMs: 20, timeout: new FakeTime().timeout }).readRun(
      AGENT,
      "r",
      OPEN,
    ),
  );
  assert.equal(error.kind, "transient");
  assert.match(error.message, /timed out/);
});

Deno.test("the caller's abort passes through as its own reason, not as a fault", async () => {
  const { fetch } = fakeFetch(hang);
  const controller = new AbortController();
  const reason = new Error("the deadline");
  const pending = makeClient(fetch).readRun(AGENT, "run_1", controller.signal);
  await tick();
  controller.abort(reason);
  await assert.rejects(pending, (error) => error === reason);
  const aborted = AbortSignal.abort(reason);
  await assert.rejects(makeClient(fetch).readRun(AGENT, "run_1", aborted), (e) => e === reason);
});

Deno.test("no more than 8 requests are in flight at once", async () => {
  let inFlight = 0;
  let most = 0;
  const waiting: Array<() => void> = [];
  const { fetch, calls } = fakeFetch(async () => {
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise<void>((resolve) => waiting.push(resolve));
    inFlight--;
    return json(200, { status: "running" });
  });
  const client = makeClient(fetch);
  const all = Promise.all(
    Array.from(
      { length: 30 },
      (_, index) =>
        index % 3 === 0
          ? client.trigger(AGENT, METADATA, IDEMPOTENCY_KEY, OPEN).catch(() => undefined)
          : client.readRun(AGENT, `run_${index}`, OPEN),
    ),
  );
  await tick();
  assert.equal(inFlight, 8);
  while (waiting.length > 0) {
    waiting.shift()!();
    await tick();
    assert.ok(inFlight <= 8, `${inFlight} in flight`);
  }
  await all;
  assert.equal(most, 8);
  assert.equal(calls.length, 30);
});

Deno.test("a request waiting for a slot can be aborted without losing the slot", async () => {
  const waiting: Array<() => void> = [];
  const { fetch, calls } = fakeFetch(async () => {
    await new Promise<void>((resolve) => waiting.push(resolve));
    return json(200, { status: "running" });
  });
  const client = makeClient(fetch, { maxConcurrentRequests: 1 });
  const first = client.readRun(AGENT, "run_1", OPEN);
  const controller = new AbortController();
  const second = client.readRun(AGENT, "run_2", controller.signal);
  await tick();
  controller.abort(new Error("interrupted"));
  await assert.rejects(second, /interrupted/);
  waiting.shift()!();
  await first;
  const third = client.readRun(AGENT, "run_3", OPEN);
  await tick();
  waiting.shift()!();
  await third;
  assert.deepEqual(calls.map((call) => call.url.pathname.split("/").pop()), ["run_1", "run_3"]);
});

Deno.test("a failed request gives its slot back", async () => {
  const { fetch } = fakeFetch((_, index) =>
    index % 2 === 0 ? Promise.reject(new TypeError("reset")) : json(503, {})
  );
  const client = makeClient(fetch, { maxConcurrentRequests: 2 });
  for (let index = 0; index < 10; index++) {
    assert.equal((await apiError(client.readRun(AGENT, "run_1", OPEN))).kind, "transient");
  }
});

// Masking comes before every cut: no part of the key in any spelling survives in an error.

function assertNoPartOfKey(text: string): void {
  const rfc3986 = encodeURIComponent(KEY).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16)}`,
  );
  for (const spelling of [KEY, rfc3986, btoa(KEY)]) {
    for (let i = 0; i + 8 <= spelling.length; i++) {
      assert.ok(!text.includes(spelling.slice(i, i + 8)), `${spelling.slice(i, i + 8)} in ${text}`);
    }
  }
}

Deno.test("a run id that carries the key and makes an unusable address prints none of the key", async () => {
  for (
    const runId of [`${KEY}${"x".repeat(9_000)}`, `${encodeURIComponent(KEY)}${"y".repeat(9_000)}`]
  ) {
    const { fetch } = fakeFetch(() => json(201, { run_id: runId }));
    const error = await apiError(makeClient(fetch).trigger(AGENT, METADATA, IDEMPOTENCY_KEY, OPEN));
    assert.equal(error.kind, "unusable");
    assertNoPartOfKey(error.message);
  }
});

Deno.test("a redirect whose target carries the key prints none of the key", async () => {
  for (
    const location of [
      `https://evil.example/${KEY}/${"z".repeat(300)}`,
      `https://evil.example/?k=${btoa(KEY)}`,
      `/elsewhere/${"a".repeat(180)}${KEY}`,
    ]
  ) {
    const { fetch } = fakeFetch(() => new Response(null, { status: 307, headers: { location } }));
    const error = await apiError(makeClient(fetch).trigger(AGENT, METADATA, IDEMPOTENCY_KEY, OPEN));
    assert.equal(error.kind, "redirect");
    assertNoPartOfKey(error.message);
  }
});
