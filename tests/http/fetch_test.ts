import assert from "node:assert/strict";
import type { Clock, Exchange } from "../../src/effects.ts";
import { exponentialDelay, parseRetryAfter } from "../../src/service/timing.ts";
import { ServiceClient } from "../../src/service/client.ts";
import { apiClient } from "../support/forge_http.ts";
import { createBitbucketWriter } from "../../src/outputs/ci/bitbucket.ts";
import { proxyFetch, recordingIo } from "../support/native_io.ts";
import { FakeTime } from "../support/fake_time.ts";
import { systemClock } from "../../src/platform/clock.ts";
import { githubMetadata, mixedReport } from "../support/report_fixtures.ts";
import { checkHttps, isLoopbackHost } from "../../src/http/url.ts";
import { HttpFailure, type Redirect, type RedirectRefusal } from "../../src/http/failure.ts";
import {
  fetchFollowing,
  MAX_BODY_BYTES,
  MAX_FORGE_BODY_BYTES,
  MAX_REDIRECTS,
  proxyAuthRefusal,
  readCapped,
  REDIRECT_STATUSES,
  requestSignal,
} from "../../src/http/fetch.ts";

const TOKEN = "ghs_policy_test_token_4f1c9a7e";
const OPEN = new AbortController().signal;
// The time limit where time is the point: on a FakeTime's timer, so no test waits it out.
const TIMEOUT_MS = 30;
// The time limit of the users' requests where time is not the point: roomy, so that a loaded
// machine never turns a redirect or a cap into a timeout.
const ROOMY_MS = 5_000;

/** One request a test server received. */
interface Received {
  readonly method: string;
  readonly url: URL;
  readonly headers: Headers;
  readonly body: string;
}

/**
 * A server on 127.0.0.1 that records each request and answers with `answer` (given the request
 * and how many came before it); use with `await using`. `hang()` is an answer that never comes
 * until the server is disposed.
 */
function serve(answer: (request: Received, index: number) => Response | Promise<Response>) {
  const received: Received[] = [];
  const release = Promise.withResolvers<void>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const recorded: Received = {
        method: request.method,
        url: new URL(request.url),
        headers: request.headers,
        body: await request.text(),
      };
      received.push(recorded);
      return await answer(recorded, received.length - 1);
    },
  );
  return {
    url: new URL(`http://127.0.0.1:${server.addr.port}/`),
    received,
    hang: async (): Promise<Response> => {
      await release.promise;
      return new Response("late");
    },
    async [Symbol.asyncDispose]() {
      release.resolve();
      await server.shutdown();
    },
  };
}

/** A forge client's clock on virtual time whose waits end at once, each recorded in `sleeps`. */
function _recordingClock(sleeps: number[]): Pick<Clock, "now" | "sleep"> {
  return {
    now: new FakeTime().now,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
  };
}

function redirect(status: number, location: string): Response {
  return new Response(null, { status, headers: { location } });
}

/** A body of `total` bytes in 64 KiB chunks, with no Content-Length (sent chunked). */
function streamed(total: number): { body: ReadableStream<Uint8Array>; sent: () => number } {
  let sent = 0;
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  return {
    body: new ReadableStream({
      pull(controller) {
        if (sent >= total) return controller.close();
        const part = chunk.subarray(0, Math.min(chunk.byteLength, total - sent));
        sent += part.byteLength;
        controller.enqueue(part);
      },
    }),
    sent: () => sent,
  };
}

async function refusal(promise: Promise<unknown>): Promise<Redirect & { message: string }> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof HttpFailure && error.redirect, `not a refused redirect: ${error}`);
    return { ...error.redirect, message: error.message };
  }
  assert.fail("expected a refused redirect");
}

// The loopback rule

Deno.test("isLoopbackHost() accepts localhost, 127.0.0.0/8 and [::1] as URL spells them, nothing else", () => {
  for (const host of ["localhost", "LOCALHOST", "127.0.0.1", "127.255.0.9", "[::1]"]) {
    assert.ok(isLoopbackHost(host), host);
    assert.ok(isLoopbackHost(new URL(`http://${host}:8080`).hostname), host);
  }
  for (const host of ["localhost.evil.example", "128.0.0.1", "0.0.0.0", "[::2]", "10.0.0.1", ""]) {
    assert.ok(!isLoopbackHost(host), host);
  }
  // URL normalizes the spellings that would otherwise slip past: 2130706433 is 127.0.0.1.
  assert.ok(isLoopbackHost(new URL("http://2130706433/").hostname));
  assert.ok(isLoopbackHost(new URL("http://[0:0:0:0:0:0:0:1]/").hostname));
});

Deno.test("checkHttps() allows https:// anywhere and http:// only to this machine, naming the input", () => {
  assert.equal(checkHttps(new URL("https://service.example"), "--base-url"), null);
  assert.equal(checkHttps(new URL("http://127.0.0.1:8787"), "--base-url"), null);
  assert.equal(checkHttps(new URL("http://localhost/api/v4"), "CI_API_V4_URL"), null);
  assert.equal(
    checkHttps(new URL("http://service.example/x"), "--base-url"),
    '--base-url must use https:// for a remote host; plain http:// is only allowed for localhost, 127.0.0.0/8 and [::1] (got "http://service.example/x")',
  );
  assert.equal(
    checkHttps(new URL("ftp://gitlab.example"), "CI_API_V4_URL", "ftp://gitlab.example"),
    'CI_API_V4_URL must be an https:// URL (got "ftp://gitlab.example")',
  );
});

// Redirects

Deno.test("fetchFollowing() follows same-origin redirects up to the limit, every hop with the credential", async () => {
  for (const status of REDIRECT_STATUSES) {
    await using server = serve((_, index) =>
      index < MAX_REDIRECTS ? redirect(status, `/hop/${index + 1}`) : Response.json({ ok: true })
    );
    const { response, url, method } = await fetchFollowing(new URL("/hop/0", server.url), {
      method: "GET",
      headers: { Authorization: `Bearer ${TOKEN}` },
    }, { fetch });
    assert.deepEqual(await response.json(), { ok: true });
    assert.equal(url.pathname, `/hop/${MAX_REDIRECTS}`);
    assert.equal(method, "GET");
    assert.equal(server.received.length, MAX_REDIRECTS + 1);
    for (const request of server.received) {
      assert.equal(request.headers.get("authorization"), `Bearer ${TOKEN}`);
    }
  }
});

Deno.test("fetchFollowing() refuses one redirect more than the limit, after sending the limit", async () => {
  assert.equal(MAX_REDIRECTS, 5);
  await using server = serve((_, index) => redirect(302, `/hop/${index + 1}`));
  const error = await refusal(
    fetchFollowing(new URL("/hop/0", server.url), { method: "GET" }, { fetch }),
  );
  assert.equal(error.reason, "too_many");
  assert.equal(error.message, "GET answered 302 redirect: more than 5 redirects; refused");
  assert.equal(server.received.length, MAX_REDIRECTS + 1);
});

Deno.test("fetchFollowing() refuses a redirect to another origin: that origin never sees the request or the credential", async () => {
  await using other = serve(() => Response.json({}));
  await using server = serve(() => redirect(307, new URL("/stolen", other.url).href));
  const error = await refusal(
    fetchFollowing(new URL("/start", server.url), {
      method: "POST",
      headers: { Authorization: `Bearer ${TOKEN}`, "X-API-Key": TOKEN },
      body: "{}",
    }, { fetch }),
  );
  assert.equal(error.reason, "other_origin");
  assert.equal(error.to?.origin, other.url.origin);
  assert.ok(!error.message.includes(TOKEN));
  assert.equal(server.received.length, 1);
  assert.deepEqual(other.received, []);
});

Deno.test("fetchFollowing() treats another scheme or port on the same host as another origin", async () => {
  await using server = serve(() => new Response("never"));
  const from = server.url;
  const elsewhere = [
    `https://127.0.0.1:${from.port}/x`,
    `http://127.0.0.1:${Number(from.port) === 65535 ? 1 : Number(from.port) + 1}/x`,
    `http://localhost:${from.port}/x`,
  ];
  for (const location of elsewhere) {
    const calls: string[] = [];
    const fake: typeof fetch = (input) => {
      calls.push(String(input));
      return Promise.resolve(redirect(302, location));
    };
    const error = await refusal(
      fetchFollowing(new URL("/start", from), { method: "GET" }, { fetch: fake }),
    );
    assert.equal(error.reason, "other_origin", location);
    assert.equal(calls.length, 1, location);
  }
});

Deno.test("fetchFollowing() refuses a same-origin address with credentials, and one outside `within`", async () => {
  await using server = serve((request) =>
    request.url.pathname === "/api/runs/1"
      ? redirect(302, `http://user:pw@127.0.0.1:${request.url.port}/api/runs/2`)
      : redirect(302, "/api/other")
  );
  const credentials = await refusal(
    fetchFollowing(new URL("/api/runs/1", server.url), { method: "GET" }, { fetch }),
  );
  assert.equal(credentials.reason, "credentials");
  assert.ok(!credentials.message.includes("pw"), credentials.message);
  const outside = await refusal(
    fetchFollowing(new URL("/api/runs/3", server.url), { method: "GET" }, {
      fetch,
      within: "/api/runs",
    }),
  );
  assert.equal(outside.reason, "outside");
  assert.match(outside.message, /outside \/api\/runs \(/);
  assert.equal(server.received.length, 2);
});

Deno.test("fetchFollowing() refuses a redirect without Location, to an unreadable address or with a status not followed", async () => {
  const cases: Array<[Response, RedirectRefusal, readonly number[] | undefined]> = [
    [new Response(null, { status: 302 }), "no_location", undefined],
    [redirect(302, "http://[bad"), "invalid", undefined],
    [redirect(300, "/x"), "not_followed", undefined],
    [redirect(304, "/x"), "not_followed", undefined],
    [redirect(302, "/x"), "not_followed", [307, 308]],
  ];
  for (const [answer, reason, follows] of cases) {
    const fake: typeof fetch = () => Promise.resolve(answer.clone());
    const error = await refusal(
      fetchFollowing(new URL("https://service.example/a"), { method: "POST" }, {
        fetch: fake,
        ...(follows === undefined ? {} : { follows }),
      }),
    );
    assert.equal(error.reason, reason, `${answer.status} ${reason}`);
  }
});

Deno.test("fetchFollowing() makes a 303 a GET without body, and repeats the request as it was otherwise", async () => {
  await using server = serve((request) =>
    request.url.pathname === "/303"
      ? redirect(303, "/done")
      : request.url.pathname === "/307"
      ? redirect(307, "/done")
      : Response.json({ method: request.method, body: request.body })
  );
  const request = {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${TOKEN}` },
    body: '{"a":1}',
  };
  const seeOther = await fetchFollowing(new URL("/303", server.url), request, { fetch });
  assert.equal(seeOther.method, "GET");
  assert.deepEqual(await seeOther.response.json(), { method: "GET", body: "" });
  assert.equal(server.received[1]!.headers.get("content-type"), null);
  assert.equal(server.received[1]!.headers.get("authorization"), `Bearer ${TOKEN}`);
  const temporary = await fetchFollowing(new URL("/307", server.url), request, { fetch });
  assert.equal(temporary.method, "POST");
  assert.deepEqual(await temporary.response.json(), { method: "POST", body: '{"a":1}' });
});

Deno.test("fetchFollowing() is the one place fetch is asked not to follow redirects itself", async () => {
  const modes: Array<RequestRedirect | undefined> = [];
  const fake: typeof fetch = (_, init) => {
    modes.push(init?.redirect);
    return Promise.resolve(modes.length === 1 ? redirect(308, "/b") : new Response("{}"));
  };
  await fetchFollowing(new URL("https://service.example/a"), { method: "GET" }, { fetch: fake });
  assert.deepEqual(modes, ["manual", "manual"]);
  const sources: string[] = [];
  for await (const entry of Deno.readDir(new URL("../../src", import.meta.url))) {
    if (entry.isFile) sources.push(`src/${entry.name}`);
    if (entry.isDirectory) {
      for await (const inner of Deno.readDir(new URL(`../../src/${entry.name}`, import.meta.url))) {
        sources.push(`src/${entry.name}/${inner.name}`);
      }
    }
  }
  const setting: string[] = [];
  const timers: string[] = [];
  for (const path of sources.filter((path) => path.endsWith(".ts"))) {
    const text = await Deno.readTextFile(new URL(`../../${path}`, import.meta.url));
    if (/redirect:\s*"/.test(text)) setting.push(path);
    if (/\bset(?:Timeout|Interval)\s*\(/.test(text)) timers.push(path);
  }
  assert.deepEqual(setting, ["src/http/fetch.ts"]);
  assert.deepEqual(timers, [], "raw timers outside src/platform/clock.ts");
});

// The body cap

Deno.test("readCapped() reads a body of exactly the cap", async () => {
  const text = await readCapped(new Response(streamed(1024).body), { maxBytes: 1024 });
  assert.equal(text.length, 1024);
});

Deno.test("readCapped() refuses a declared Content-Length over the cap before reading a byte", async () => {
  const body = streamed(10 * 1024 * 1024);
  const response = new Response(body.body, {
    status: 502,
    headers: { "content-length": String(MAX_BODY_BYTES + 1) },
  });
  await assert.rejects(readCapped(response), (error: unknown) => {
    assert.ok(error instanceof HttpFailure);
    assert.equal(error.status, 502);
    assert.equal(error.message, `answer 502 is larger than ${MAX_BODY_BYTES} bytes`);
    return true;
  });
  assert.ok(body.sent() <= 64 * 1024, `${body.sent()} bytes pulled`);
});

Deno.test("readCapped() stops a real chunked body with no Content-Length soon after the cap", async () => {
  const body = streamed(64 * MAX_BODY_BYTES);
  await using server = serve(() => new Response(body.body));
  const response = await fetch(server.url);
  assert.equal(response.headers.get("content-length"), null);
  await assert.rejects(readCapped(response), HttpFailure);
  assert.ok(
    body.sent() < 8 * MAX_BODY_BYTES,
    `${body.sent()} bytes sent of ${64 * MAX_BODY_BYTES}`,
  );
});

Deno.test("readCapped() ends a stalled body when the signal aborts, with its reason", async () => {
  const { signal } = requestSignal(new FakeTime().timeout(TIMEOUT_MS));
  const stalled = new Response(new ReadableStream({ start() {} }));
  await assert.rejects(readCapped(stalled, { signal }), (error: unknown) => {
    assert.ok(error instanceof DOMException && error.name === "TimeoutError", String(error));
    return true;
  });
});

// Time limits

Deno.test("requestSignal() times a request out, and tells that from the caller's own abort", async () => {
  await using server = serve(() => server.hang());
  const timed = requestSignal(new FakeTime().timeout(TIMEOUT_MS), OPEN);
  await assert.rejects(fetch(server.url, { signal: timed.signal }));
  assert.ok(timed.timeout.aborted);

  const caller = new AbortController();
  const reason = new Error("the deadline");
  // A timer that has not run out (virtual time would end even 60 s at the next idle moment).
  const cut = requestSignal(new AbortController().signal, caller.signal);
  const pending = fetch(server.url, { signal: cut.signal });
  caller.abort(reason);
  await assert.rejects(pending, (error) => error === reason);
  assert.ok(!cut.timeout.aborted);
});

// Retry-After, as every client reads it

Deno.test("a real answer's Retry-After is read in seconds and as an HTTP date; the forge's doubling is timing.ts's", async () => {
  const now = Date.UTC(1994, 10, 6, 8, 49, 37);
  await using server = serve((request) =>
    new Response(null, {
      status: 503,
      headers: {
        "retry-after": request.url.pathname === "/date" ? "Sun, 06 Nov 1994 08:49:40 GMT" : "2",
      },
    })
  );
  const seconds = await fetch(new URL("/seconds", server.url));
  await seconds.body?.cancel();
  assert.equal(parseRetryAfter(seconds.headers.get("retry-after"), now), 2_000);
  const date = await fetch(new URL("/date", server.url));
  await date.body?.cancel();
  assert.equal(parseRetryAfter(date.headers.get("retry-after"), now), 3_000);
  assert.deepEqual([1, 2, 3].map((attempt) => exponentialDelay(attempt, 1_000)), [
    1_000,
    2_000,
    4_000,
  ]);
  assert.equal(exponentialDelay(20), 30_000);
});

// The same policy, through each of its users

/** What one user of the policy made of a scenario: nothing wrong, or its one-line failure. */
type Outcome = { readonly failure: null } | { readonly failure: string };

/** One client of the policy, run against a test server as the program runs it. */
interface PolicyUser {
  readonly name: string;
  /** The largest body this user reads, or `null` when it reads none. */
  readonly maxBytes: number | null;
  /** The header that carries its credential, when the client sends one itself. */
  readonly credential: [string, string] | null;
  /**
   * Whether it honours `Retry-After` itself (the service leaves that to the poller), waiting on a
   * clock that records the wait in `sleeps` and ends it at once.
   */
  readonly retries: boolean;
  /**
   * Runs one request (Bitbucket: the whole report) against `base`, each request given
   * `timeoutMs` (default {@linkcode ROOMY_MS}) on `timer` (default the real clock's).
   */
  run(
    base: URL,
    effects: {
      readonly sleeps: number[];
      readonly timeoutMs?: number;
      readonly timer?: (ms: number) => AbortSignal;
    },
  ): Promise<Outcome>;
  /** How each failure reads, as the user words it. */
  readonly words: {
    readonly tooMany: RegExp;
    readonly otherOrigin: RegExp;
    readonly tooLarge: RegExp | null;
    readonly timeout: RegExp;
  };
}

const AGENT = "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10";
const KEY = "sk_policy_test_key_2b3d";

const USERS: readonly PolicyUser[] = [
  {
    name: "ServiceClient",
    maxBytes: MAX_BODY_BYTES,
    credential: ["x-api-key", KEY],
    retries: false,
    run: async (base, { timeoutMs = ROOMY_MS, timer = systemClock.timeout }) => {
      const client = new ServiceClient({
        baseUrl: base,
        apiKey: KEY,
        userAgent: "service-ci/test",
        requestTimeoutMs: timeoutMs,
        fetch,
        clock: systemClock,
        timeout: timer,
      });
      try {
        await client.readRun(AGENT, "run_1", OPEN);
        return { failure: null };
      } catch (error) {
        assert.ok(error instanceof HttpFailure, String(error));
        return { failure: `${error.kind}: ${error.message}` };
      }
    },
    words: {
      tooMany: /^redirect: GET answered 302 redirect: more than 5 redirects; refused$/,
      otherOrigin: /^redirect: GET answered 302 redirect to another origin .*API key is only sent/,
      tooLarge: new RegExp(`^unusable: answer 200 is larger than ${MAX_BODY_BYTES} bytes$`),
      timeout: /^transient: request timed out after 30 ms$/,
    },
  },
  {
    name: "ForgeHttp",
    maxBytes: MAX_FORGE_BODY_BYTES,
    credential: ["authorization", `Bearer ${TOKEN}`],
    retries: true,
    run: async (base, { sleeps, timeoutMs = ROOMY_MS, timer = systemClock.timeout }) => {
      const http = apiClient({
        baseUrl: base.href,
        token: TOKEN,
        requestTimeoutMs: timeoutMs,
        fetch,
        timeout: timer,
        clock: _recordingClock(sleeps),
      });
      try {
        await http.request("GET", "/repos/acme/widgets/issues/1/comments");
        return { failure: null };
      } catch (error) {
        assert.ok(error instanceof HttpFailure, String(error));
        return { failure: `${error.kind}: ${error.message}` };
      }
    },
    words: {
      tooMany: /^refused: GitHub redirected more than 5 times$/,
      otherOrigin: /^refused: GitHub redirected to http:\/\/127\.0\.0\.1:\d+; the token is only/,
      tooLarge: new RegExp(
        `^unusable: GitHub answered GET with 200 and more than ${MAX_FORGE_BODY_BYTES} bytes$`,
      ),
      timeout: /^network: GitHub could not be reached \(TimeoutError/,
    },
  },
  {
    name: "Bitbucket's proxy",
    maxBytes: null,
    // The proxy adds the pipeline's credentials; the program sends none itself.
    credential: null,
    // Its forge client pauses every Bitbucket request for the Retry-After, then sends again.
    retries: true,
    run: async (proxy, { sleeps, timeoutMs = ROOMY_MS, timer = systemClock.timeout }) => {
      const { io, warnings } = recordingIo({
        env: {
          BITBUCKET_WORKSPACE: "acme",
          BITBUCKET_REPO_SLUG: "widgets",
          BITBUCKET_COMMIT: githubMetadata.commit_sha!,
          SERVICE_BITBUCKET_PROXY: proxy.origin,
        },
        makeFetch: (via) => proxyFetch(via, () => timeoutMs, timer),
        forgeClock: _recordingClock(sleeps),
      });
      await createBitbucketWriter().finish(mixedReport, io);
      assert.ok(warnings.length <= 1, warnings.join("\n"));
      return { failure: warnings[0] ?? null };
    },
    words: {
      tooMany: /\(DELETE answered 302 redirect: more than 5 redirects; refused\)$/,
      otherOrigin:
        /\(DELETE answered 302 redirect to another origin \(http:\/\/127\.0\.0\.1:\d+\/stolen\); refused\)$/,
      tooLarge: null,
      timeout: /\(no answer within 30 ms\)$/,
    },
  },
];

for (const user of USERS) {
  Deno.test(`${user.name} follows same-origin redirects up to ${MAX_REDIRECTS}, with its credential on every hop`, async () => {
    // The request's own address again: inside the agent's runs for the service.
    await using server = serve((request, index) =>
      index < MAX_REDIRECTS ? redirect(302, request.url.pathname) : Response.json({})
    );
    assert.deepEqual(await user.run(server.url, { sleeps: [] }), { failure: null });
    assert.ok(server.received.length >= MAX_REDIRECTS + 1);
    const path = server.received[0]!.url.pathname;
    for (const request of server.received.slice(0, MAX_REDIRECTS + 1)) {
      assert.equal(request.url.pathname, path);
      if (user.credential) {
        assert.equal(request.headers.get(user.credential[0]), user.credential[1]);
      }
    }
  });

  Deno.test(`${user.name} refuses redirect number ${MAX_REDIRECTS + 1}`, async () => {
    await using server = serve((request) => redirect(302, request.url.pathname));
    const { failure } = await user.run(server.url, { sleeps: [] });
    assert.match(failure ?? "", user.words.tooMany);
    assert.equal(server.received.length, MAX_REDIRECTS + 1);
  });

  Deno.test(`${user.name} refuses a redirect to another origin, which never hears of it`, async () => {
    await using other = serve(() => Response.json({}));
    await using server = serve(() => redirect(302, new URL("/stolen", other.url).href));
    const { failure } = await user.run(server.url, { sleeps: [] });
    assert.match(failure ?? "", user.words.otherOrigin);
    assert.equal(server.received.length, 1);
    assert.deepEqual(other.received, []);
  });

  const tooLarge = user.words.tooLarge;
  if (user.maxBytes !== null && tooLarge !== null) {
    const maxBytes = user.maxBytes;
    Deno.test(`${user.name} stops reading an answer over its cap, declared or streamed`, async () => {
      for (const declared of [true, false]) {
        const body = streamed(maxBytes + 64 * 1024);
        await using server = serve(() =>
          new Response(
            body.body,
            declared ? { headers: { "content-length": String(maxBytes + 64 * 1024) } } : {},
          )
        );
        // Reading up to the cap takes time on a loaded machine: the cap, not the time limit,
        // must be what stops it.
        const { failure } = await user.run(server.url, { sleeps: [], timeoutMs: 20_000 });
        assert.match(failure ?? "", tooLarge, `declared ${declared}`);
      }
    });
  } else {
    Deno.test(`${user.name} reads no body: an answer of any size is cancelled unread`, async () => {
      const bodies: Array<{ sent: () => number }> = [];
      await using server = serve(() => {
        const body = streamed(64 * MAX_BODY_BYTES);
        bodies.push(body);
        return new Response(body.body);
      });
      assert.deepEqual(await user.run(server.url, { sleeps: [] }), { failure: null });
      for (const body of bodies) assert.ok(body.sent() < 8 * MAX_BODY_BYTES, `${body.sent()}`);
    });
  }

  Deno.test(`${user.name} gives up on an answer that does not come within the request's time`, async () => {
    await using server = serve(() => server.hang());
    const started = performance.now();
    const { failure } = await user.run(server.url, {
      sleeps: [],
      timeoutMs: TIMEOUT_MS,
      timer: new FakeTime().timeout,
    });
    assert.match(failure ?? "", user.words.timeout);
    assert.ok(performance.now() - started < 2_000, `${performance.now() - started} ms`);
  });

  Deno.test(`${user.name} ${user.retries ? "waits out" : "keeps"} a short Retry-After`, async () => {
    await using server = serve((_, index) =>
      index === 0
        ? Response.json({ message: "slow down" }, { status: 429, headers: { "retry-after": "2" } })
        : Response.json({})
    );
    const sleeps: number[] = [];
    const { failure } = await user.run(server.url, { sleeps });
    if (user.retries) {
      assert.equal(failure, null);
      assert.deepEqual(sleeps, [2_000]);
    } else {
      // The poller waits it out (tests/service/poll_test.ts); the client hands it over in the error.
      assert.match(failure ?? "", /^transient: GET answered 429/);
      assert.deepEqual(sleeps, []);
    }
  });
}

Deno.test("the service's Retry-After reaches the poller in the error, in milliseconds", async () => {
  await using server = serve(() =>
    Response.json({}, { status: 503, headers: { "retry-after": "3" } })
  );
  const client = new ServiceClient({
    baseUrl: server.url,
    apiKey: KEY,
    userAgent: "service-ci/test",
    requestTimeoutMs: 5_000,
    fetch,
    clock: systemClock,
    timeout: systemClock.timeout,
  });
  await assert.rejects(client.readRun(AGENT, "run_1", OPEN), (error: unknown) => {
    assert.ok(error instanceof HttpFailure);
    assert.equal(error.retryAfterMs, 3_000);
    return true;
  });
});

// How Deno 2.9.6's fetch fails when the proxy answers CONNECT with 407 (tests/e2e/network_test.ts).
function proxyAuthFailure(): Promise<Response> {
  return Promise.reject(
    new TypeError("fetch failed", {
      cause: new Error(
        "error sending request for url (https://service.example/x): client error (Connect): proxy authentication required",
      ),
    }),
  );
}

Deno.test("proxyAuthRefusal() names the variable for the URL's scheme, and nothing for other failures", () => {
  for (
    const [url, variable] of [["https://a.example", "HTTPS_PROXY"], [
      "http://a.example",
      "HTTP_PROXY",
    ]]
  ) {
    const line = proxyAuthRefusal(
      new TypeError("fetch failed", {
        cause: new Error("client error (Connect): proxy authentication required"),
      }),
      new URL(url!),
    );
    assert.equal(
      line,
      `the proxy in ${variable}/ALL_PROXY refused the credentials it was given (407 Proxy Authentication Required): check the user and password in that variable; a retry would send the same ones`,
    );
  }
  const refused = new TypeError("fetch failed", {
    cause: new Error(
      "client error (Connect): tcp connect error: Connection refused (os error 111)",
    ),
  });
  assert.equal(proxyAuthRefusal(refused, new URL("https://a.example")), null);
  assert.equal(
    proxyAuthRefusal("proxy authentication required", new URL("https://a.example")),
    null,
  );
});

Deno.test("a proxy that refuses its credentials ends the service's and a forge's request at once, named, without a retry", async () => {
  let calls = 0;
  const failing = (() => {
    calls++;
    return proxyAuthFailure();
  }) as typeof fetch;
  const client = new ServiceClient({
    baseUrl: new URL("https://service.example"),
    apiKey: KEY,
    userAgent: "service-ci/test",
    requestTimeoutMs: 5_000,
    fetch: failing,
    clock: systemClock,
    timeout: systemClock.timeout,
  });
  await assert.rejects(client.readRun(AGENT, "run_1", OPEN), (error: unknown) => {
    assert.ok(error instanceof HttpFailure, String(error));
    // Not transient: the poller would retry it for as long as the timeout allows.
    assert.equal(error.kind, "proxy");
    assert.match(error.message, /^the proxy in HTTPS_PROXY\/ALL_PROXY refused the credentials/);
    return true;
  });
  assert.equal(calls, 1);

  calls = 0;
  const sleeps: number[] = [];
  const forge = apiClient({
    baseUrl: "https://api.github.com",
    token: TOKEN,
    fetch: failing,
    timeout: systemClock.timeout,
    clock: _recordingClock(sleeps),
  });
  await assert.rejects(forge.request("GET", "/repos/acme/widgets/issues/1/comments"), (error) => {
    assert.ok(error instanceof HttpFailure, String(error));
    assert.equal(error.kind, "refused");
    assert.match(
      error.message,
      /^GitHub: the proxy in HTTPS_PROXY\/ALL_PROXY refused the credentials it was given \(407/,
    );
    return true;
  });
  assert.equal(calls, 1);
  assert.deepEqual(sleeps, []);
});

Deno.test("fetchFollowing() tells each hop to its log: the path without the query, the attempt, the request id, an error's body", async () => {
  const told: Exchange[] = [];
  let now = 0;
  const answers = [
    new Response(null, { status: 302, headers: { location: "/b?page=2" } }),
    new Response('{"message":"nope"}', { status: 503, headers: { "x-github-request-id": "G1" } }),
  ];
  const send: typeof fetch = () => {
    now += 5;
    return Promise.resolve(answers.shift()!);
  };
  const log = { monotonic: () => now, tell: (exchange: Exchange) => told.push(exchange) };
  const { response } = await fetchFollowing(new URL("https://api.example/a?token=x"), {
    method: "GET",
  }, { fetch: send, log, attempt: 3 });
  assert.equal(await response.text(), '{"message":"nope"}');
  assert.deepEqual(told, [
    {
      method: "GET",
      host: "api.example",
      path: "/a",
      status: 302,
      durationMs: 5,
      attempt: 3,
      requestId: null,
      errorBody: null,
    },
    {
      method: "GET",
      host: "api.example",
      path: "/b",
      status: 503,
      durationMs: 5,
      attempt: 3,
      requestId: "G1",
      errorBody: '{"message":"nope"}',
    },
  ]);
  const failing: typeof fetch = () => Promise.reject(new TypeError("connection refused"));
  await assert.rejects(
    fetchFollowing(new URL("https://api.example/c"), { method: "POST" }, { fetch: failing, log }),
  );
  assert.equal(told[2]?.status, null);
  assert.equal(told[2]?.attempt, 1);
});

/** `work`, or `"still waiting"` after `ms`, when `controller` ends the request. */
async function within<T>(ms: number, work: Promise<T>, controller: AbortController) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"still waiting">((resolve) => {
    timer = setTimeout(() => resolve("still waiting"), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
    controller.abort();
    await work.catch(() => {});
  }
}

Deno.test("fetchFollowing() with a log reads no more of an error's body than its caller reads, and waits for no more", async () => {
  const total = 64 * MAX_BODY_BYTES;
  for (const caller of ["cancels it unread", "refuses its declared length", "reads to the cap"]) {
    const body = streamed(total);
    const declared = caller === "refuses its declared length";
    await using server = serve(() =>
      new Response(body.body, {
        status: 503,
        headers: declared ? { "content-length": String(total) } : {},
      })
    );
    const told: Exchange[] = [];
    const log = { monotonic: () => 0, tell: (exchange: Exchange) => told.push(exchange) };
    const controller = new AbortController();
    const signal = controller.signal;
    const outcome = await within(
      5_000,
      (async () => {
        const { response } = await fetchFollowing(server.url, { method: "GET", signal }, {
          fetch,
          log,
        });
        if (caller === "cancels it unread") return await response.body?.cancel();
        return await readCapped(response, { signal }).catch((error: Error) => error.message);
      })(),
      controller,
    );
    assert.notEqual(outcome, "still waiting", caller);
    assert.equal(told.length, 1, caller);
    if (caller === "reads to the cap") {
      assert.equal(outcome, `answer 503 is larger than ${MAX_BODY_BYTES} bytes`);
      // The start of what the caller read, a few KiB of it.
      assert.equal(told[0]?.errorBody, " ".repeat(4 * 1024));
    } else {
      assert.equal(told[0]?.errorBody, null, caller);
      // What the HTTP stack buffers ahead, as without a log, not the log's reading.
      assert.ok(body.sent() < 8 * MAX_BODY_BYTES, `${caller}: ${body.sent()} bytes sent`);
    }
  }
});
