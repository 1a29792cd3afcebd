import assert from "node:assert/strict";
import { systemClock } from "../../src/platform/clock.ts";
import { FakeTime } from "../support/fake_time.ts";
import { forgeConfig } from "../support/native_io.ts";
import type { CiMetadata } from "../../src/ci/detect.ts";
import { MAX_ATTEMPTS } from "../../src/forge/http.ts";
import { gateMarker, hasMarker, readHistory } from "../../src/forge/comment/history.ts";
import { type PullRequestComment, pullRequestComment } from "../../src/outputs/pr_comment.ts";
import type { ForgeHttp } from "../../src/forge/http.ts";
import { ForgeClients } from "../../src/forge/clients.ts";
import type { Clock } from "../../src/effects.ts";
import type { ForgeConfig, ForgeSkip } from "../../src/forge/forge.ts";
import { forgeTarget } from "../../src/forge/target.ts";
import type { CiContext } from "../../src/ci/detect.ts";
import {
  type FakeForge,
  FORGE_IDENTITIES,
  FORGE_TARGET,
  FORGE_TOKENS,
  startFakeGithub,
  startFakeGitlab,
} from "../support/fake_forge.ts";
import {
  AGENT_IDS,
  githubMetadata,
  makeAgent,
  makeReport,
  mixedReport,
  passingReport,
} from "../support/report_fixtures.ts";

const AGENTS = [AGENT_IDS.passed];
const USER_AGENT = "service-ci/1.0.0 (linux; x86_64)";

const gitlabMetadata: CiMetadata = {
  ...githubMetadata,
  provider: "gitlab",
  pull_request_number: FORGE_TARGET.mergeRequest,
  repository: "acme/widgets",
};

const progress = {
  commitSha: githubMetadata.commit_sha,
  buildUrl: githubMetadata.build_url,
  runs: [{ agentId: AGENT_IDS.passed, runId: "run_1", url: "https://service.example/runs/run_1" }],
};

interface PullRequestCommentOptions {
  readonly fetch: typeof fetch;
  readonly clock: Pick<Clock, "now" | "sleep">;
  readonly timeout: (ms: number) => AbortSignal;
  readonly requestTimeoutMs?: number;
  readonly metadata: CiMetadata;
  readonly context?: CiContext | undefined;
  readonly agents: readonly string[];
  readonly userAgent: string;
  readonly warn: (line: string) => void;
}

// The comment as the run makes it, with a client of its own.
function fromEnv(
  config: ForgeConfig,
  options: PullRequestCommentOptions,
): PullRequestComment | ForgeSkip {
  const target = forgeTarget(config, options, "comment");
  if ("skip" in target) return target;
  const clients = new ForgeClients({
    ...options,
    http: { makeFetch: () => options.fetch, timeout: options.timeout },
  });
  return pullRequestComment(target, clients.http(target), options);
}

interface Harness {
  readonly comment: PullRequestComment;
  readonly warnings: string[];
  readonly sleeps: number[];
  /** The origin of every request the comment sent. */
  readonly origins: string[];
}

function githubEnv(forge: FakeForge, token: string = FORGE_TOKENS.github) {
  return {
    GITHUB_TOKEN: token,
    GITHUB_API_URL: forge.apiUrl,
    GITHUB_REPOSITORY: FORGE_TARGET.repository,
    GITHUB_WORKFLOW: "ci",
    GITHUB_JOB: "gate",
  };
}

function gitlabEnv(forge: FakeForge, token: string = FORGE_TOKENS.gitlab) {
  return {
    SERVICE_GITLAB_TOKEN: token,
    CI_API_V4_URL: forge.apiUrl,
    CI_PROJECT_ID: FORGE_TARGET.projectId,
    CI_MERGE_REQUEST_IID: String(FORGE_TARGET.mergeRequest),
    CI_JOB_NAME: "gate",
  };
}

function harness(
  env: Record<string, string | undefined>,
  overrides: Partial<PullRequestCommentOptions> = {},
): Harness {
  const warnings: string[] = [];
  const sleeps: number[] = [];
  const origins: string[] = [];
  const spy: typeof fetch = (input, init) => {
    origins.push(new URL(input instanceof Request ? input.url : String(input)).origin);
    return fetch(input, init);
  };
  const made = fromEnv(forgeConfig(env), {
    metadata: githubMetadata,
    agents: AGENTS,
    userAgent: USER_AGENT,
    warn: (line) => warnings.push(line),
    fetch: spy,
    clock: {
      sleep: (ms) => {
        sleeps.push(ms);
        return Promise.resolve();
      },
      now: () => Date.UTC(2026, 0, 1),
    },
    timeout: systemClock.timeout,
    ...overrides,
  });
  if ("skip" in made) throw new Error(`unexpected skip: ${made.skip}`);
  return { comment: made, warnings, sleeps, origins };
}

// A client that is made but never sends: the real effects, named.
const REAL = { fetch, clock: systemClock, timeout: systemClock.timeout };

function skipOf(
  env: Record<string, string | undefined>,
  metadata: CiMetadata = githubMetadata,
): string {
  const made = fromEnv(forgeConfig(env), {
    metadata,
    agents: AGENTS,
    userAgent: USER_AGENT,
    warn: () => {},
    ...REAL,
  });
  assert.ok("skip" in made, "expected a skip");
  return made.skip;
}

const marker = gateMarker({ workflow: "ci", job: "gate", agents: AGENTS });

Deno.test("PullRequestComment on GitHub creates the in-progress comment, then edits it with the verdicts", async () => {
  await using github = await startFakeGithub();
  const { comment, warnings, origins } = harness(githubEnv(github));

  await comment.begin(progress);
  assert.equal(github.comments.length, 1);
  const created = github.comments[0]!;
  assert.ok(hasMarker(created.body, marker), created.body);
  assert.match(created.body, /quality gate running/);
  assert.match(
    created.body,
    /run\\_1 \(\[dashboard\]\(<https:\/\/service\.example\/runs\/run_1>\)\)/,
  );

  await comment.finish(passingReport);
  assert.equal(github.comments.length, 1);
  assert.equal(github.comments[0]!.id, created.id);
  assert.match(github.comments[0]!.body, /✅ service-ci: quality gate passed/);
  assert.ok(hasMarker(github.comments[0]!.body, marker));

  // The verdicts look again first: an overlapping run may have written a copy to remove.
  assert.deepEqual(github.commentRequests.map((request) => `${request.method} ${request.path}`), [
    "GET /repos/acme/widgets/issues/42/comments?per_page=100",
    "POST /repos/acme/widgets/issues/42/comments",
    "GET /repos/acme/widgets/issues/42/comments?per_page=100",
    `PATCH /repos/acme/widgets/issues/comments/${created.id}`,
  ]);
  assert.deepEqual(warnings, []);
  assert.ok(origins.every((origin) => origin === github.origin), origins.join());
});

Deno.test("PullRequestComment on GitHub sends the token, headers and a JSON body with every request", async () => {
  await using github = await startFakeGithub();
  const { comment } = harness(githubEnv(github));
  await comment.begin(progress);
  await comment.finish(mixedReport);
  assert.equal(github.commentRequests.length, 4);
  for (const request of github.commentRequests) {
    assert.equal(request.headers.authorization, `Bearer ${FORGE_TOKENS.github}`);
    assert.equal(request.headers.accept, "application/vnd.github+json");
    assert.equal(request.headers["x-github-api-version"], "2022-11-28");
    assert.equal(request.headers["user-agent"], USER_AGENT);
    assert.equal(request.headers["x-api-key"], undefined);
    assert.ok(!request.path.includes(FORGE_TOKENS.github));
  }
  for (const request of github.writes) {
    assert.equal(request.headers["content-type"], "application/json");
    const body = JSON.parse(request.body) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ["body"]);
    assert.ok(!request.body.includes(FORGE_TOKENS.github));
  }
});

Deno.test("PullRequestComment on GitHub finds its comment on the third page and edits it", async () => {
  const comments = Array.from({ length: 250 }, (_, index) => ({
    id: 100 + index,
    body: index === 230 ? `${marker}\nold text` : `comment ${index}`,
  }));
  // A reply quoting our marker further down is not ours.
  comments[10] = { id: 110, body: `> ${marker}\n> quoted` };
  await using github = await startFakeGithub({ comments });
  const { comment, warnings } = harness(githubEnv(github));
  await comment.begin(progress);
  assert.deepEqual(github.commentRequests.map((request) => `${request.method} ${request.path}`), [
    "GET /repos/acme/widgets/issues/42/comments?per_page=100",
    "GET /repos/acme/widgets/issues/42/comments?per_page=100&page=2",
    "GET /repos/acme/widgets/issues/42/comments?per_page=100&page=3",
    "PATCH /repos/acme/widgets/issues/comments/330",
  ]);
  assert.equal(github.comments.length, 250);
  assert.match(github.comments[230]!.body, /quality gate running/);
  assert.equal(github.comments[10]!.body, `> ${marker}\n> quoted`);
  assert.deepEqual(warnings, []);
});

Deno.test("PullRequestComment keeps one comment per gate when two gates report on one pull request", async () => {
  await using github = await startFakeGithub();
  const first = harness(githubEnv(github), { agents: [AGENT_IDS.passed] });
  const second = harness(githubEnv(github), { agents: [AGENT_IDS.failed] });
  await first.comment.finish(passingReport);
  await second.comment.finish(makeReport([makeAgent({ agentId: AGENT_IDS.failed })]));
  assert.equal(github.comments.length, 2);

  // A later run of the first gate, agents in another order, edits the first comment only.
  const again = harness(githubEnv(github), { agents: [AGENT_IDS.passed.toUpperCase()] });
  await again.comment.finish(mixedReport);
  assert.equal(github.comments.length, 2);
  assert.match(github.comments[0]!.body, /could not be checked/);
  assert.match(github.comments[1]!.body, new RegExp(AGENT_IDS.failed.replaceAll("-", "\\\\-")));
  assert.doesNotMatch(github.comments[1]!.body, /could not be checked/);
});

Deno.test("PullRequestComment writes the verdicts even when begin() is still running", async () => {
  await using github = await startFakeGithub();
  const { comment } = harness(githubEnv(github));
  const begun = comment.begin(progress);
  await comment.finish(passingReport);
  await begun;
  assert.equal(github.comments.length, 1);
  assert.match(github.comments[0]!.body, /quality gate passed/);
});

Deno.test("PullRequestComment writes a new comment when its comment was deleted since begin()", async () => {
  await using github = await startFakeGithub();
  const { comment, warnings } = harness(githubEnv(github));
  await comment.begin(progress);
  github.comments.splice(0);
  await comment.finish(passingReport);
  assert.equal(github.comments.length, 1);
  assert.match(github.comments[0]!.body, /quality gate passed/);
  assert.deepEqual(warnings, []);
});

Deno.test("PullRequestComment stays under GitHub's size limit with 2,000 agents", async () => {
  await using github = await startFakeGithub();
  const agents = Array.from({ length: 2000 }, (_, index) =>
    makeAgent({
      agentId: `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`,
      runId: `run_${index}`,
      url: `https://service.example/runs/run_${index}`,
    }));
  const { comment, warnings } = harness(githubEnv(github));
  await comment.finish(makeReport(agents));
  assert.deepEqual(warnings, []);
  assert.equal(github.comments.length, 1);
  const body = github.comments[0]!.body;
  assert.ok(body.length <= 60_000, String(body.length));
  assert.match(body, /… and \d+ more agents \(\d+ passed\)/);
});

Deno.test("PullRequestComment.fromEnv() says why there is no comment on GitHub", () => {
  const env = {
    GITHUB_TOKEN: FORGE_TOKENS.github,
    GITHUB_REPOSITORY: "acme/widgets",
  };
  assert.match(
    skipOf(env, { ...githubMetadata, pull_request_number: null }),
    /^service-ci: no pull-request comment: this build is not for a pull request/,
  );
  assert.match(
    skipOf({ ...env, GITHUB_TOKEN: "" }),
    /GITHUB_TOKEN is not set.*pull-requests: write/,
  );
  // The HTTP policy's rule and words, as for --base-url.
  assert.equal(
    skipOf({ ...env, GITHUB_API_URL: "http://api.example" }),
    'service-ci: no pull-request comment: GITHUB_API_URL must use https:// for a remote host; plain http:// is only allowed for localhost, 127.0.0.0/8 and [::1] (got "http://api.example")',
  );
  for (const loopback of ["http://localhost:8080", "http://127.0.0.2", "http://[::1]:9"]) {
    const made = fromEnv(forgeConfig({ ...env, GITHUB_API_URL: loopback }), {
      metadata: githubMetadata,
      agents: AGENTS,
      userAgent: USER_AGENT,
      warn: () => {},
      ...REAL,
    });
    assert.ok(!("skip" in made), `${loopback}: ${"skip" in made ? made.skip : ""}`);
  }
  assert.match(
    skipOf(env, { ...githubMetadata, repository: "not a slug" }),
    /repository must be "owner\/name"/,
  );
  assert.match(
    skipOf(env, { ...githubMetadata, provider: "circleci" }),
    /GitHub Actions and GitLab CI only \(this build: circleci\)/,
  );
});

Deno.test("PullRequestComment on GitHub with a read-only token warns once and leaves the run alone", async () => {
  await using github = await startFakeGithub({ readOnly: true });
  const { comment, warnings } = harness(githubEnv(github));
  await comment.begin(progress);
  await comment.finish(passingReport);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /^service-ci: the pull-request comment was not written: GitHub/);
  assert.match(warnings[0]!, /403: Resource not accessible by integration/);
  assert.match(warnings[0]!, /permissions: pull-requests: write/);
  assert.match(warnings[0]!, /verdict and exit code are not affected/);
  // Nothing more is tried after a refusal that would only repeat.
  assert.deepEqual(github.commentRequests.map((request) => request.method), ["GET", "POST"]);
});

Deno.test("PullRequestComment on GitHub with a wrong token says so without printing it, and sends nothing more", async () => {
  await using github = await startFakeGithub();
  const wrong = "ghs_wrongToken_abcdef123456";
  github.script({
    path: "/user",
    answer: () => Response.json({ message: `Bad credentials for ${wrong}` }, { status: 401 }),
  });
  const { comment, warnings } = harness(githubEnv(github, wrong));
  await comment.begin(progress);
  await comment.finish(passingReport);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /GET \/user with 401: Bad credentials for \*\*\*/);
  assert.match(warnings[0]!, /Check GITHUB_TOKEN/);
  assert.ok(!warnings[0]!.includes(wrong));
  // A 401 is final: no request follows it (docs/pr-comment.md).
  assert.deepEqual(github.requests.map((request) => `${request.method} ${request.path}`), [
    "GET /user",
  ]);
});

Deno.test("PullRequestComment on GitHub reports a repository the token cannot see", async () => {
  await using github = await startFakeGithub();
  const { comment, warnings } = harness({ ...githubEnv(github) }, {
    metadata: { ...githubMetadata, repository: "acme/secret" },
  });
  await comment.finish(passingReport);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /with 404: Not Found\. The token cannot see this repository/);
});

Deno.test("PullRequestComment on GitHub waits until a used-up rate limit resets, then writes", async () => {
  await using github = await startFakeGithub();
  const reset = Date.UTC(2026, 0, 1) / 1000 + 30 * 60;
  github.script({
    times: 2,
    answer: () =>
      Response.json({ message: "API rate limit exceeded" }, {
        status: 403,
        headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(reset) },
      }),
  });
  const { comment, warnings, sleeps } = harness(githubEnv(github));
  await comment.begin(progress);
  await comment.finish(passingReport);
  // Each answer paused the forge until x-ratelimit-reset; then the same request went again.
  assert.deepEqual(sleeps, [30 * 60_000, 30 * 60_000]);
  assert.deepEqual(warnings, []);
  assert.equal(github.comments.length, 1);
});

Deno.test("PullRequestComment gives up, saying nothing itself, when the pause outlasts the time left", async () => {
  await using github = await startFakeGithub();
  github.script({
    answer: () =>
      Response.json({ message: "You have exceeded a secondary rate limit" }, { status: 403 }),
  });
  const { comment, warnings, sleeps } = harness(githubEnv(github));
  const window = { endsAt: Date.UTC(2026, 0, 1) + 5_000, signal: new AbortController().signal };
  await comment.finish(passingReport, window);
  // A 403 whose message says rate limit is a rate limit (GitHub's secondary limit gives no
  // header): a minute's pause, past the 5 s left, so the write is given up; the run's forge
  // clients say so in one line (forge/clients.ts), and no permission is asked for. The pause
  // began; nothing waited for it.
  assert.deepEqual(sleeps, [60_000]);
  assert.deepEqual(warnings, []);
  assert.equal(github.comments.length, 0);
  assert.equal(github.commentRequests.length, 1);
});

Deno.test("PullRequestComment on GitHub waits out a short Retry-After and then writes", async () => {
  await using github = await startFakeGithub();
  github.script({
    answer: () =>
      Response.json({ message: "secondary rate limit" }, {
        status: 429,
        headers: { "retry-after": "2" },
      }),
  });
  const { comment, warnings, sleeps } = harness(githubEnv(github));
  await comment.finish(passingReport);
  assert.deepEqual(sleeps, [2000]);
  assert.deepEqual(warnings, []);
  assert.equal(github.comments.length, 1);
});

Deno.test("PullRequestComment on GitHub waits out a long Retry-After when no time limit is set", async () => {
  await using github = await startFakeGithub();
  github.script({
    answer: () =>
      Response.json({ message: "slow down" }, {
        status: 429,
        headers: { "retry-after": "600" },
      }),
  });
  const { comment, warnings, sleeps } = harness(githubEnv(github));
  await comment.finish(passingReport);
  assert.deepEqual(sleeps, [600_000]);
  assert.deepEqual(warnings, []);
  assert.equal(github.comments.length, 1);
});

Deno.test("PullRequestComment on GitHub retries 5xx answers a bounded number of times", async () => {
  await using github = await startFakeGithub();
  github.script({
    method: "GET",
    times: 2,
    answer: () => new Response("bad gateway", { status: 502 }),
  });
  const recovered = harness(githubEnv(github));
  await recovered.comment.finish(passingReport);
  assert.deepEqual(recovered.sleeps, [1000, 2000]);
  assert.deepEqual(recovered.warnings, []);
  assert.equal(github.comments.length, 1);

  github.script({ times: 99, answer: () => new Response("down", { status: 503 }) });
  const failing = harness(githubEnv(github));
  const before = github.commentRequests.length;
  await failing.comment.finish(passingReport);
  assert.equal(github.commentRequests.length - before, MAX_ATTEMPTS);
  assert.equal(failing.warnings.length, 1);
  assert.match(failing.warnings[0]!, /GitHub answered GET .* with 503: down\./);
});

Deno.test("PullRequestComment on GitHub looks again before creating a second comment after a 5xx", async () => {
  await using github = await startFakeGithub();
  // The create fails after the comment was stored: a second create would duplicate it.
  github.script({
    method: "POST",
    answer: async (_request, next) => {
      await next();
      return new Response("oops", { status: 500 });
    },
  });
  const { comment, warnings } = harness(githubEnv(github));
  await comment.finish(passingReport);
  assert.deepEqual(warnings, []);
  assert.equal(github.comments.length, 1);
  assert.deepEqual(github.commentRequests.map((request) => request.method), [
    "GET",
    "POST",
    "GET",
    "PATCH",
  ]);
});

Deno.test("PullRequestComment on GitHub reports a network error after its retries", async () => {
  await using github = await startFakeGithub();
  const { comment, warnings, sleeps } = harness(githubEnv(github), {
    fetch: () => Promise.reject(new TypeError("connection refused")),
  });
  await comment.finish(passingReport);
  assert.deepEqual(sleeps, [1000, 2000]);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /GitHub could not be reached \(TypeError: connection refused\)/);
});

Deno.test("PullRequestComment on GitHub treats a hung request as a network error", async () => {
  await using github = await startFakeGithub();
  const hang = Promise.withResolvers<void>();
  github.script({
    times: MAX_ATTEMPTS,
    answer: () => hang.promise.then(() => new Response("late")),
  });
  const { comment, warnings } = harness(githubEnv(github), {
    requestTimeoutMs: 20,
    timeout: new FakeTime().timeout,
  });
  try {
    await comment.finish(passingReport);
  } finally {
    hang.resolve();
  }
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /GitHub could not be reached \(TimeoutError/);
});

Deno.test("PullRequestComment never sends the token to another origin", async () => {
  await using github = await startFakeGithub();
  await using elsewhere = await startFakeGithub();
  github.script({
    answer: () =>
      new Response(null, { status: 301, headers: { location: `${elsewhere.origin}/moved` } }),
  });
  const redirected = harness(githubEnv(github));
  await redirected.comment.finish(passingReport);
  assert.match(
    redirected.warnings[0]!,
    /GitHub redirected to http:\/\/127\.0\.0\.1:\d+; the token/,
  );

  github.script({
    answer: () =>
      Response.json([], { headers: { link: `<${elsewhere.origin}/page2>; rel="next"` } }),
  });
  const linked = harness(githubEnv(github));
  await linked.comment.finish(passingReport);
  assert.match(linked.warnings[0]!, /GitHub gave a link outside http:\/\/127\.0\.0\.1:\d+/);
  assert.deepEqual(elsewhere.requests, []);
  assert.equal(github.comments.length, 0);
});

Deno.test("PullRequestComment follows a same-origin redirect (a renamed repository)", async () => {
  await using github = await startFakeGithub();
  github.script({
    answer: (request) =>
      new Response(null, {
        status: 301,
        headers: { location: new URL(request.url).pathname + new URL(request.url).search },
      }),
  });
  const { comment, warnings } = harness(githubEnv(github));
  await comment.finish(passingReport);
  assert.deepEqual(warnings, []);
  assert.equal(github.comments.length, 1);
});

Deno.test("PullRequestComment on GitLab creates the note, then edits it with the verdicts", async () => {
  await using gitlab = await startFakeGitlab();
  const { comment, warnings, origins } = harness(gitlabEnv(gitlab), { metadata: gitlabMetadata });
  await comment.begin(progress);
  await comment.finish(passingReport);
  assert.deepEqual(warnings, []);
  assert.equal(gitlab.comments.length, 1);
  const note = gitlab.comments[0]!;
  assert.ok(hasMarker(note.body, gateMarker({ workflow: "", job: "gate", agents: AGENTS })));
  assert.match(note.body, /quality gate passed/);
  const notes = "/api/v4/projects/1234/merge_requests/7/notes";
  assert.deepEqual(gitlab.commentRequests.map((request) => `${request.method} ${request.path}`), [
    `GET ${notes}?per_page=100&sort=asc&order_by=created_at`,
    `POST ${notes}`,
    `GET ${notes}?per_page=100&sort=asc&order_by=created_at`,
    `PUT ${notes}/${note.id}`,
  ]);
  for (const request of gitlab.commentRequests) {
    assert.equal(request.headers["private-token"], FORGE_TOKENS.gitlab);
    assert.equal(request.headers.authorization, undefined);
    assert.equal(request.headers["user-agent"], USER_AGENT);
  }
  for (const request of gitlab.writes) {
    assert.deepEqual(Object.keys(JSON.parse(request.body)), ["body"]);
  }
  assert.ok(origins.every((origin) => origin === gitlab.origin));
});

for (const linkHeader of [false, true]) {
  Deno.test(
    `PullRequestComment on GitLab finds its note on the third page (${
      linkHeader ? "Link" : "x-next-page"
    } pagination), skipping system notes`,
    async () => {
      const ours = gateMarker({ workflow: "", job: "gate", agents: AGENTS });
      const comments = Array.from({ length: 260 }, (_, index) => ({
        id: 100 + index,
        body: index === 220 ? `${ours}\nold` : `note ${index}`,
        system: false,
      }));
      comments[5] = { id: 105, body: `${ours}\nforged by a system note`, system: true };
      await using gitlab = await startFakeGitlab({ comments, linkHeader });
      const { comment, warnings } = harness(gitlabEnv(gitlab), { metadata: gitlabMetadata });
      await comment.finish(passingReport);
      assert.deepEqual(warnings, []);
      assert.deepEqual(gitlab.commentRequests.map((request) => request.method), [
        "GET",
        "GET",
        "GET",
        "PUT",
      ]);
      assert.match(gitlab.commentRequests[2]!.path, /page=3/);
      assert.match(gitlab.comments[220]!.body, /quality gate passed/);
      assert.match(gitlab.comments[5]!.body, /forged/);
    },
  );
}

Deno.test("PullRequestComment.fromEnv() says why there is no comment on GitLab", () => {
  const env = {
    SERVICE_GITLAB_TOKEN: FORGE_TOKENS.gitlab,
    CI_API_V4_URL: "https://gitlab.example/api/v4",
    CI_PROJECT_ID: "1234",
    CI_MERGE_REQUEST_IID: "7",
  };
  const branch = { ...gitlabMetadata, pull_request_number: null };
  assert.match(
    skipOf({ ...env, CI_MERGE_REQUEST_IID: undefined }, branch),
    /^service-ci: no merge-request comment: this pipeline is not for a merge request/,
  );
  assert.match(
    skipOf({ ...env, SERVICE_GITLAB_TOKEN: undefined }, gitlabMetadata),
    /SERVICE_GITLAB_TOKEN is not set.*api scope \(CI_JOB_TOKEN cannot write/,
  );
  assert.match(
    skipOf({ ...env, CI_MERGE_REQUEST_IID: undefined, CI_EXTERNAL_PULL_REQUEST_IID: "3" }, {
      ...gitlabMetadata,
      pull_request_number: 3,
    }),
    /external pull request/,
  );
  assert.equal(
    skipOf({ ...env, CI_API_V4_URL: "ftp://gitlab.example" }, gitlabMetadata),
    'service-ci: no merge-request comment: CI_API_V4_URL must be an https:// URL (got "ftp://gitlab.example")',
  );
  assert.match(skipOf({ ...env, CI_PROJECT_ID: "" }, gitlabMetadata), /CI_PROJECT_ID is not set/);
});

Deno.test("PullRequestComment on GitLab explains a token without the rights to comment", async () => {
  await using gitlab = await startFakeGitlab({ readOnly: true });
  const { comment, warnings } = harness(gitlabEnv(gitlab), { metadata: gitlabMetadata });
  await comment.finish(passingReport);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /^service-ci: the merge-request comment was not written: GitLab/);
  assert.match(warnings[0]!, /SERVICE_GITLAB_TOKEN needs the api scope/);
});

Deno.test("PullRequestComment on GitLab with a wrong token says so without printing it", async () => {
  await using gitlab = await startFakeGitlab();
  const wrong = "glpat-wrongToken-0000000";
  const { comment, warnings } = harness(gitlabEnv(gitlab, wrong), { metadata: gitlabMetadata });
  await comment.finish(passingReport);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /401: 401 Unauthorized\. Check SERVICE_GITLAB_TOKEN/);
  assert.ok(!warnings.join("").includes(wrong));
});

Deno.test("PullRequestComment on GitLab waits out a Retry-After, and the note is written", async () => {
  await using gitlab = await startFakeGitlab();
  gitlab.script({
    answer: () =>
      Response.json({ message: "Retry later" }, { status: 429, headers: { "retry-after": "60" } }),
  });
  const { comment, warnings, sleeps } = harness(gitlabEnv(gitlab), { metadata: gitlabMetadata });
  await comment.begin(progress);
  await comment.finish(passingReport);
  assert.deepEqual(sleeps, [60_000]);
  // The verdicts were written, so nothing needs saying.
  assert.deepEqual(warnings, []);
  assert.equal(gitlab.comments.length, 1);
  assert.match(gitlab.comments[0]!.body, /quality gate passed/);
});

Deno.test("PullRequestComment turns an unexpected error into one line and stops", async () => {
  const warnings: string[] = [];
  let calls = 0;
  const env = githubEnv({ apiUrl: "https://api.github.test" } as FakeForge);
  const target = forgeTarget(forgeConfig(env), { metadata: githubMetadata }, "comment");
  if ("skip" in target) throw new Error(target.skip);
  // A client whose first request (the token's user) fails as no HttpFailure would.
  const http = {
    limits: { finishBy: () => {} },
    request: () => {
      calls++;
      return Promise.reject(new Error(`boom with ${FORGE_TOKENS.github}`));
    },
  } as unknown as ForgeHttp;
  const comment = pullRequestComment(target, http, {
    agents: AGENTS,
    warn: (line) => warnings.push(line),
  });
  await comment.begin(progress);
  await comment.finish(passingReport);
  assert.equal(calls, 1);
  assert.deepEqual(warnings, [
    "service-ci: the pull-request comment was not written: internal error: boom with ***. The gate's verdict and exit code are not affected.",
  ]);
});

// --- History across pushes (docs/pr-comment.md, "History across pushes") --------------------

const PUSHES = [
  { sha: "abc1234abc1234abc1234abc1234abc1234abc12", outcome: "failed" },
  { sha: "1234567123456712345671234567123456712345", outcome: "failed" },
  { sha: "def5678def5678def5678def5678def5678def56", outcome: "passed" },
] as const;

// One push's run of the gate: a new process, so a new PullRequestComment.
async function push(
  env: Record<string, string | undefined>,
  { sha, outcome }: { readonly sha: string; readonly outcome: "passed" | "failed" },
  overrides: Partial<PullRequestCommentOptions> = {},
): Promise<string[]> {
  const metadata = { ...(overrides.metadata ?? githubMetadata), commit_sha: sha };
  const { comment, warnings } = harness(env, { ...overrides, metadata });
  await comment.begin({ ...progress, commitSha: sha });
  await comment.finish(makeReport([
    makeAgent({ outcome, url: `https://service.example/runs/${sha.slice(0, 7)}` }),
  ], { ciMetadata: metadata, exitCode: outcome === "passed" ? 0 : 1 }));
  return warnings;
}

// The history line of the comment, as a reader sees it.
function historyItem(body: string): string | undefined {
  return body.split("\n").find((line) =>
    line.startsWith(`- ${AGENT_IDS.passed.replaceAll("-", "\\-")}: `)
  );
}

const THREE_PUSHES = `- ${AGENT_IDS.passed.replaceAll("-", "\\-")}: ` +
  "❌ at [`abc1234`](<https://service.example/runs/abc1234>) → " +
  "❌ at [`1234567`](<https://service.example/runs/1234567>) → " +
  "✅ at [`def5678`](<https://service.example/runs/def5678>)";

Deno.test("PullRequestComment shows the verdicts of three pushes in order, in one comment", async () => {
  await using github = await startFakeGithub({ comments: 2 });
  const bodies: string[] = [];
  for (const each of PUSHES) {
    assert.deepEqual(await push(githubEnv(github), each), []);
    bodies.push(github.comments.at(-1)!.body);
  }
  assert.equal(github.comments.length, 3);
  // The first push has nothing to compare with; the second shows two, the third all three.
  assert.equal(historyItem(bodies[0]!), undefined);
  assert.equal(
    historyItem(bodies[1]!),
    `- ${AGENT_IDS.passed.replaceAll("-", "\\-")}: ` +
      "❌ at [`abc1234`](<https://service.example/runs/abc1234>) → " +
      "❌ at [`1234567`](<https://service.example/runs/1234567>)",
  );
  assert.equal(historyItem(bodies[2]!), THREE_PUSHES);
  assert.match(bodies[2]!, /### ✅ service-ci: quality gate passed/);
  // The in-progress comment of the third push still showed the first two.
  const progressWrite = github.writes.at(-2)!;
  const progressBody = (JSON.parse(progressWrite.body) as { body: string }).body;
  assert.match(progressBody, /quality gate running/);
  assert.match(progressBody, /❌ at \[`abc1234`\].* → ❌ at \[`1234567`\]/);
  assert.equal(progressBody.split("\n")[1], bodies[1]!.split("\n")[1]);
});

Deno.test("PullRequestComment replaces the entry of a commit that runs again", async () => {
  await using github = await startFakeGithub();
  await push(githubEnv(github), PUSHES[0]);
  await push(githubEnv(github), PUSHES[1]);
  await push(githubEnv(github), { sha: PUSHES[1].sha, outcome: "passed" });
  assert.equal(
    historyItem(github.comments[0]!.body),
    `- ${AGENT_IDS.passed.replaceAll("-", "\\-")}: ` +
      "❌ at [`abc1234`](<https://service.example/runs/abc1234>) → " +
      "✅ at [`1234567`](<https://service.example/runs/1234567>)",
  );
});

Deno.test("PullRequestComment ignores a history line edited in its own comment, and starts afresh", async () => {
  await using github = await startFakeGithub();
  await push(githubEnv(github), PUSHES[0]);
  await push(githubEnv(github), PUSHES[1]);
  // Someone with write access edits our comment: a passing verdict and a link of their own.
  const lines = github.comments[0]!.body.split("\n");
  const forged = {
    v: 1,
    agents: {
      [AGENT_IDS.passed]: [
        { sha: "0000000", outcome: "passed", url: "javascript:alert(1)" },
        { sha: PUSHES[1].sha, outcome: "passed", url: "https://evil.example/" },
      ],
    },
  };
  const encoded = new TextEncoder().encode(JSON.stringify(forged))
    .toBase64({ alphabet: "base64url", omitPadding: true });
  lines[1] = `<!-- service-ci history:${encoded} -->`;
  github.comments[0]!.body = lines.join("\n");

  await push(githubEnv(github), PUSHES[2]);
  const body = github.comments[0]!.body;
  assert.equal(github.comments.length, 1);
  assert.doesNotMatch(body, /evil\.example|javascript|0000000|1234567|abc1234/);
  // Only this run is known now, so nothing is shown, and only this run is stored.
  assert.equal(historyItem(body), undefined);
  assert.equal(readHistory(body, { marker, agents: AGENTS }).get(AGENT_IDS.passed)?.length, 1);
});

Deno.test("PullRequestComment never reads a history from a comment someone else wrote with its marker", async () => {
  const planted = {
    v: 1,
    agents: {
      [AGENT_IDS.passed]: [{
        sha: "abc1234",
        outcome: "passed",
        url: "https://evil.example/looks-fine",
      }],
    },
  };
  const line = `<!-- service-ci history:${
    new TextEncoder().encode(JSON.stringify(planted)).toBase64({
      alphabet: "base64url",
      omitPadding: true,
    })
  } -->`;
  // Well-formed: from our own comment it would be read.
  assert.equal(readHistory(`${marker}\n${line}`, { marker, agents: AGENTS }).size, 1);
  const plantedBody = `${marker}\n${line}\n\nplanted`;

  await using github = await startFakeGithub({
    comments: [{ id: 900, body: plantedBody, author: FORGE_IDENTITIES.stranger.login }],
  });
  await push(githubEnv(github), PUSHES[2]);
  assert.equal(github.comments.length, 2);
  assert.equal(github.comments[0]!.body, plantedBody);
  assert.doesNotMatch(github.comments[1]!.body, /evil\.example|abc1234/);
  assert.equal(historyItem(github.comments[1]!.body), undefined);

  await using gitlab = await startFakeGitlab({
    comments: [{
      id: 900,
      body: plantedBody.replace(marker, gateMarker({ workflow: "", job: "gate", agents: AGENTS })),
      author: FORGE_IDENTITIES.stranger.id,
    }],
  });
  await push(gitlabEnv(gitlab), PUSHES[2], { metadata: gitlabMetadata });
  assert.equal(gitlab.comments.length, 2);
  assert.doesNotMatch(gitlab.comments[1]!.body, /evil\.example|abc1234/);
});

Deno.test("PullRequestComment on GitLab keeps the history of three pushes", async () => {
  await using gitlab = await startFakeGitlab();
  for (const each of PUSHES) {
    assert.deepEqual(await push(gitlabEnv(gitlab), each, { metadata: gitlabMetadata }), []);
  }
  assert.equal(gitlab.comments.length, 1);
  assert.equal(historyItem(gitlab.comments[0]!.body), THREE_PUSHES);
});
