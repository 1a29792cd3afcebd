/**
 * A fake evaluation service on loopback that implements both operations the way a strict real
 * service would, keeps a request log, and lets a test script answers (faults, delays, hangs,
 * cut connections). Also runnable alone: `deno task fake-service`.
 */

/** Agent kinds of the service. */
export type AgentKind = "guardian" | "red_team";

/** An agent as the fake service holds it. */
export interface FakeAgent {
  readonly id: string;
  readonly name: string;
  readonly kind: AgentKind;
  /** An inactive agent refuses triggers with 409 `agent_inactive`. */
  readonly active: boolean;
  /** The quality gate; `null` means none is configured (422 `quality_gate_missing`). */
  readonly gate: { readonly rule: string; readonly passes: boolean } | null;
  /** The system under test; the runner never sees it. */
  readonly system: { readonly id: string; readonly endpoint: string };
  /** How long a run takes from trigger to completion. */
  readonly runMs: number;
  /** Overrides the document a finished run shows (for hostile or malformed answers). */
  readonly finished?: (run: FakeRun) => Record<string, unknown>;
}

/** A run the fake service created. */
export interface FakeRun {
  readonly runId: string;
  readonly agentId: string;
  readonly createdAt: number;
  readonly idempotencyKey: string;
  readonly requestBody: string;
  readonly ciMetadata: Record<string, unknown>;
}

/** A request the fake service received, as it received it. */
export interface LoggedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly at: number;
}

/** A scripted answer: it is used for the next `times` requests it matches, in order. */
export interface ScriptRule {
  readonly method?: "GET" | "POST";
  /** Matches the request path (a string is a substring). */
  readonly path?: string | RegExp;
  /** How many requests it answers; default 1. */
  readonly times?: number;
  /** Makes the answer; `next()` is what the service would have answered. */
  readonly answer: (
    request: Request,
    next: () => Promise<Response>,
  ) => Response | Promise<Response>;
}

/** API keys the fake service knows by default. */
export const KEYS = {
  /** A key created with CI access. */
  ci: "sk_test_ci_4f1c9a7e2b3d",
  /** A key without CI access: 403 `ci_access_required`. */
  noCi: "sk_test_noci_8d2e6f0a1b",
} as const;

/** The agents of the demo and of most tests. */
export const AGENTS = {
  passing: "6f1d2c3b-0a9e-4c8d-9b7a-1e2f3a4b5c6d",
  failing: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
  inactive: "1b2c3d4e-5f60-4718-a9b0-c1d2e3f40516",
  noGate: "2c3d4e5f-6071-4829-b0c1-d2e3f4051627",
} as const;

/** The default agents: one of each prerequisite state. */
export function defaultAgents(runMs = 300): FakeAgent[] {
  const system = { id: "sys_staging", endpoint: "https://staging.example.internal/chat" };
  return [
    {
      id: AGENTS.passing,
      name: "guardian-prod-readiness",
      kind: "guardian",
      active: true,
      gate: { rule: "toxicity < 0.01", passes: true },
      system,
      runMs,
    },
    {
      id: AGENTS.failing,
      name: "red-team-jailbreaks",
      kind: "red_team",
      active: true,
      gate: { rule: "jailbreak success rate < 2%", passes: false },
      system,
      runMs,
    },
    {
      id: AGENTS.inactive,
      name: "guardian-retired",
      kind: "guardian",
      active: false,
      gate: { rule: "toxicity < 0.01", passes: true },
      system,
      runMs,
    },
    {
      id: AGENTS.noGate,
      name: "red-team-new",
      kind: "red_team",
      active: true,
      gate: null,
      system,
      runMs,
    },
  ];
}

/** Options of {@linkcode startFakeService}. */
export interface FakeServiceOptions {
  readonly agents?: readonly FakeAgent[];
  /** Known keys and whether each has CI access; default {@linkcode KEYS}. */
  readonly keys?: Readonly<Record<string, boolean>>;
  readonly port?: number;
  readonly hostname?: string;
  /** Serve HTTPS with this PEM certificate and key. */
  readonly tls?: { readonly cert: string; readonly key: string };
  /** Milliseconds a run stays `queued` before `running`; default a quarter of its length. */
  readonly queuedMs?: number;
  /**
   * Called with every request and a copy of the answer it got, before the answer is sent (for
   * tests that check each exchange, e.g. against docs/openapi.yaml). The answers stay the same.
   */
  readonly onExchange?: (request: LoggedRequest, response: Response) => void;
  /**
   * The service's clock, in milliseconds since the epoch: when requests arrive and how old a run
   * is. Default `Date.now`; a test on virtual time passes the program's clock.
   */
  readonly now?: () => number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const USER_AGENT = /^service-ci\/\d+\.\d+\.\d+\S* \([^;()]+; [^;()]+\)$/;
const METADATA_FIELDS = [
  "commit_sha",
  "branch",
  "pull_request_number",
  "repository",
  "actor",
  "provider",
  "build_url",
];

/** A running fake service. Use with `await using`. */
export class FakeService implements AsyncDisposable {
  /** The base URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: LoggedRequest[] = [];
  /** Every run created, by id. */
  readonly runs = new Map<string, FakeRun>();
  /** The most requests that were being handled at the same moment. */
  maxInFlight = 0;
  readonly #agents: Map<string, FakeAgent>;
  readonly #keys: Readonly<Record<string, boolean>>;
  readonly #rules: Array<{ rule: ScriptRule; left: number }> = [];
  readonly #server: Deno.HttpServer;
  readonly #queuedMs: number | undefined;
  readonly #onExchange: FakeServiceOptions["onExchange"];
  readonly #now: () => number;
  #inFlight = 0;
  #nextRun = 1;

  /** Use {@linkcode startFakeService}. */
  constructor(
    server: Deno.HttpServer,
    url: string,
    options: FakeServiceOptions,
    agents: Map<string, FakeAgent>,
  ) {
    this.#server = server;
    this.url = url;
    this.#agents = agents;
    this.#keys = options.keys ?? { [KEYS.ci]: true, [KEYS.noCi]: false };
    this.#queuedMs = options.queuedMs;
    this.#onExchange = options.onExchange;
    this.#now = options.now ?? Date.now;
  }

  /** Adds or replaces an agent. */
  setAgent(agent: FakeAgent): void {
    this.#agents.set(agent.id, agent);
  }

  readonly #closing = new AbortController();
  readonly #closed = new Promise<Response>((resolve) =>
    this.#closing.signal.addEventListener(
      "abort",
      () => resolve(new Response(null, { status: 503 })),
    )
  );

  /** Queues a scripted answer. */
  script(rule: ScriptRule): void {
    this.#rules.push({ rule, left: rule.times ?? 1 });
  }

  /** The requests to one operation: `POST` triggers or `GET` reads. */
  requestsOf(method: "GET" | "POST"): LoggedRequest[] {
    return this.requests.filter((request) => request.method === method);
  }

  /** Stops the server. */
  async shutdown(): Promise<void> {
    this.#closing.abort();
    await this.#server.shutdown();
  }

  /** Stops the server (for `await using`). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }

  /** @internal Handles one request. */
  async handle(request: Request): Promise<Response> {
    this.#inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.#inFlight);
    try {
      const body = await request.text();
      const url = new URL(request.url);
      const logged: LoggedRequest = {
        method: request.method,
        path: url.pathname + url.search,
        headers: Object.fromEntries(request.headers),
        body,
        at: this.#now(),
      };
      this.requests.push(logged);
      const next = () => this.#serve(request, url, body);
      const scripted = this.#takeRule(request, url);
      // A scripted hang ends when the service does: a client's closed connection is not always
      // seen by Deno.serve while a handler is pending (a direct loopback client's is not).
      const response = scripted === undefined
        ? await next()
        : await Promise.race([scripted.answer(request, next), this.#closed]);
      if (this.#onExchange !== undefined) {
        // Read the headers first: Deno 2.9's clone() drops headers that were never read.
        const { status, statusText, headers } = response;
        this.#onExchange(
          logged,
          new Response(response.clone().body, { status, statusText, headers }),
        );
      }
      return response;
    } finally {
      this.#inFlight--;
    }
  }

  #takeRule(request: Request, url: URL): ScriptRule | undefined {
    for (const entry of this.#rules) {
      const { rule } = entry;
      if (entry.left <= 0) continue;
      if (rule.method !== undefined && rule.method !== request.method) continue;
      if (rule.path !== undefined) {
        const matches = typeof rule.path === "string"
          ? url.pathname.includes(rule.path)
          : rule.path.test(url.pathname);
        if (!matches) continue;
      }
      entry.left--;
      return rule;
    }
    return undefined;
  }

  #serve(request: Request, url: URL, body: string): Promise<Response> {
    return Promise.resolve(this.#route(request, url, body));
  }

  #route(request: Request, url: URL, body: string): Response {
    const match = /^\/api\/v1\/agents\/([^/]+)\/runs(?:\/([^/]+))?$/.exec(url.pathname);
    if (match === null) return problem(404, "not_found", `no route for ${url.pathname}`);
    const agentId = decodeURIComponent(match[1]!);
    const runSegment = match[2];

    const key = request.headers.get("x-api-key");
    if (key === null || key === "") {
      return problem(401, "unauthenticated", "missing X-API-Key header");
    }
    if (!(key in this.#keys)) return problem(401, "invalid_api_key", "the API key is not valid");
    if (!this.#keys[key]) {
      return problem(
        403,
        "ci_access_required",
        "this API key lacks CI access; create a key with CI access under Settings → API Keys",
      );
    }
    if (!(request.headers.get("accept") ?? "").includes("application/json")) {
      return problem(406, "not_acceptable", "Accept must include application/json");
    }
    if (!USER_AGENT.test(request.headers.get("user-agent") ?? "")) {
      return problem(
        400,
        "invalid_user_agent",
        "User-Agent must be service-ci/<version> (<os>; <arch>)",
      );
    }
    if (!UUID.test(agentId)) return problem(404, "agent_not_found", `no agent ${agentId}`);
    const agent = this.#agents.get(agentId.toLowerCase());
    if (agent === undefined) return problem(404, "agent_not_found", `no agent ${agentId}`);

    if (runSegment === undefined && request.method === "POST") {
      return this.#trigger(request, agent, body);
    }
    if (runSegment === undefined && request.method === "GET") return this.#list(agent);
    if (runSegment !== undefined && request.method === "GET") {
      const run = this.runs.get(decodeURIComponent(runSegment));
      if (run === undefined || run.agentId !== agent.id) {
        return problem(
          404,
          "run_not_found",
          `no run ${decodeURIComponent(runSegment)} for agent ${agent.id}`,
        );
      }
      return json(200, this.runDocument(run, url.origin));
    }
    return problem(405, "method_not_allowed", `${request.method} is not allowed here`);
  }

  #trigger(request: Request, agent: FakeAgent, body: string): Response {
    if (!(request.headers.get("content-type") ?? "").startsWith("application/json")) {
      return problem(415, "unsupported_media_type", "Content-Type must be application/json");
    }
    const idempotencyKey = request.headers.get("idempotency-key") ?? "";
    if (!UUID_V4.test(idempotencyKey)) {
      return problem(400, "invalid_idempotency_key", "Idempotency-Key must be a UUID v4");
    }
    const invalid = validateTriggerBody(body);
    if (invalid !== null) return problem(422, "invalid_request", invalid);
    const existing = [...this.runs.values()].find((run) => run.idempotencyKey === idempotencyKey);
    if (existing !== undefined) {
      if (existing.requestBody !== body || existing.agentId !== agent.id) {
        return problem(
          422,
          "idempotency_key_reused",
          "the Idempotency-Key was used for another request",
        );
      }
      return json(201, this.runDocument(existing, new URL(request.url).origin));
    }
    if (!agent.active) {
      return problem(
        409,
        "agent_inactive",
        `agent ${agent.name} is inactive; activate it in the dashboard`,
      );
    }
    if (agent.gate === null) {
      return problem(
        422,
        "quality_gate_missing",
        `agent ${agent.name} has no quality gate configured`,
      );
    }
    const run: FakeRun = {
      runId: `run_${String(this.#nextRun++).padStart(4, "0")}`,
      agentId: agent.id,
      createdAt: this.#now(),
      idempotencyKey,
      requestBody: body,
      ciMetadata: (JSON.parse(body) as { ci_metadata: Record<string, unknown> }).ci_metadata,
    };
    this.runs.set(run.runId, run);
    return json(201, this.runDocument(run, new URL(request.url).origin));
  }

  #list(agent: FakeAgent): Response {
    const runs = [...this.runs.values()].filter((run) => run.agentId === agent.id).map((run) => ({
      ...this.runDocument(run, this.url),
      ci_metadata: run.ciMetadata,
    }));
    return json(200, { agent_id: agent.id, runs });
  }

  /** The document a run shows now. */
  runDocument(run: FakeRun, origin: string): Record<string, unknown> {
    const agent = this.#agents.get(run.agentId)!;
    const elapsed = this.#now() - run.createdAt;
    const base = {
      run_id: run.runId,
      agent_id: agent.id,
      created_at: new Date(run.createdAt).toISOString(),
      url: `${origin}/dashboard/agents/${agent.id}/runs/${run.runId}`,
    };
    const queuedMs = this.#queuedMs ?? agent.runMs / 4;
    if (elapsed < queuedMs) return { ...base, status: "queued" };
    if (elapsed < agent.runMs) return { ...base, status: "running" };
    if (agent.finished !== undefined) return { ...base, ...agent.finished(run) };
    return {
      ...base,
      status: "completed",
      results: { gate: { passed: agent.gate?.passes ?? false, rule: agent.gate?.rule ?? null } },
    };
  }
}

function validateTriggerBody(body: string): string | null {
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch {
    return "the body must be JSON";
  }
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    return "the body must be a JSON object";
  }
  const keys = Object.keys(document);
  if (keys.length !== 1 || keys[0] !== "ci_metadata") return "the body must hold only ci_metadata";
  const metadata = (document as { ci_metadata: unknown }).ci_metadata;
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) {
    return "ci_metadata must be an object";
  }
  const fields = Object.keys(metadata).sort();
  if (fields.join(",") !== [...METADATA_FIELDS].sort().join(",")) {
    return `ci_metadata must have exactly the fields ${METADATA_FIELDS.join(", ")}`;
  }
  const m = metadata as Record<string, unknown>;
  for (const field of ["commit_sha", "branch", "repository", "actor", "build_url"]) {
    if (m[field] !== null && typeof m[field] !== "string") {
      return `ci_metadata.${field} must be a string or null`;
    }
  }
  const pr = m.pull_request_number;
  if (pr !== null && !(Number.isInteger(pr) && (pr as number) > 0)) {
    return "ci_metadata.pull_request_number must be a positive integer or null";
  }
  if (typeof m.provider !== "string" || m.provider === "") {
    return "ci_metadata.provider must be a string";
  }
  return null;
}

/** A JSON answer. */
export function json(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** An error answer in the service's `{"error": {"code", "message"}}` shape. */
export function problem(status: number, code: string, message: string): Response {
  return json(status, { error: { code, message } });
}

/** An answer whose body is cut off after the headers: the client sees a dropped connection. */
export function cutOff(status = 201): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"run_id": "run_'));
      controller.error(new Error("connection dropped by the fake service"));
    },
  });
  return new Response(body, { status, headers: { "content-type": "application/json" } });
}

/** An answer that never comes (until the server shuts down or the client gives up). */
export function hang(signal: AbortSignal): Promise<Response> {
  return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
}

/**
 * Starts a fake service on `127.0.0.1`, on a free port unless told otherwise.
 *
 * @example
 * ```ts
 * await using service = await startFakeService();
 * console.log(service.url);
 * ```
 */
export function startFakeService(options: FakeServiceOptions = {}): Promise<FakeService> {
  const agents = new Map((options.agents ?? defaultAgents()).map((agent) => [agent.id, agent]));
  const hostname = options.hostname ?? "127.0.0.1";
  const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve({
    hostname,
    port: options.port ?? 0,
    ...(options.tls === undefined ? {} : { cert: options.tls.cert, key: options.tls.key }),
    onListen: () => {},
    onError: (error) =>
      problem(500, "internal", error instanceof Error ? error.message : String(error)),
  }, (request): Promise<Response> => service.handle(request));
  const scheme = options.tls === undefined ? "http" : "https";
  // A certificate names localhost, not the address.
  const host = options.tls !== undefined ? "localhost" : hostname;
  const service: FakeService = new FakeService(
    server,
    `${scheme}://${host}:${server.addr.port}`,
    options,
    agents,
  );
  return Promise.resolve(service);
}

if (import.meta.main) {
  const port = Number(Deno.args[0] ?? Deno.env.get("PORT") ?? 8787);
  const service = await startFakeService({ port, agents: defaultAgents(5_000) });
  console.log(`fake evaluation service on ${service.url}  (Ctrl-C stops it)

keys:    ${KEYS.ci} (CI access)    ${KEYS.noCi} (no CI access)
agents:  ${AGENTS.passing}  guardian, gate passes
         ${AGENTS.failing}  red team, gate fails
         ${AGENTS.inactive}  inactive
         ${AGENTS.noGate}  no quality gate

try:     SERVICE_API_KEY=${KEYS.ci} deno task start --base-url ${service.url} --agent ${AGENTS.passing}`);
}
