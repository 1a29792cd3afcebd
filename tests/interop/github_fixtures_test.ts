/**
 * Interop: answers recorded from api.github.com (npm:@octokit/fixtures, Octokit's own recordings)
 * replayed to the commit statuses and the pull-request comment, end to end: the real entry point
 * against the fake service and a loopback server that answers with the recorded status, headers
 * and body, GitHub's address in them rewritten to its own. What is checked is what the docs
 * promise: the writes land, each forge failure is one line, the exit code is the gate's alone,
 * `Link` pagination and same-origin redirects are followed, also under GitHub Enterprise's
 * `/api/v3`, and a redirect elsewhere is refused in one line.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { gateMarker } from "../../src/forge/comment/history.ts";
import { statusName } from "../../src/forge/writes.ts";
import { AGENTS, defaultAgents, KEYS, startFakeService } from "../support/fake_service.ts";
import { githubPullRequestJob } from "../support/fake_forge.ts";
import { type ProgramResult, runProgram } from "../support/program.ts";
import { needsPart } from "../support/tools.ts";

const FIXTURES = "npm:@octokit/fixtures@23.1.2";
/** Where the recordings were made; every occurrence is rewritten to the replaying server. */
const RECORDED_API = "https://api.github.com";
const TOKEN = "ghs_recordedFixtureToken0123456789";
const PULL_REQUEST = 42;
/** The commit the create-status scenario wrote to: the pull request's head here. */
const HEAD_SHA = "0000000000000000000000000000000000000001";
const WORKFLOW = "quality gate";
const JOB = "gate";

/** One recorded exchange of a scenario's `normalized-fixture.json`. */
interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string | number>>;
  readonly response: unknown;
}

/** An issue of the paginate-issues pages: the fields an issue comment shares with it. */
interface RecordedIssue {
  readonly id: number;
  body: string | null;
  readonly user: { readonly login: string };
}

async function _loadScenarios() {
  const json = { with: { type: "json" } } as const;
  const modules = await Promise.all([
    import(
      "npm:@octokit/fixtures@23.1.2/scenarios/api.github.com/create-status/normalized-fixture.json",
      json
    ),
    import(
      "npm:@octokit/fixtures@23.1.2/scenarios/api.github.com/errors/normalized-fixture.json",
      json
    ),
    import(
      "npm:@octokit/fixtures@23.1.2/scenarios/api.github.com/branch-protection/normalized-fixture.json",
      json
    ),
    import(
      "npm:@octokit/fixtures@23.1.2/scenarios/api.github.com/paginate-issues/normalized-fixture.json",
      json
    ),
    import(
      "npm:@octokit/fixtures@23.1.2/scenarios/api.github.com/rename-repository/normalized-fixture.json",
      json
    ),
  ]);
  const [createStatus, errors, branchProtection, paginateIssues, renameRepository] = modules.map(
    (module) => module.default as unknown as readonly Recorded[],
  ) as [Recorded[], Recorded[], Recorded[], Recorded[], Recorded[]];
  const find = (from: readonly Recorded[], method: string, status: number) => {
    const found = from.find((each) => each.method === method && each.status === status);
    if (found === undefined) throw new Error(`${FIXTURES} has no recorded ${method} ${status}`);
    return found;
  };
  return {
    /** The two `201 Created` of creating a commit status, in the order recorded. */
    created: createStatus.filter((each) => each.method === "post" && each.status === 201),
    /** `422 Validation Failed`, with its `errors` list. */
    invalid: find(errors, "post", 422),
    /** `404` with GitHub's `{message, documentation_url}` body. */
    notFound: find(branchProtection, "get", 404),
    /** Five pages of issues, each with its `Link` header. */
    pages: paginateIssues,
    /** A renamed repository: `301` to a GET, `307` to a PATCH, and the 200s at the new address. */
    moved: find(renameRepository, "get", 301),
    /** The repository at its new address, by id. */
    repository: find(renameRepository, "get", 200),
    movedTemporarily: find(renameRepository, "patch", 307),
    patched: find(renameRepository, "patch", 200),
  };
}

type Scenarios = Awaited<ReturnType<typeof _loadScenarios>>;

const loaded = await _loadScenarios().then(
  (scenarios) => ({ scenarios }),
  (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
);

/** A test that needs the recordings; see the end of the file for when they cannot be loaded. */
function fixtureTest(name: string, fn: (scenarios: Scenarios) => Promise<void>): void {
  if ("scenarios" in loaded) Deno.test(name, () => fn(loaded.scenarios));
}

// --- the replaying server --------------------------------------------------------------------

interface Exchange {
  readonly method: string;
  /** Path and query, as received (with the `/api/v3` prefix, if any). */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

interface Replay extends AsyncDisposable {
  /** What GITHUB_API_URL is set to: the origin, plus `/api/v3` for GitHub Enterprise. */
  readonly apiUrl: string;
  readonly origin: string;
  readonly requests: Exchange[];
}

interface ReplayOptions {
  /** GitHub Enterprise Server's API prefix, `/api/v3`; default none (github.com). */
  readonly prefix?: string;
  /** Leaves `Location` as recorded (`https://api.github.com/…`): a redirect to another origin. */
  readonly keepLocation?: boolean;
}

/**
 * Answers each request with the recorded exchange `route` picks for its method and its path
 * under the prefix (no match: the recorded 404). `https://api.github.com` in the recorded body and
 * headers becomes this server's API root; `Content-Length` is left for Deno to count again.
 */
function startReplay(
  route: (method: string, path: string) => Recorded | undefined,
  fallback: Recorded,
  options: ReplayOptions = {},
): Replay {
  const prefix = options.prefix ?? "";
  const requests: Exchange[] = [];
  const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const url = new URL(request.url);
      const path = `${url.pathname}${url.search}`;
      requests.push({
        method: request.method,
        path,
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
      });
      const inside = path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : null;
      const recorded = (inside === null ? undefined : route(request.method, inside)) ?? fallback;
      const local = (text: string): string => text.replaceAll(RECORDED_API, apiUrl);
      const headers = new Headers();
      for (const [name, value] of Object.entries(recorded.headers)) {
        if (name === "content-length") continue;
        const keep = name === "location" && options.keepLocation === true;
        headers.set(name, keep ? String(value) : local(String(value)));
      }
      const body = recorded.response === "" ? null : local(JSON.stringify(recorded.response));
      return new Response(body, { status: recorded.status, headers });
    },
  );
  const origin = `http://127.0.0.1:${server.addr.port}`;
  const apiUrl = `${origin}${prefix}`;
  return { apiUrl, origin, requests, [Symbol.asyncDispose]: () => server.shutdown() };
}

/** `recorded` with another body or status, and without the headers named in `drop`. */
function answer(
  recorded: Recorded,
  changes: { readonly status?: number; readonly response?: unknown; readonly drop?: string[] },
): Recorded {
  const headers = Object.fromEntries(
    Object.entries(recorded.headers).filter(([name]) => !(changes.drop ?? []).includes(name)),
  );
  return {
    ...recorded,
    headers,
    status: changes.status ?? recorded.status,
    response: "response" in changes ? changes.response : recorded.response,
  };
}

/** The recorded answers one after the other, the last one again once they run out. */
function inTurn(answers: readonly Recorded[]): () => Recorded {
  let next = 0;
  return () => answers[Math.min(next++, answers.length - 1)]!;
}

/** The recorded pages of issues, one of them holding the gate's comment. */
function pagesWithComment(scenarios: Scenarios, marker: string, commentId: number): Recorded[] {
  return scenarios.pages.map((page) => {
    const issues = structuredClone(page.response) as RecordedIssue[];
    for (const issue of issues) {
      if (issue.id === commentId) issue.body = `${marker}\n### an earlier push`;
    }
    return answer(page, { response: issues });
  });
}

/**
 * `GET /user` as a personal token of the user who wrote the recorded issues: their comments are
 * the token's own. The recorded user object, with the first page's headers.
 */
function recordedUser(scenarios: Scenarios): Recorded {
  const [first] = scenarios.pages;
  const [issue] = first!.response as RecordedIssue[];
  return answer(first!, { response: issue!.user, drop: ["link"] });
}

// --- running the program ---------------------------------------------------------------------

type Gate = "passing" | "failing";

const GATES: Readonly<Record<Gate, { agent: string; code: number }>> = {
  passing: { agent: AGENTS.passing, code: 0 },
  failing: { agent: AGENTS.failing, code: 1 },
};

interface Run {
  readonly gate: Gate;
  readonly repository: string;
  readonly flags: readonly string[];
  readonly github: Replay;
}

/** The program in a GitHub Actions `pull_request` job, against a fresh fake service. */
async function runGate({ gate, repository, flags, github }: Run): Promise<ProgramResult> {
  await using service = await startFakeService({ agents: defaultAgents(100) });
  const dir = await Deno.makeTempDir({ prefix: "service-ci-octokit-fixtures-" });
  try {
    const event = join(dir, "event.json");
    await Deno.writeTextFile(
      event,
      JSON.stringify({
        action: "synchronize",
        number: PULL_REQUEST,
        pull_request: { number: PULL_REQUEST, head: { sha: HEAD_SHA, ref: "feature" } },
      }),
    );
    return await runProgram(["--agent", GATES[gate].agent, ...flags], {
      cwd: dir,
      env: {
        SERVICE_API_KEY: KEYS.ci,
        SERVICE_BASE_URL: service.url,
        SERVICE_TIMEOUT_MINUTES: "1",
        SERVICE_CI_NATIVE: "false",
        ...githubPullRequestJob({
          apiUrl: github.apiUrl,
          eventPath: event,
          sha: "1111111111111111111111111111111111111111",
          pullRequest: PULL_REQUEST,
          repository,
          token: TOKEN,
        }),
        GITHUB_WORKFLOW: WORKFLOW,
        GITHUB_JOB: JOB,
      },
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function log(result: ProgramResult): string {
  return `exit ${result.code}\n--- stdout\n${result.stdout}--- stderr\n${result.stderr}`;
}

/** The lines of stderr about the forge: the fallback to statuses, and each write not made. */
function forgeLines(result: ProgramResult): string[] {
  return result.stderr.split("\n").filter((line) => line.startsWith("service-ci: "));
}

// The console's own lines on stderr: the banner, detection, each agent's progress, the table and
// the exit line. Any other line is a forge message spilling onto a second line.
const CONSOLE_LINES = [
  /^service-ci \d+\.\d+\.\d+ → /,
  /^detected GitHub Actions, /,
  /^agent [0-9a-f-]{36}: /,
  /^agent +run +status +verdict +duration +link$/,
  /^[0-9a-f-]{36} +run_\d+ +completed /,
  /^exit [01]: 1 gate, 1 (passed|failed)$/,
];

/**
 * The exit code is the gate's; the forge's lines are `expected`, one each, in any order (the
 * writers run side by side), every failure on a single line that ends with the promise about the
 * verdict; stderr holds no other line, and the token is nowhere.
 */
function assertGateOnly(result: ProgramResult, gate: Gate, expected: readonly RegExp[]): void {
  assert.equal(result.code, GATES[gate].code, log(result));
  const lines = forgeLines(result);
  assert.equal(lines.length, expected.length, log(result));
  for (const pattern of expected) {
    assert.equal(
      lines.filter((line) => pattern.test(line)).length,
      1,
      `${pattern}\n${log(result)}`,
    );
  }
  for (const line of lines.filter((each) => /not written/.test(each))) {
    assert.match(line, /^service-ci: .* The gate's verdict and exit code are not affected\.$/);
  }
  const others = result.stderr.split("\n").filter((line) =>
    line !== "" && !line.startsWith("service-ci: ") &&
    !CONSOLE_LINES.some((pattern) => pattern.test(line))
  );
  assert.deepEqual(others, [], log(result));
  assert.ok(!(result.stdout + result.stderr).includes(TOKEN), log(result));
}

/** Every request carried the token, to this server, from service-ci. */
function assertSentAsGithub(github: Replay): void {
  for (const request of github.requests) {
    const where = `${request.method} ${request.path}`;
    assert.equal(request.headers.authorization, `Bearer ${TOKEN}`, where);
    assert.equal(request.headers.host, new URL(github.origin).host, where);
    assert.match(request.headers["user-agent"] ?? "", /^service-ci\//, where);
  }
}

const calls = (github: Replay) =>
  github.requests.map((request) => `${request.method} ${request.path}`);

const parsed = (request: Exchange) => JSON.parse(request.body) as Record<string, unknown>;

// --- commit statuses -------------------------------------------------------------------------

const STATUS_REPO = "octokit-fixture-org/create-status";

/**
 * Check runs answer the recorded 404 (a token that cannot see the Checks API), so the writer
 * falls back to commit statuses, which answer `statuses`.
 */
function statusRoute(scenarios: Scenarios, statuses: () => Recorded) {
  return (method: string, path: string): Recorded | undefined => {
    if (path.startsWith(`/repos/${STATUS_REPO}/commits/${HEAD_SHA}/check-runs?`)) {
      return scenarios.notFound;
    }
    if (method === "POST" && path === `/repos/${STATUS_REPO}/check-runs`) return scenarios.notFound;
    if (method === "POST" && path === `/repos/${STATUS_REPO}/statuses/${HEAD_SHA}`) {
      return statuses();
    }
    return undefined;
  };
}

const FALLBACK_LINE =
  /^service-ci: GitHub did not let the token create check runs \(GitHub answered POST \/repos\/octokit-fixture-org\/create-status\/check-runs with 404: Branch not protected\); commit statuses instead — give the job `checks: write` for check runs$/;

fixtureTest(
  "create-status's recorded 201s answer the pending and the final commit status, and the exit code is the gate's",
  async (scenarios) => {
    await Promise.all((["passing", "failing"] as const).map(async (gate) => {
      await using github = startReplay(
        statusRoute(scenarios, inTurn(scenarios.created)),
        scenarios.notFound,
      );

      const result = await runGate({
        gate,
        repository: STATUS_REPO,
        flags: ["--commit-status"],
        github,
      });

      assertGateOnly(result, gate, [FALLBACK_LINE]);
      assert.deepEqual(calls(github), [
        `GET /repos/${STATUS_REPO}/commits/${HEAD_SHA}/check-runs?filter=latest&per_page=100`,
        `POST /repos/${STATUS_REPO}/check-runs`,
        `POST /repos/${STATUS_REPO}/statuses/${HEAD_SHA}`,
        `POST /repos/${STATUS_REPO}/statuses/${HEAD_SHA}`,
      ]);
      const writes = github.requests.filter((request) => /\/statuses\//.test(request.path));
      assert.deepEqual(
        writes.map((request) => [request.path, parsed(request).state, parsed(request).context]),
        [
          [
            `/repos/${STATUS_REPO}/statuses/${HEAD_SHA}`,
            "pending",
            statusName(GATES[gate].agent),
          ],
          [
            `/repos/${STATUS_REPO}/statuses/${HEAD_SHA}`,
            gate === "passing" ? "success" : "failure",
            statusName(GATES[gate].agent),
          ],
        ],
        log(result),
      );
      assertSentAsGithub(github);
    }));
  },
);

fixtureTest(
  "a recorded 404 or 422 to a commit status is one line, nothing more is tried, and the exit code is the gate's",
  async (scenarios) => {
    const cases = [
      {
        refusal: scenarios.notFound,
        line:
          /^service-ci: the GitHub commit statuses were not written: GitHub answered POST \/repos\/octokit-fixture-org\/create-status\/statuses\/0{39}1 with 404: Branch not protected\. Give the job `permissions: statuses: write` \(`checks: write` for check runs\)\. The gate's/,
      },
      {
        refusal: scenarios.invalid,
        line:
          /^service-ci: the GitHub commit statuses were not written: GitHub answered POST \/repos\/octokit-fixture-org\/create-status\/statuses\/0{39}1 with 422: Validation Failed\. The gate's/,
      },
    ];
    await Promise.all(
      cases.flatMap(({ refusal, line }) =>
        (["passing", "failing"] as const).map(async (gate) => {
          await using github = startReplay(
            statusRoute(scenarios, () => refusal),
            scenarios.notFound,
          );

          const result = await runGate({
            gate,
            repository: STATUS_REPO,
            flags: ["--commit-status"],
            github,
          });

          assertGateOnly(result, gate, [FALLBACK_LINE, line]);
          assert.deepEqual(calls(github), [
            `GET /repos/${STATUS_REPO}/commits/${HEAD_SHA}/check-runs?filter=latest&per_page=100`,
            `POST /repos/${STATUS_REPO}/check-runs`,
            `POST /repos/${STATUS_REPO}/statuses/${HEAD_SHA}`,
          ]);
          assertSentAsGithub(github);
        })
      ),
    );
  },
);

// --- the pull-request comment ----------------------------------------------------------------

const COMMENT_REPO = "octokit-fixture-org/paginate-issues";
const COMMENTS = `/repos/${COMMENT_REPO}/issues/${PULL_REQUEST}/comments`;

fixtureTest(
  "a recorded 404 to the comments' list or 422 to the new comment is one line, and the exit code is the gate's",
  async (scenarios) => {
    const lastPage = scenarios.pages.at(-1)!;
    const cases = [
      {
        list: scenarios.notFound,
        create: undefined,
        sent: ["GET /user", `GET ${COMMENTS}?per_page=100`],
        line:
          /^service-ci: the pull-request comment was not written: GitHub answered GET \/repos\/octokit-fixture-org\/paginate-issues\/issues\/42\/comments with 404: Branch not protected\. The token cannot see this repository or pull request/,
      },
      {
        // The last recorded page: one issue, a `Link` with no next page.
        list: lastPage,
        create: scenarios.invalid,
        sent: ["GET /user", `GET ${COMMENTS}?per_page=100`, `POST ${COMMENTS}`],
        line:
          /^service-ci: the pull-request comment was not written: GitHub answered POST \/repos\/octokit-fixture-org\/paginate-issues\/issues\/42\/comments with 422: Validation Failed\. The gate's/,
      },
    ];
    await Promise.all(
      cases.flatMap(({ list, create, sent, line }) =>
        (["passing", "failing"] as const).map(async (gate) => {
          await using github = startReplay((method, path) => {
            if (method === "GET" && path === "/user") return recordedUser(scenarios);
            if (method === "GET" && path === `${COMMENTS}?per_page=100`) return list;
            if (method === "POST" && path === COMMENTS) return create;
            return undefined;
          }, scenarios.notFound);

          const result = await runGate({
            gate,
            repository: COMMENT_REPO,
            flags: ["--pr-comment"],
            github,
          });

          assertGateOnly(result, gate, [line]);
          assert.deepEqual(calls(github), sent);
          assertSentAsGithub(github);
        })
      ),
    );
  },
);

// A passing gate against github.com's root, a failing one under GitHub Enterprise's /api/v3.
const BOTH_HOSTS = [
  { gate: "passing", prefix: "" },
  { gate: "failing", prefix: "/api/v3" },
] as const;

fixtureTest(
  "the comment follows the recorded Link pages to its own on page 4, on github.com and under GitHub Enterprise's /api/v3",
  async (scenarios) => {
    await Promise.all(BOTH_HOSTS.map(async ({ gate, prefix }) => {
      const marker = gateMarker({ workflow: WORKFLOW, job: JOB, agents: [GATES[gate].agent] });
      // Issue 1010 is on the fourth page of five.
      const pages = pagesWithComment(scenarios, marker, 1010);
      // An edit answers the comment as it now is: the recorded issue, with the first page's
      // headers.
      const comment = (pages[3]!.response as RecordedIssue[]).find((issue) => issue.id === 1010);
      const edited = answer(pages[0]!, { response: comment, drop: ["link"] });
      await using github = startReplay(
        (method, path) => {
          if (method === "GET" && path === "/user") return recordedUser(scenarios);
          // The first page is asked for by the pull request's address; the next ones come from
          // the recorded `Link` headers, by the repository's id.
          if (method === "GET" && path === `${COMMENTS}?per_page=100`) return pages[0];
          if (method === "GET") {
            return pages.find((page) => page.method === "get" && page.path === path);
          }
          if (method === "PATCH" && path === `/repos/${COMMENT_REPO}/issues/comments/1010`) {
            return edited;
          }
          return undefined;
        },
        scenarios.notFound,
        { prefix },
      );

      const result = await runGate({
        gate,
        repository: COMMENT_REPO,
        flags: ["--pr-comment"],
        github,
      });

      assertGateOnly(result, gate, []);
      const list = [
        `GET ${prefix}${COMMENTS}?per_page=100`,
        ...[2, 3, 4, 5].map((page) =>
          `GET ${prefix}/repositories/1000/issues?per_page=3&page=${page}`
        ),
      ];
      const edit = `PATCH ${prefix}/repos/${COMMENT_REPO}/issues/comments/1010`;
      assert.deepEqual(calls(github), [`GET ${prefix}/user`, ...list, edit, ...list, edit]);
      const final = parsed(github.requests.at(-1)!).body as string;
      assert.equal(final.split("\n")[0], marker);
      assert.match(final, gate === "passing" ? /quality gate passed/ : /quality gate failed/);
      assertSentAsGithub(github);
    }));
  },
);

// --- a renamed repository --------------------------------------------------------------------

const RENAMED_REPO = "octokit-fixture-org/rename-repository";
const RENAMED_COMMENTS = `/repos/${RENAMED_REPO}/issues/${PULL_REQUEST}/comments`;

/**
 * The renamed repository's old address answers every request as recorded: a GET with the
 * recorded 301, anything else with the recorded 307, to the same path under the repository's id
 * (as GitHub moves a renamed repository's endpoints; `verbatim`: to the recorded `Location`
 * itself, the repository). There the comments' list is the last recorded page holding the gate's
 * comment, an edit gets the recorded 200, a commit status create-status's recorded 201, the
 * repository the recorded 200, and check runs the recorded 404.
 */
function renamedRoute(scenarios: Scenarios, marker: string, options: { verbatim?: boolean } = {}) {
  const [lastPage] = pagesWithComment(scenarios, marker, 1012).slice(-1);
  const old = `/repos/${RENAMED_REPO}`;
  const moved = "/repositories/1000";
  return (method: string, path: string): Recorded | undefined => {
    if (method === "GET" && path === "/user") return recordedUser(scenarios);
    if (path.startsWith(`${old}/`)) {
      const redirect = method === "GET" ? scenarios.moved : scenarios.movedTemporarily;
      const rest = options.verbatim === true ? "" : path.slice(old.length);
      return {
        ...redirect,
        headers: { ...redirect.headers, location: `${redirect.headers.location}${rest}` },
      };
    }
    if (method === "GET" && path === moved) return scenarios.repository;
    if (method === "GET" && path === `${moved}/issues/${PULL_REQUEST}/comments?per_page=100`) {
      return lastPage;
    }
    if (method === "PATCH" && path === `${moved}/issues/comments/1012`) return scenarios.patched;
    if (method === "POST" && path === `${moved}/statuses/${HEAD_SHA}`) return scenarios.created[0];
    return undefined;
  };
}

/**
 * Plays `gate`'s run with both writers against the renamed repository's recordings (`verbatim`,
 * `prefix` and `keepLocation` as for renamedRoute and startReplay), then `check`s what it did;
 * every request must have gone out as GitHub's.
 */
async function playRenamed(
  scenarios: Scenarios,
  gate: Gate,
  options: { readonly verbatim?: boolean } & ReplayOptions,
  check: (result: ProgramResult, github: Replay) => void,
): Promise<void> {
  const marker = gateMarker({ workflow: WORKFLOW, job: JOB, agents: [GATES[gate].agent] });
  const { verbatim, ...replay } = options;
  await using github = startReplay(
    renamedRoute(scenarios, marker, verbatim === undefined ? {} : { verbatim }),
    scenarios.notFound,
    replay,
  );
  const flags = ["--commit-status", "--pr-comment"];
  check(await runGate({ gate, repository: RENAMED_REPO, flags, github }), github);
  assertSentAsGithub(github);
}

fixtureTest(
  "a renamed repository's recorded 301 and 307 are followed on the same origin, on github.com and under /api/v3",
  async (scenarios) => {
    await Promise.all(
      BOTH_HOSTS.map(({ gate, prefix }) =>
        playRenamed(scenarios, gate, { prefix }, (result, github) => {
          assertGateOnly(result, gate, [
            new RegExp(
              `^service-ci: GitHub did not let the token create check runs \\(GitHub answered POST ${prefix}/repositories/1000/check-runs with 404: Branch not protected\\); commit statuses instead`,
            ),
          ]);
          const sent = calls(github);
          const moved = `${prefix}/repositories/1000`;
          const comment = sent.filter((call) => /\/(issues|user)/.test(call));
          const list = [
            `GET ${prefix}${RENAMED_COMMENTS}?per_page=100`,
            `GET ${moved}/issues/${PULL_REQUEST}/comments?per_page=100`,
          ];
          const edit = [
            `PATCH ${prefix}/repos/${RENAMED_REPO}/issues/comments/1012`,
            `PATCH ${moved}/issues/comments/1012`,
          ];
          assert.deepEqual(comment, [`GET ${prefix}/user`, ...list, ...edit, ...list, ...edit]);
          const statuses = github.requests.filter((request) => /\/statuses\//.test(request.path));
          assert.deepEqual(
            statuses.map((request) => `${request.method} ${request.path} ${parsed(request).state}`),
            [
              `POST ${prefix}/repos/${RENAMED_REPO}/statuses/${HEAD_SHA} pending`,
              `POST ${moved}/statuses/${HEAD_SHA} pending`,
              `POST ${prefix}/repos/${RENAMED_REPO}/statuses/${HEAD_SHA} ${
                gate === "passing" ? "success" : "failure"
              }`,
              `POST ${moved}/statuses/${HEAD_SHA} ${gate === "passing" ? "success" : "failure"}`,
            ],
          );
          // The 307 keeps the method and the body.
          assert.match(
            parsed(github.requests.findLast((request) => request.method === "PATCH")!)
              .body as string,
            /quality gate/,
          );
        })
      ),
    );
  },
);

fixtureTest(
  "the recorded Location taken verbatim (the repository, not the list) is one line per writer, and the exit code is the gate's",
  async (scenarios) => {
    await Promise.all(
      (["passing", "failing"] as const).map((gate) =>
        playRenamed(scenarios, gate, { verbatim: true }, (result, github) => {
          const refused = "POST /repositories/1000 with 404: Branch not protected";
          assertGateOnly(result, gate, [
            new RegExp(
              `^service-ci: GitHub did not let the token create check runs \\(GitHub answered ${refused}\\); commit statuses instead`,
            ),
            new RegExp(
              `^service-ci: the GitHub commit statuses were not written: GitHub answered ${refused}\\. Give the job`,
            ),
            /^service-ci: the pull-request comment was not written: GitHub listed the comments without a JSON array\. The gate's/,
          ]);
          assert.ok(!github.requests.some((request) => request.method === "PATCH"), log(result));
        })
      ),
    );
  },
);

fixtureTest(
  "the recorded redirect to api.github.com itself is refused in one line per writer, and the token stays here",
  async (scenarios) => {
    const refused =
      `GitHub redirected to https://api\\.github\\.com; the token is only sent to http://127\\.0\\.0\\.1:\\d+\\. The gate's`;
    await Promise.all(
      (["passing", "failing"] as const).map((gate) =>
        playRenamed(scenarios, gate, { keepLocation: true }, (result, github) => {
          assertGateOnly(result, gate, [
            new RegExp(`^service-ci: the GitHub commit statuses were not written: ${refused}`),
            new RegExp(`^service-ci: the pull-request comment was not written: ${refused}`),
          ]);
          assert.ok(!github.requests.some((request) => request.path.startsWith("/repositories/")));
        })
      ),
    );
  },
);

// --- without the recordings ------------------------------------------------------------------

if ("error" in loaded) {
  const needs = needsPart(
    `${FIXTURES} could not be loaded`,
    loaded.error.split("\n")[0]!,
    `${FIXTURES} could not be loaded: ${loaded.error}`,
  );
  Deno.test({
    name: `GitHub's recorded answers${needs.nameSuffix}`,
    ignore: needs.ignore,
    fn: () => needs.assertFound(),
  });
}
