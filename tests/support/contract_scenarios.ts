/**
 * The contract (docs/contract.md §1, §2, §3, §5, §6) written once as scenarios: what the
 * fake service does, and the exit code and effects any implementation of the gate must show.
 * tests/contract_table_test.ts runs every scenario against both the TypeScript runner and
 * scripts/direct-api.sh, so the two cannot drift apart.
 */

import assert from "node:assert/strict";
import { ENDED_WITHOUT_VERDICT, FINISHED, IN_PROGRESS } from "../../src/service/verdict.ts";
import {
  AGENTS,
  cutOff,
  type FakeService,
  json,
  KEYS,
  type LoggedRequest,
  problem,
} from "./fake_service.ts";

/** What a scenario can script and inspect. */
export interface ScenarioContext {
  /** The service under the base URL. */
  readonly service: FakeService;
  /** A service on another origin (another port): the key must never reach it. */
  readonly elsewhere: FakeService;
  /** The wall clock the implementation reads (virtual time for a run in process). */
  readonly now: () => number;
}

/** What an implementation did in a scenario. */
export interface ScenarioRun extends ScenarioContext {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** One row of the contract table. */
export interface Scenario {
  /** What the service does, as a sentence. */
  readonly name: string;
  /** The group the scenario belongs to, for reports. */
  readonly group: string;
  /** The agent to run; default {@linkcode AGENTS.passing}. */
  readonly agent?: string;
  /** How long the fake service's runs take; default 60 s (so they stay queued unless scripted). */
  readonly runMs?: number;
  /** Extra command-line arguments after `--agent <agent>`. */
  readonly args?: readonly string[];
  /** Extra environment, on top of the key and the base URL. */
  readonly env?: Readonly<Record<string, string>>;
  /** Use a base URL where nothing listens. */
  readonly unreachable?: boolean;
  /** Scripts the fake services before the run. */
  readonly setup?: (context: ScenarioContext) => void;
  /** The exit code every implementation must give. */
  readonly exitCode: 0 | 1 | 2 | 3 | 4;
  /** What else must hold (requests received, what was printed). */
  readonly check?: (run: ScenarioRun) => void;
  /**
   * How long the waits are decides the outcome or the check: a script's waits must not be
   * shortened (virtual time, which the fake services share, keeps every wait whole).
   */
  readonly timed?: boolean;
}

/** The base URL's path of the default agent's runs. */
export function runsPath(agent: string = AGENTS.passing): string {
  return `/api/v1/agents/${agent}/runs`;
}

// `Retry-After: 0` is bounded up to 0.5 s (contract §1): the quickest next request a service can
// ask for, which keeps the table fast on both implementations.
const RETRY_NOW = { "retry-after": "0" };

async function _withHeaders(
  response: Response | Promise<Response>,
  headers: Record<string, string>,
): Promise<Response> {
  const answer = await response;
  const merged = new Headers(answer.headers);
  for (const [name, value] of Object.entries(headers)) merged.set(name, value);
  return new Response(answer.body, { status: answer.status, headers: merged });
}

function _redirect(status: number, location: string): Response {
  return new Response(null, { status, headers: { location } });
}

function _html(status: number, text: string): Response {
  return new Response(`<!doctype html><html><body>${text}</body></html>`, {
    status,
    headers: { "content-type": "text/html" },
  });
}

function _gap(from: LoggedRequest | undefined, to: LoggedRequest | undefined): number {
  assert.ok(from && to, "both requests were received");
  return to.at - from.at;
}

function _posts(run: ScenarioRun): LoggedRequest[] {
  return run.service.requestsOf("POST");
}

function _gets(run: ScenarioRun): LoggedRequest[] {
  return run.service.requestsOf("GET");
}

/** Every trigger of the run carried one Idempotency-Key and one body. */
function _oneTrigger(run: ScenarioRun, count: number): void {
  const posts = _posts(run);
  assert.equal(posts.length, count, "triggers sent");
  for (const post of posts) {
    assert.equal(post.headers["idempotency-key"], posts[0]!.headers["idempotency-key"]);
    assert.equal(post.body, posts[0]!.body);
  }
}

// ---- §2 the verdict table ------------------------------------------------------------------

/** The gate values of contract §2; `undefined` leaves `passed` out. */
const GATE_VALUES: ReadonlyArray<readonly [string, unknown]> = [
  ["true", true],
  ["false", false],
  ['"true"', "true"],
  ["1", 1],
  ["null", null],
  ["missing", undefined],
];

type StatusClass = "in_progress" | "ended" | "finished" | "unknown";

/** The statuses of src/service/verdict.ts's tables, an unknown one and none at all. */
const STATUSES: ReadonlyArray<readonly [string | undefined, StatusClass]> = [
  ...[...IN_PROGRESS].map((status) => [status, "in_progress"] as const),
  ...[...ENDED_WITHOUT_VERDICT].map((status) => [status, "ended"] as const),
  ...[...FINISHED].map((status) => [status, "finished"] as const),
  // Spelled as services spell them: the comparison folds case, `-` and space.
  ["In-Progress", "in_progress"],
  ["TIMED OUT", "ended"],
  ["Completed", "finished"],
  ["judged", "unknown"],
  [undefined, "unknown"],
];

function _verdictScenario(
  status: string | undefined,
  kind: StatusClass,
  gate: readonly [string, unknown],
): Scenario {
  const [gateName, passed] = gate;
  const document = {
    run_id: "run_0001",
    ...(status === undefined ? {} : { status }),
    results: { gate: passed === undefined ? {} : { passed } },
  };
  const boolean = typeof passed === "boolean";
  // A run still going is read again: the second read finishes it with passed true.
  const going = kind === "in_progress" || (kind === "unknown" && !boolean);
  const exitCode = going
    ? 0
    : kind === "ended"
    ? 3
    : passed === true
    ? 0
    : passed === false
    ? 1
    : 3;
  return {
    group: "§2 verdict",
    name: `status ${status === undefined ? "missing" : JSON.stringify(status)}, passed ${gateName}`,
    setup: ({ service }) => {
      service.script({
        method: "POST",
        answer: (_request, next) => _withHeaders(next(), RETRY_NOW),
      });
      service.script({ method: "GET", answer: () => json(200, document, RETRY_NOW) });
      service.script({
        method: "GET",
        times: 100,
        answer: () => json(200, { status: "completed", results: { gate: { passed: true } } }),
      });
    },
    exitCode,
    check: (run) => {
      assert.equal(_gets(run).length, going ? 2 : 1, "reads of the run");
      if (exitCode === 3) assert.match(run.stderr, /NOT CHECKED|could not be checked|UNCHECKED/i);
    },
  };
}

// Each status once, with the gate value that tells its class apart (a run still going misread as
// finished would fail, one that ended misread as finished would pass, …), and every gate value
// once per class. That the script's status lists equal src/service/verdict.ts's is checked apart, by
// parsing them (tests/direct_api_test.ts), so the full cross product need not be spawned.
const REVEALING: Readonly<Record<StatusClass, readonly [string, unknown]>> = {
  in_progress: ["false", false],
  ended: ["true", true],
  finished: ["false", false],
  unknown: ["1", 1],
};
const CLASS_EXAMPLES: ReadonlyArray<readonly [string | undefined, StatusClass]> = [
  ["running", "in_progress"],
  ["cancelled", "ended"],
  ["completed", "finished"],
  [undefined, "unknown"],
];

const VERDICTS: Scenario[] = [
  ...STATUSES.map(([status, kind]) => _verdictScenario(status, kind, REVEALING[kind])),
  ...CLASS_EXAMPLES.flatMap(([status, kind]) =>
    GATE_VALUES.filter(([gate]) => gate !== REVEALING[kind][0]).map((gate) =>
      _verdictScenario(status, kind, gate)
    )
  ),
];

// ---- §3 faults and retries -----------------------------------------------------------------

const TRIGGER_FAULTS: ReadonlyArray<readonly [string, () => Response]> = [
  ["500 with an error body", () => problem(500, "internal", "boom")],
  ["502 with an HTML page", () => _html(502, "bad gateway")],
  ["503", () => problem(503, "unavailable", "try again")],
  ["504", () => _html(504, "gateway timeout")],
  ["429", () => problem(429, "rate_limited", "slow down")],
  ["408", () => problem(408, "request_timeout", "too slow")],
  ["425", () => problem(425, "too_early", "too early")],
  ["a connection reset mid-answer", () => cutOff(201)],
  ["201 with an HTML page", () => _html(201, "created")],
  [
    "201 with truncated JSON",
    () => new Response('{"run_id":"run_0001","status":', { status: 201 }),
  ],
];

const FAULTS: Scenario[] = [
  ...TRIGGER_FAULTS.map(([what, answer]): Scenario => ({
    group: "§3 faults",
    name: `a trigger answered ${what} once is retried with the same Idempotency-Key`,
    runMs: 0,
    setup: ({ service }) => service.script({ method: "POST", answer }),
    exitCode: 0,
    check: (run) => {
      _oneTrigger(run, 2);
      assert.equal(run.service.runs.size, 1);
    },
  })),
  {
    group: "§3 faults",
    name: "a read answered 503 and then HTML is retried",
    runMs: 0,
    setup: ({ service }) => {
      service.script({ method: "GET", answer: () => problem(503, "unavailable", "later") });
      service.script({ method: "GET", answer: () => _html(200, "passed: false") });
    },
    exitCode: 0,
    check: (run) => assert.equal(_gets(run).length, 3),
  },
  {
    group: "§3 faults",
    name: "ten transient faults in a row on the trigger: the gate cannot be checked",
    setup: ({ service }) =>
      service.script({
        method: "POST",
        times: 100,
        answer: () => json(503, { error: { code: "down", message: "down" } }, RETRY_NOW),
      }),
    exitCode: 3,
    check: (run) => {
      _oneTrigger(run, 10);
      assert.match(run.stderr, /gave up after 10 failed attempts in a row/);
    },
  },
  {
    group: "§3 faults",
    name: "nine transient faults in a row and then an answer: the gate goes on",
    runMs: 0,
    setup: ({ service }) =>
      service.script({
        method: "POST",
        times: 9,
        answer: () => json(503, { error: { code: "down", message: "down" } }, RETRY_NOW),
      }),
    exitCode: 0,
    check: (run) => _oneTrigger(run, 10),
  },
  {
    group: "§3 faults",
    name: "a trigger answer without a usable run_id is not retried",
    setup: ({ service }) =>
      service.script({ method: "POST", answer: () => json(201, { run_id: "..", status: "x" }) }),
    exitCode: 3,
    check: (run) => {
      _oneTrigger(run, 1);
      assert.equal(_gets(run).length, 0);
    },
  },
];

// ---- §1 Retry-After and the polling schedule -----------------------------------------------

/** An HTTP date in the obsolete RFC 850 form: `Sunday, 06-Nov-94 08:49:37 GMT`. */
function _rfc850(date: Date): string {
  const [weekday, day, month, year, time] = date.toUTCString().replace(",", "").split(" ");
  const long = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    .find((name) => name.startsWith(weekday!))!;
  return `${long}, ${day}-${month}-${year!.slice(2)} ${time} GMT`;
}

const RETRY_AFTER: Scenario[] = [
  {
    group: "§1 Retry-After",
    name: "Retry-After in seconds on a 429 delays the retry",
    runMs: 0,
    timed: true,
    setup: ({ service }) =>
      service.script({
        method: "POST",
        answer: () =>
          json(429, { error: { code: "slow", message: "slow" } }, { "retry-after": "2" }),
      }),
    exitCode: 0,
    check: (run) => assert.ok(_gap(_posts(run)[0], _posts(run)[1]) >= 1_900),
  },
  {
    group: "§1 Retry-After",
    name: "Retry-After as an HTTP date on a 503 delays the retry",
    runMs: 0,
    timed: true,
    setup: ({ service, now }) =>
      service.script({
        method: "POST",
        answer: () =>
          json(503, { error: { code: "down", message: "down" } }, {
            "retry-after": new Date(now() + 3_000).toUTCString(),
          }),
      }),
    exitCode: 0,
    // The date has whole seconds: the wait is at least 2 s.
    check: (run) => assert.ok(_gap(_posts(run)[0], _posts(run)[1]) >= 1_900),
  },
  {
    group: "§1 Retry-After",
    name: "Retry-After as an RFC 850 date (two-digit year) on a 503 delays the retry",
    runMs: 0,
    timed: true,
    setup: ({ service, now }) =>
      service.script({
        method: "POST",
        answer: () =>
          json(503, { error: { code: "down", message: "down" } }, {
            "retry-after": _rfc850(new Date(now() + 3_000)),
          }),
      }),
    exitCode: 0,
    check: (run) => assert.ok(_gap(_posts(run)[0], _posts(run)[1]) >= 1_900),
  },
  {
    group: "§1 Retry-After",
    name: "Retry-After in seconds on a running run lengthens the polling schedule",
    timed: true,
    setup: ({ service }) => {
      service.script({
        method: "GET",
        answer: () => json(200, { status: "running" }, { "retry-after": "2" }),
      });
      service.script({
        method: "GET",
        answer: () => json(200, { status: "completed", results: { gate: { passed: false } } }),
      });
    },
    exitCode: 1,
    check: (run) => assert.ok(_gap(_gets(run)[0], _gets(run)[1]) >= 1_900),
  },
  {
    group: "§1 Retry-After",
    name: "without Retry-After the first read comes about a second after the trigger",
    runMs: 3_000,
    timed: true,
    exitCode: 0,
    check: (run) => {
      const gap = _gap(_posts(run)[0], _gets(run)[0]);
      assert.ok(gap >= 850 && gap < 2_500, `first read ${gap} ms after the trigger`);
    },
  },
  {
    group: "§1 Retry-After",
    name: "a trigger answer that already shows a verdict is read back at once",
    runMs: 0,
    timed: true,
    exitCode: 0,
    check: (run) => {
      const gap = _gap(_posts(run)[0], _gets(run)[0]);
      assert.ok(gap < 800, `first read ${gap} ms after the trigger`);
    },
  },
];

// ---- §3 redirects --------------------------------------------------------------------------

function _followed(method: "POST" | "GET", status: number): Scenario {
  return {
    group: "§3 redirects",
    name: `a ${method} answered ${status} to the same origin and path is followed`,
    runMs: 0,
    setup: ({ service }) =>
      service.script({
        method,
        answer: (request) =>
          _redirect(status, new URL(request.url).pathname + (method === "GET" ? "?again=1" : "")),
      }),
    exitCode: 0,
    check: (run) => {
      if (method === "POST") _oneTrigger(run, 2);
      else assert.equal(_gets(run).length, 2);
      for (const request of run.service.requests) {
        assert.equal(request.headers["x-api-key"], KEYS.ci);
      }
    },
  };
}

function _refused(
  name: string,
  method: "POST" | "GET",
  status: number,
  where: (context: ScenarioContext, request: Request) => string,
): Scenario {
  return {
    group: "§3 redirects",
    name,
    setup: (context) =>
      context.service.script({
        method,
        answer: (request) => _redirect(status, where(context, request)),
      }),
    exitCode: 3,
    check: (run) => {
      assert.equal(run.service.requestsOf(method).length, 1, `${method} requests`);
      assert.equal(run.elsewhere.requests.length, 0, "requests to the other origin");
      assert.ok(run.service.requests.every((request) => request.path.startsWith(runsPath())));
    },
  };
}

const REDIRECTS: Scenario[] = [
  _followed("POST", 307),
  _followed("POST", 308),
  ...[301, 302, 303, 307, 308].map((status) => _followed("GET", status)),
  _refused(
    "a trigger answered 302 is not followed (only 307/308 keep the method)",
    "POST",
    302,
    (_context, request) => new URL(request.url).pathname,
  ),
  _refused(
    "a trigger answered 303 is not followed",
    "POST",
    303,
    (_context, request) => new URL(request.url).pathname,
  ),
  _refused(
    "a trigger redirected to another origin is refused; the key is never sent there",
    "POST",
    307,
    ({ elsewhere }) => elsewhere.url + runsPath(),
  ),
  _refused(
    "a read redirected to another origin is refused; the key is never sent there",
    "GET",
    302,
    ({ elsewhere }, request) => elsewhere.url + new URL(request.url).pathname,
  ),
  _refused(
    "a trigger redirected outside the API path is refused",
    "POST",
    307,
    () => `/elsewhere${runsPath()}`,
  ),
  _refused(
    "a read redirected up out of the API path with dot segments is refused",
    "GET",
    301,
    () => `${runsPath()}/../../../../../admin`,
  ),
  _refused(
    "a redirect with credentials is refused",
    "POST",
    307,
    ({ service }) => service.url.replace("://", "://user:secret@") + runsPath(),
  ),
  {
    group: "§3 redirects",
    name: "five redirects in a row are followed",
    runMs: 0,
    setup: ({ service }) =>
      service.script({ method: "POST", times: 5, answer: () => _redirect(307, runsPath()) }),
    exitCode: 0,
    check: (run) => _oneTrigger(run, 6),
  },
  {
    group: "§3 redirects",
    name: "a sixth redirect in a row is refused",
    setup: ({ service }) =>
      service.script({ method: "POST", times: 100, answer: () => _redirect(307, runsPath()) }),
    exitCode: 3,
    check: (run) => _oneTrigger(run, 6),
  },
];

// ---- §3 refusals, 404 grace ----------------------------------------------------------------

function _refusal(
  name: string,
  options: Partial<Scenario> & { answer?: () => Response; hint: RegExp },
): Scenario {
  const { answer, hint, ...rest } = options;
  return {
    group: "§3 refusals",
    name,
    ...rest,
    setup: ({ service }) => {
      if (answer !== undefined) service.script({ method: "POST", answer });
    },
    exitCode: 3,
    check: (run) => {
      assert.equal(run.service.requests.length, 1, "requests sent");
      assert.match(run.stderr, hint);
    },
  };
}

const REFUSALS: Scenario[] = [
  _refusal("an unknown key is refused with 401", {
    env: { SERVICE_API_KEY: "sk_unknown_key" },
    hint: /fix: check that SERVICE_API_KEY holds a current API key/,
  }),
  // The fake service's 403 names the fix itself (Settings → API Keys): said once, no hint added.
  _refusal("a key without CI access is refused with 403, its fix named once", {
    env: { SERVICE_API_KEY: KEYS.noCi },
    hint: /lacks CI access; create a key with CI access under Settings → API Keys\n/,
  }),
  _refusal("an unknown agent is refused with 404 on the trigger", {
    agent: "00000000-0000-4000-8000-000000000000",
    hint: /fix: check the agent UUID and --base-url/,
  }),
  _refusal("an inactive agent is refused with 409 agent_inactive", {
    agent: AGENTS.inactive,
    hint: /fix: the agent is inactive: activate it/,
  }),
  _refusal("an agent without a gate is refused with 422 quality_gate_missing", {
    agent: AGENTS.noGate,
    hint: /fix: the agent has no quality gate: configure one/,
  }),
  _refusal("a 409 whose error code names the gate gets the gate's hint, not the status's", {
    answer: () => problem(409, "quality_gate_missing", "no gate"),
    hint: /fix: the agent has no quality gate/,
  }),
  _refusal("a system without an endpoint is named by its error code", {
    answer: () => problem(422, "system_endpoint_missing", "the system has no endpoint"),
    hint: /fix: the agent's system has no reachable endpoint/,
  }),
  _refusal("another 4xx is refused without a retry", {
    answer: () => problem(400, "bad_request", "the request is malformed"),
    hint: /the request is malformed/,
  }),
];

const GRACE: Scenario[] = [
  {
    group: "§3 404 grace",
    name: "a read answered 404 right after the trigger is retried",
    runMs: 0,
    setup: ({ service }) =>
      service.script({
        method: "GET",
        times: 2,
        answer: () => problem(404, "run_not_found", "not yet"),
      }),
    exitCode: 0,
    check: (run) => assert.equal(_gets(run).length, 3),
  },
  {
    group: "§3 404 grace",
    name: "eleven 404s right after the trigger do not count toward the ten faults",
    runMs: 0,
    setup: ({ service }) =>
      service.script({
        method: "GET",
        times: 11,
        answer: () => problem(404, "run_not_found", "not yet"),
      }),
    exitCode: 0,
    check: (run) => assert.equal(_gets(run).length, 12),
  },
];

// ---- §5 exit codes 2 and 4 -----------------------------------------------------------------

const EXIT_CODES: Scenario[] = [
  {
    group: "§5 exit codes",
    name: "an agent that is not a UUID is a usage error; nothing is sent",
    agent: "not-a-uuid",
    exitCode: 2,
    check: (run) => assert.equal(run.service.requests.length, 0),
  },
  {
    group: "§5 exit codes",
    name: "no key is a usage error; nothing is sent",
    env: { SERVICE_API_KEY: "" },
    exitCode: 2,
    check: (run) => assert.equal(run.service.requests.length, 0),
  },
  {
    group: "§5 exit codes",
    name: "a plaintext URL to a remote host is a usage error",
    env: { SERVICE_BASE_URL: "http://eval.example.com" },
    exitCode: 2,
  },
  {
    group: "§5 exit codes",
    name: "a run that outlasts --timeout-minutes ends with 4",
    args: ["--timeout-minutes", "0.02"],
    exitCode: 4,
  },
  {
    group: "§5 exit codes",
    name: "network errors until the deadline end with 4, not 3",
    args: ["--timeout-minutes", "0.02"],
    unreachable: true,
    // Shorter waits would reach the ten attempts before the deadline.
    timed: true,
    exitCode: 4,
  },
];

// ---- §6 the key is never printed -----------------------------------------------------------

const MASKING: Scenario[] = [
  {
    group: "§6 key masking",
    name: "a fault whose message echoes the key",
    runMs: 0,
    setup: ({ service }) =>
      service.script({
        method: "POST",
        answer: () => problem(500, "echo", `bad key ${KEYS.ci}`),
      }),
    exitCode: 0,
  },
  {
    group: "§6 key masking",
    name: "a refusal whose message echoes the key",
    setup: ({ service }) =>
      service.script({
        method: "POST",
        answer: () => problem(422, "invalid_request", `key ${KEYS.ci} is not allowed here`),
      }),
    exitCode: 3,
    check: (run) => assert.match(run.stderr, /is not allowed here/),
  },
  {
    group: "§6 key masking",
    name: "a run link and a status that carry the key",
    runMs: 0,
    setup: ({ service }) =>
      service.script({
        method: "GET",
        answer: () =>
          json(200, {
            status: `completed ${KEYS.ci}`,
            url: `https://dash.example/run?key=${KEYS.ci}`,
            results: { gate: { passed: false } },
          }),
      }),
    exitCode: 1,
  },
];

// An answer two JSON readers could read differently, or one about another run or agent: the
// gate cannot be checked (contract §2), whichever reading would pass. Each is answered once; a
// second read would pass, so an implementation that polls on instead of stopping is caught.
const GATES_TWICE: ReadonlyArray<readonly [string, string]> = [
  ["passed given twice, false then true", '{"passed":false,"passed":true}'],
  ["passed given twice, the second spelled with an escape", '{"passed":false,"pass\\u0065d":true}'],
  ["gate given twice", '{"passed":false},"gate":{"passed":true}'],
];
const AMBIGUOUS_ANSWERS: ReadonlyArray<readonly [string, string]> = [
  ...GATES_TWICE.map(([what, gate]) =>
    [what, `{"status":"completed","results":{"gate":${gate}}}`] as const
  ),
  [
    "results given twice",
    '{"status":"completed","results":{"gate":{"passed":false}},"results":{"gate":{"passed":true}}}',
  ],
  ["status failed with passed true", '{"status":"failed","results":{"gate":{"passed":true}}}'],
  [
    "another run's id",
    '{"run_id":"run_other","status":"completed","results":{"gate":{"passed":true}}}',
  ],
  [
    "another agent's id",
    `{"agent_id":"${AGENTS.failing}","status":"completed","results":{"gate":{"passed":true}}}`,
  ],
];
const AMBIGUITIES: Scenario[] = AMBIGUOUS_ANSWERS.map(([what, text]): Scenario => ({
  group: "§2 verdict",
  name: `an answer with ${what} cannot be checked`,
  setup: ({ service }) => {
    service.script({ method: "POST", answer: (_request, next) => _withHeaders(next(), RETRY_NOW) });
    service.script({
      method: "GET",
      answer: () =>
        new Response(text, { status: 200, headers: { "content-type": "application/json" } }),
    });
    service.script({
      method: "GET",
      times: 100,
      answer: () => json(200, { status: "completed", results: { gate: { passed: true } } }),
    });
  },
  exitCode: 3,
  check: (run) => {
    assert.equal(_gets(run).length, 1, "reads of the run");
    assert.match(run.stderr, /NOT CHECKED|could not be checked|UNCHECKED/i);
  },
}));

/** Every scenario of the contract table. */
export const SCENARIOS: readonly Scenario[] = [
  ...VERDICTS,
  ...AMBIGUITIES,
  ...FAULTS,
  ...RETRY_AFTER,
  ...REDIRECTS,
  ...REFUSALS,
  ...GRACE,
  ...EXIT_CODES,
  ...MASKING,
];
