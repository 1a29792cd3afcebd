/**
 * docs/openapi.yaml: linted by Redocly offline, its tables derived from the code it describes,
 * and its validator (tests/support/openapi.ts) shown to catch what breaks it. The end-to-end
 * exchanges are checked in tests/e2e/openapi_test.ts.
 */

import assert from "node:assert/strict";
import { systemClock } from "../../src/platform/clock.ts";
import { PROVIDERS } from "../../src/ci/providers.ts";
import { ServiceClient } from "../../src/service/client.ts";
import { NEW_RUN_GRACE_MS } from "../../src/service/poll.ts";
import {
  DEFAULT_MAX_INTERVAL_MS,
  FIRST_POLL_MS,
  GROWTH_PER_MS_OF_AGE,
  JITTER,
  MAX_CONSECUTIVE_FAULTS,
  RETRY_AFTER_MAX_MS,
  RETRY_AFTER_MIN_MS,
} from "../../src/service/timing.ts";
import { ENDED_WITHOUT_VERDICT, FINISHED, IN_PROGRESS } from "../../src/service/verdict.ts";
import { userAgent } from "../../src/config/version.ts";
import { AGENTS, KEYS } from "../support/fake_service.ts";
import { readSpec, SPEC_PATH, SpecValidator } from "../support/openapi.ts";
import { MAX_BODY_BYTES, MAX_REDIRECTS } from "../../src/http/fetch.ts";

const REDOCLY = "npm:@redocly/cli@2.77.0";
const ROOT = new URL("../../", import.meta.url).pathname;

/**
 * Runs Redocly's lint with every warning an error, and without network permission, so a lint
 * that tried to reach the network (telemetry, update checks, remote rules) would fail here.
 * `info-license` is skipped until the project has a licence to name.
 */
async function lint(path: string): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      "--allow-read",
      "--allow-env",
      "--allow-sys",
      REDOCLY,
      "lint",
      "--extends=recommended-strict",
      "--skip-rule=info-license",
      path,
    ],
    cwd: ROOT,
    env: { REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code, output: decoder.decode(stdout) + decoder.decode(stderr) };
}

// deno-lint-ignore no-explicit-any
type Spec = Record<string, any>;
const spec: Spec = await readSpec();

Deno.test("docs/openapi.yaml passes Redocly's recommended-strict lint without the network", async () => {
  const { code, output } = await lint(SPEC_PATH);
  assert.equal(code, 0, output);
  assert.match(output, /Your API description is valid/);
});

Deno.test("Redocly's lint fails a description with a dangling reference", async () => {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-openapi-" });
  try {
    const broken = (await Deno.readTextFile(SPEC_PATH))
      .replace('"#/components/schemas/TriggerAnswer"', '"#/components/schemas/TriggerReply"');
    await Deno.writeTextFile(`${dir}/openapi.yaml`, broken);
    const { code, output } = await lint(`${dir}/openapi.yaml`);
    assert.notEqual(code, 0, output);
    assert.match(output, /TriggerReply/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the spec's providers are the ones src/ci/providers.ts detects, in its order, then local", () => {
  assert.deepEqual(spec.components.schemas.Provider.enum, [
    ...PROVIDERS.map((provider) => provider.id),
    "local",
  ]);
});

Deno.test("the spec's run statuses are src/service/verdict.ts's tables", () => {
  const { schemas } = spec.components;
  assert.deepEqual(new Set(schemas.RunStatusInProgress.enum), IN_PROGRESS);
  assert.deepEqual(new Set(schemas.RunStatusEndedWithoutVerdict.enum), ENDED_WITHOUT_VERDICT);
  assert.deepEqual(new Set(schemas.RunStatusFinished.enum), FINISHED);
  assert.deepEqual(schemas.RunStatus.anyOf.slice(0, 3), [
    { $ref: "#/components/schemas/RunStatusInProgress" },
    { $ref: "#/components/schemas/RunStatusEndedWithoutVerdict" },
    { $ref: "#/components/schemas/RunStatusFinished" },
  ]);
});

Deno.test("the numbers the spec's prose gives are the code's constants", async () => {
  const text = (await Deno.readTextFile(SPEC_PATH)).replace(/\s+/g, " ");
  for (
    const phrase of [
      `bounded to ${RETRY_AFTER_MIN_MS / 1000} s … ${RETRY_AFTER_MAX_MS / 60_000} min`,
      `until ${MAX_CONSECUTIVE_FAULTS} in a row`,
      `less than ${NEW_RUN_GRACE_MS / 1000} s after the trigger`,
      `at most ${MAX_REDIRECTS} times`,
      `read up to ${MAX_BODY_BYTES / 1024 / 1024} MiB`,
      `reads first about ${FIRST_POLL_MS / 1000} s after the trigger`,
      `${FIRST_POLL_MS / 1000} s + ${GROWTH_PER_MS_OF_AGE * 100} % of its age`,
      `capped at ${DEFAULT_MAX_INTERVAL_MS / 1000} s`,
      `±${JITTER * 100} % jitter`,
    ]
  ) {
    assert.ok(text.includes(phrase), `docs/openapi.yaml says "${phrase}"`);
  }
});

Deno.test("the spec declares every header src/service/client.ts sends, and this build's User-Agent matches it", () => {
  const client = new ServiceClient({
    baseUrl: new URL("https://service.invalid"),
    apiKey: KEYS.ci,
    userAgent: userAgent(),
    requestTimeoutMs: 1_000,
    fetch,
    clock: systemClock,
    timeout: systemClock.timeout,
  });
  const sent = [...client.headers(crypto.randomUUID()).keys()].sort();
  const { parameters, securitySchemes } = spec.components;
  const declared = [
    securitySchemes.ApiKey.name,
    ...Object.values(parameters as Spec).filter((p) => p.in === "header").map((p) => p.name),
    // OpenAPI has no header parameters for these two: the request body's and the answers'
    // media types stand for them, and the description names them.
    "Content-Type",
    "Accept",
  ].map((name: string) => name.toLowerCase()).sort();
  assert.deepEqual(sent, declared);
  assert.match(userAgent(), new RegExp(parameters.UserAgent.schema.pattern, "u"));
});

const validator = await SpecValidator.create();
const TRIGGER = {
  method: "POST",
  path: `/api/v1/agents/${AGENTS.passing}/runs`,
  headers: {
    "x-api-key": KEYS.ci,
    "accept": "application/json",
    "user-agent": "service-ci/1.0.0 (linux; x86_64)",
    "content-type": "application/json",
    "idempotency-key": "3b241101-e2bb-4255-8caf-4136c566a962",
  },
  body: JSON.stringify({
    ci_metadata: {
      commit_sha: "4f1c2d3e",
      branch: "main",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "github_actions",
      build_url: "https://ci.example/jobs/1",
    },
  }),
  at: 0,
};
const READ = {
  method: "GET",
  path: `/api/v1/agents/${AGENTS.passing}/runs/run_0001`,
  headers: {
    "x-api-key": KEYS.ci,
    "accept": "application/json",
    "user-agent": "service-ci/1.0.0 (linux; x86_64)",
  },
  body: "",
  at: 0,
};
const JSON_TYPE = { "content-type": "application/json" };

Deno.test("the validator passes a request and answers that follow the spec", () => {
  assert.deepEqual(validator.checkRequest(TRIGGER), []);
  assert.deepEqual(validator.checkRequest(READ), []);
  assert.deepEqual(
    validator.checkAnswer(TRIGGER, {
      status: 202,
      headers: { ...JSON_TYPE, "retry-after": "Wed, 21 Oct 2026 07:28:00 GMT" },
      body: '{"run_id": "run_0001", "status": "queued"}',
    }),
    [],
  );
  assert.deepEqual(
    validator.checkAnswer(READ, {
      status: 200,
      headers: JSON_TYPE,
      body: '{"status": "In-Progress"}',
    }),
    [],
  );
});

Deno.test("the validator catches requests that break the spec", () => {
  const metadata = JSON.parse(TRIGGER.body).ci_metadata;
  const bad = {
    ...TRIGGER,
    headers: {
      "accept": "text/html",
      "user-agent": "curl/8.5.0",
      "content-type": "application/json",
    },
    body: JSON.stringify({
      ci_metadata: { ...metadata, provider: "gitea", pull_request_number: 0 },
      source: "…",
    }),
  };
  const problems = validator.checkRequest(bad).join("\n");
  for (
    const expected of [
      /\/header must have required property 'idempotency-key'/,
      /\/header\/user-agent must match pattern/,
      /\/requestBody must NOT have additional properties/,
      /\/requestBody\/ci_metadata\/provider must be equal to one of the allowed values/,
      /\/requestBody\/ci_metadata\/pull_request_number must be >= 1/,
      /header X-API-Key \(security scheme ApiKey\) is missing/,
      /Accept "text\/html" refuses application\/json/,
    ]
  ) {
    assert.match(problems, expected);
  }
  assert.deepEqual(validator.checkRequest({ ...READ, method: "DELETE" }), [
    `DELETE ${READ.path}: no operation of docs/openapi.yaml matches it`,
  ]);
});

Deno.test("the validator catches answers that break the spec", () => {
  const cases: Array<[typeof READ, number, Record<string, string>, string, RegExp]> = [
    [TRIGGER, 200, JSON_TYPE, '{"run_id": "r"}', /triggerRun answer 200: status not declared/],
    [TRIGGER, 201, JSON_TYPE, '{"id": "r"}', /must have required property 'run_id'/],
    [TRIGGER, 201, JSON_TYPE, '{"run_id": ".."}', /\/run_id must NOT be valid/],
    [TRIGGER, 302, { location: "/elsewhere" }, "", /triggerRun answer 302: status not declared/],
    [TRIGGER, 307, {}, "", /required header Location is missing/],
    [READ, 200, JSON_TYPE, '{"results": {"gate": {"passed": "true"}}}', /passed must be boolean/],
    [READ, 200, { "content-type": "text/html" }, "<html>", /a body of type "text\/html"/],
    [READ, 200, JSON_TYPE, '{"run_id": "r"', /a body that is not JSON/],
    [READ, 429, { ...JSON_TYPE, "retry-after": "soon" }, "{}", /retry-after must match a schema/],
    [READ, 500, JSON_TYPE, '{"oops": true}', /must match a schema in anyOf/],
  ];
  for (const [request, status, headers, body, expected] of cases) {
    assert.match(validator.checkAnswer(request, { status, headers, body }).join("\n"), expected);
  }
});
