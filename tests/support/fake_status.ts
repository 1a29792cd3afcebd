/**
 * Fake commit-status APIs on loopback: GitHub's check runs and commit statuses, GitLab's commit
 * statuses, with real token checks, a request log and scripted faults.
 *
 * ```ts
 * await using github = await startFakeStatusForge("github");
 * ```
 */

import { FORGE_TARGET, FORGE_TOKENS } from "./fake_forge.ts";

/** A request the fake received, its body parsed. */
export interface StatusRequest {
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Record<string, unknown>;
}

/** Options of {@linkcode startFakeStatusForge}. */
export interface FakeStatusOptions {
  /** The token accepted; default the forge's entry of `FORGE_TOKENS`. */
  readonly token?: string;
  /** GitHub: creating check runs answers 403, as for a token without `checks: write`. */
  readonly checksForbidden?: boolean;
  /** GitHub: commit statuses answer 403, as for a token without `statuses: write`. */
  readonly statusesForbidden?: boolean;
  /**
   * Answers a request itself (a fault, a redirect) when it returns a response; `undefined` lets
   * the fake answer. `signal` aborts when the client goes away or the forge closes.
   */
  readonly fault?: (
    request: StatusRequest,
    signal: AbortSignal,
  ) => Response | Promise<Response> | undefined;
  /** Does the work, then answers 502 instead when this says so: an answer lost on its way. */
  readonly loseAnswer?: (request: StatusRequest) => boolean;
}

/** A running fake. Use with `await using`. */
export interface FakeStatusForge extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** The API root to configure: the origin (GitHub) or `<origin>/api/v4` (GitLab). */
  readonly apiUrl: string;
  /** Every request received, in order. */
  readonly requests: StatusRequest[];
  /** GitHub's check runs by id, as last written (creation fields merged with updates). */
  readonly checkRuns: Map<number, Record<string, unknown>>;
  /** The most requests in flight at once, and the most writes (anything but GET). */
  readonly peak: { requests: number; writes: number };
}

/**
 * Starts a fake GitHub (`POST/PATCH /repos/acme/widgets/check-runs`, `POST …/statuses/{sha}`) or
 * GitLab (`POST /api/v4/projects/1234/statuses/{sha}`) on 127.0.0.1.
 */
export function startFakeStatusForge(
  forge: "github" | "gitlab",
  options: FakeStatusOptions = {},
): Promise<FakeStatusForge> {
  const token = options.token ?? FORGE_TOKENS[forge];
  const requests: StatusRequest[] = [];
  const checkRuns = new Map<number, Record<string, unknown>>();
  const peak = { requests: 0, writes: 0 };
  const now = { requests: 0, writes: 0 };
  const repo = `/repos/${FORGE_TARGET.repository}`;
  const handle = (request: StatusRequest): Response => {
    if (forge === "gitlab") {
      if (request.headers["private-token"] !== token) {
        return _json(401, { message: "401 Unauthorized" });
      }
      if (
        request.method === "POST" &&
        new RegExp(`^/api/v4/projects/${FORGE_TARGET.projectId}/statuses/[0-9a-f]{40}$`).test(
          request.path,
        )
      ) {
        return _json(201, { id: requests.length, ...request.body });
      }
      return _json(404, { message: "404 Not Found" });
    }
    if (request.headers.authorization !== `Bearer ${token}`) {
      return _json(401, { message: "Bad credentials" });
    }
    if (request.method === "POST" && request.path === `${repo}/check-runs`) {
      if (options.checksForbidden) {
        return _json(403, { message: "Resource not accessible by integration" });
      }
      const id = 9000 + checkRuns.size + 1;
      checkRuns.set(id, { ...request.body });
      return _json(201, { id, ...request.body });
    }
    const list = new RegExp(`^${repo}/commits/([0-9a-f]{40})/check-runs\\?(.*)$`).exec(
      request.path,
    );
    if (request.method === "GET" && list) {
      const query = new URLSearchParams(list[2]);
      const name = query.get("check_name");
      const runs = [...checkRuns.entries()]
        .filter(([, run]) => run.head_sha === list[1] && (name === null || run.name === name))
        .map(([id, run]) => ({ id, ...run }));
      return _json(200, { total_count: runs.length, check_runs: runs });
    }
    const patch = new RegExp(`^${repo}/check-runs/(\\d+)$`).exec(request.path);
    if (request.method === "PATCH" && patch) {
      const run = checkRuns.get(Number(patch[1]));
      if (run === undefined) return _json(404, { message: "Not Found" });
      Object.assign(run, request.body);
      return _json(200, { id: Number(patch[1]), ...run });
    }
    if (
      request.method === "POST" && new RegExp(`^${repo}/statuses/[0-9a-f]{40}$`).test(request.path)
    ) {
      if (options.statusesForbidden) {
        return _json(403, { message: "Resource not accessible by integration" });
      }
      return _json(201, { id: requests.length, ...request.body });
    }
    return _json(404, { message: "Not Found" });
  };
  const { promise, resolve } = Promise.withResolvers<FakeStatusForge>();
  // Ends every fault still waiting when the forge closes, so its shutdown never waits on one.
  const closing = new AbortController();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => {
      const origin = `http://127.0.0.1:${port}`;
      resolve({
        origin,
        apiUrl: forge === "gitlab" ? `${origin}/api/v4` : origin,
        requests,
        checkRuns,
        peak,
        [Symbol.asyncDispose]: () => {
          closing.abort();
          return server.shutdown();
        },
      });
    },
  }, async (raw) => {
    const url = new URL(raw.url);
    const text = await raw.text();
    let body: Record<string, unknown> = {};
    try {
      body = text === "" ? {} : JSON.parse(text);
    } catch {
      return _json(400, { message: "Problems parsing JSON" });
    }
    const request: StatusRequest = {
      method: raw.method,
      path: `${url.pathname}${url.search}`,
      headers: Object.fromEntries(raw.headers),
      body,
    };
    requests.push(request);
    const write = request.method !== "GET";
    now.requests++;
    if (write) now.writes++;
    peak.requests = Math.max(peak.requests, now.requests);
    peak.writes = Math.max(peak.writes, now.writes);
    try {
      // A turn of the event loop, so requests sent together overlap here as on a real server.
      await new Promise((resolve) => setTimeout(resolve, 1));
      const answer =
        await options.fault?.(request, AbortSignal.any([raw.signal, closing.signal])) ??
          handle(request);
      return options.loseAnswer?.(request) ? _json(502, { message: "Bad Gateway" }) : answer;
    } finally {
      now.requests--;
      if (write) now.writes--;
    }
  });
  return promise;
}

/**
 * A forge that does not answer in time: answers 504 when `signal` aborts (the client gave up, or
 * the forge closes) or after `ms` of real time, whichever comes first.
 */
export function hangUntil(signal: AbortSignal, ms = 2_000): Promise<Response> {
  return new Promise((resolve) => {
    const answer = () => {
      clearTimeout(timer);
      resolve(_json(504, { message: "Gateway Timeout" }));
    };
    const timer = setTimeout(answer, ms);
    if (signal.aborted) answer();
    else signal.addEventListener("abort", answer, { once: true });
  });
}

function _json(status: number, data: unknown): Response {
  return new Response(JSON.stringify(data), {
    status,
    headers: { "content-type": "application/json" },
  });
}
