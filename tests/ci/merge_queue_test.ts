/**
 * Merge builds (issue 22, part 2): GitHub's merge queue (`merge_group` events) and GitLab's merge
 * trains and merged-results pipelines. What is sent stays the seven fields of contract §1; the
 * context beside it (never sent) words the progress line and skips the pull-request comment.
 */

import assert from "node:assert/strict";
import {
  CI_ENV_VARIABLES,
  type CiContext,
  type CiMetadata,
  describeCiMetadata,
  detectCiBuild,
  type DetectOptions,
} from "../../src/ci/detect.ts";
import { RUNNER_VARIABLES as FORGE_ENV_VARIABLES } from "../../src/ci/detect.ts";
import { forgeConfig } from "../support/native_io.ts";
import { forgeTarget } from "../../src/forge/target.ts";
import type { RunEffects } from "../../src/effects.ts";
import { run } from "../../src/run.ts";
import { AGENT, harness } from "../support/run_harness.ts";

type Env = Record<string, string | undefined>;

const detectCiMetadata = async (env: Env, options?: DetectOptions): Promise<CiMetadata> =>
  (await detectCiBuild(env, options)).metadata;

// The merge build detected from the variables alone (no file, no git), or null.
const detectMergeKind = async (env: Env): Promise<string | null> => {
  const { kind } = (await detectCiBuild(env)).context;
  return kind === "pull_request" || kind === "other" ? null : kind;
};

const FIXTURE = new URL("../fixtures/github_merge_group_event.json", import.meta.url);
const EVENT_PATH = "/home/runner/work/_temp/_github_workflow/event.json";
// Read once, before any test: a real read while a run waits on the virtual clock would let that
// clock run out the 10 s bound on the event file whenever the machine is slow.
const FIXTURE_TEXT = Deno.readTextFileSync(FIXTURE);
// The values of the fixture.
const GROUP_SHA = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d";
const BASE_SHA = "0123456789abcdef0123456789abcdef01234567";
const QUEUE_BRANCH = `gh-readonly-queue/main/pr-42-${BASE_SHA}`;

const HEAD = "4f1c2d3e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d";
const MERGE_RESULT = "7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b";
const TRAIN_RESULT = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00";
const TARGET_SHA = "1111111111111111111111111111111111111111";

const SEVEN_FIELDS = [
  "actor",
  "branch",
  "build_url",
  "commit_sha",
  "provider",
  "pull_request_number",
  "repository",
];

/** The variables GitHub Actions sets for a job started by a `merge_group` event. */
const GITHUB_MERGE_GROUP: Env = {
  CI: "true",
  GITHUB_ACTIONS: "true",
  GITHUB_EVENT_NAME: "merge_group",
  GITHUB_EVENT_PATH: EVENT_PATH,
  GITHUB_SHA: GROUP_SHA,
  GITHUB_REF: `refs/heads/${QUEUE_BRANCH}`,
  GITHUB_REF_NAME: QUEUE_BRANCH,
  GITHUB_REF_TYPE: "branch",
  // Set only for pull_request events: empty here.
  GITHUB_HEAD_REF: "",
  GITHUB_BASE_REF: "",
  GITHUB_REPOSITORY: "acme/widgets",
  GITHUB_ACTOR: "github-merge-queue[bot]",
  GITHUB_TRIGGERING_ACTOR: "mona",
  GITHUB_SERVER_URL: "https://github.com",
  GITHUB_RUN_ID: "8812",
};

const GITLAB_MERGE_REQUEST: Env = {
  CI: "true",
  GITLAB_CI: "true",
  CI_PIPELINE_SOURCE: "merge_request_event",
  CI_PROJECT_PATH: "acme/widgets",
  GITLAB_USER_LOGIN: "mona",
  CI_JOB_URL: "https://gitlab.com/acme/widgets/-/jobs/77",
  CI_MERGE_REQUEST_IID: "7",
  CI_MERGE_REQUEST_ID: "31337",
  CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: "feature/login",
  CI_MERGE_REQUEST_TARGET_BRANCH_NAME: "main",
  CI_MERGE_REQUEST_DIFF_BASE_SHA: TARGET_SHA,
};

/** GitLab's variables per `CI_MERGE_REQUEST_EVENT_TYPE`, as its predefined-variables page gives them. */
const GITLAB_EVENTS: Readonly<Record<"detached" | "merged_result" | "merge_train", Env>> = {
  // A merge request pipeline on the source branch's head: no merge, no source/target SHAs.
  detached: {
    ...GITLAB_MERGE_REQUEST,
    CI_MERGE_REQUEST_EVENT_TYPE: "detached",
    CI_COMMIT_SHA: HEAD,
    CI_COMMIT_REF_NAME: "feature/login",
    CI_MERGE_REQUEST_REF_PATH: "refs/merge-requests/7/head",
  },
  // CI_COMMIT_SHA is the merge of the head into the target; the head is the source SHA.
  merged_result: {
    ...GITLAB_MERGE_REQUEST,
    CI_MERGE_REQUEST_EVENT_TYPE: "merged_result",
    CI_COMMIT_SHA: MERGE_RESULT,
    CI_COMMIT_REF_NAME: "refs/merge-requests/7/merge",
    CI_MERGE_REQUEST_REF_PATH: "refs/merge-requests/7/merge",
    CI_MERGE_REQUEST_SOURCE_BRANCH_SHA: HEAD,
    CI_MERGE_REQUEST_TARGET_BRANCH_SHA: TARGET_SHA,
  },
  // CI_COMMIT_SHA is the train's merge: the target, the merge requests ahead, then this one.
  merge_train: {
    ...GITLAB_MERGE_REQUEST,
    CI_MERGE_REQUEST_EVENT_TYPE: "merge_train",
    CI_COMMIT_SHA: TRAIN_RESULT,
    CI_COMMIT_REF_NAME: "refs/merge-requests/7/train",
    CI_MERGE_REQUEST_REF_PATH: "refs/merge-requests/7/train",
    CI_MERGE_REQUEST_SOURCE_BRANCH_SHA: HEAD,
    CI_MERGE_REQUEST_TARGET_BRANCH_SHA: TARGET_SHA,
  },
};

const GITLAB_METADATA: CiMetadata = {
  commit_sha: HEAD,
  branch: "feature/login",
  pull_request_number: 7,
  repository: "acme/widgets",
  actor: "mona",
  provider: "gitlab",
  build_url: "https://gitlab.com/acme/widgets/-/jobs/77",
};

const QUEUE_METADATA: CiMetadata = {
  commit_sha: GROUP_SHA,
  branch: QUEUE_BRANCH,
  pull_request_number: 42,
  repository: "acme/widgets",
  actor: "mona",
  provider: "github_actions",
  build_url: "https://github.com/acme/widgets/actions/runs/8812",
};

const QUEUE_LINE =
  `detected GitHub Actions, merge queue into main @ 9e8d7c6 (${QUEUE_BRANCH}) in acme/widgets`;

/** Reads the fixture at GITHUB_EVENT_PATH from disk; any other path cannot be read. */
const readFixture: NonNullable<DetectOptions["readTextFile"]> = (path) =>
  path === EVENT_PATH ? Promise.resolve(FIXTURE_TEXT) : Promise.resolve(undefined);

/** An event file with the fixture's `merge_group` changed. */
async function groupEvent(
  changes: Record<string, string>,
): Promise<NonNullable<DetectOptions["readTextFile"]>> {
  const event = JSON.parse(await Deno.readTextFile(FIXTURE));
  const text = JSON.stringify({ ...event, merge_group: { ...event.merge_group, ...changes } });
  return (path) => Promise.resolve(path === EVENT_PATH ? text : undefined);
}

// --- GitHub merge queue ----------------------------------------------------------------------

Deno.test("detectCiBuild() takes a merge_group event's commit, queue branch and pull request from the event", async () => {
  const { metadata, context } = await detectCiBuild(GITHUB_MERGE_GROUP, {
    readTextFile: readFixture,
  });
  assert.deepStrictEqual(metadata, QUEUE_METADATA);
  assert.deepStrictEqual(context, {
    kind: "merge_queue",
    baseRef: "main",
    evaluatedSha: GROUP_SHA,
  });
});

Deno.test("detectCiMetadata() sends exactly the seven fields for a merge_group event", async () => {
  const metadata = await detectCiMetadata(GITHUB_MERGE_GROUP, { readTextFile: readFixture });
  assert.deepStrictEqual(Object.keys(metadata).toSorted(), SEVEN_FIELDS);
  assert.deepStrictEqual(
    Object.keys(JSON.parse(JSON.stringify(metadata))).toSorted(),
    SEVEN_FIELDS,
  );
  assert.deepStrictEqual(metadata, QUEUE_METADATA);
});

Deno.test("detectCiBuild() prefers the event's merge_group to GITHUB_SHA and GITHUB_REF", async () => {
  const { metadata } = await detectCiBuild(
    { ...GITHUB_MERGE_GROUP, GITHUB_SHA: HEAD, GITHUB_REF: "refs/heads/elsewhere" },
    { readTextFile: readFixture },
  );
  assert.equal(metadata.commit_sha, GROUP_SHA);
  assert.equal(metadata.branch, QUEUE_BRANCH);
});

Deno.test("detectCiBuild() reads a merge queue into a branch with slashes", async () => {
  const branch = `gh-readonly-queue/release/2.x/pr-1234-${BASE_SHA}`;
  const { metadata, context } = await detectCiBuild(GITHUB_MERGE_GROUP, {
    readTextFile: await groupEvent({
      head_ref: `refs/heads/${branch}`,
      base_ref: "refs/heads/release/2.x",
    }),
  });
  assert.equal(metadata.branch, branch);
  assert.equal(metadata.pull_request_number, 1234);
  assert.equal(context.baseRef, "release/2.x");
});

Deno.test("detectCiBuild() sends no pull request for a queue branch that names none", async () => {
  for (const headRef of ["refs/heads/gh-readonly-queue/main/batch-7", "refs/heads/main"]) {
    const { metadata, context } = await detectCiBuild(GITHUB_MERGE_GROUP, {
      readTextFile: await groupEvent({ head_ref: headRef }),
    });
    assert.equal(metadata.pull_request_number, null, headRef);
    assert.equal(context.kind, "merge_queue");
  }
});

Deno.test("detectCiBuild() without the event file falls back to GITHUB_SHA and GITHUB_REF", async () => {
  const { metadata, context } = await detectCiBuild(GITHUB_MERGE_GROUP, {
    readTextFile: () => Promise.resolve(undefined),
  });
  assert.deepStrictEqual(metadata, { ...QUEUE_METADATA, pull_request_number: null });
  assert.deepStrictEqual(context, { kind: "merge_queue", baseRef: null, evaluatedSha: GROUP_SHA });
});

Deno.test("detectCiBuild() keeps a pull_request event as it was, with its base branch beside it", async () => {
  const { metadata, context } = await detectCiBuild(
    {
      ...GITHUB_MERGE_GROUP,
      GITHUB_EVENT_NAME: "pull_request",
      GITHUB_SHA: GROUP_SHA,
      GITHUB_REF: "refs/pull/42/merge",
      GITHUB_HEAD_REF: "feature/login",
      GITHUB_BASE_REF: "main",
    },
    {
      readTextFile: () =>
        Promise.resolve(JSON.stringify({
          pull_request: { number: 42, head: { sha: HEAD, ref: "feature/login" } },
        })),
    },
  );
  assert.deepStrictEqual(metadata, {
    ...QUEUE_METADATA,
    commit_sha: HEAD,
    branch: "feature/login",
  });
  assert.deepStrictEqual(context, { kind: "pull_request", baseRef: "main", evaluatedSha: HEAD });
  assert.equal(
    describeCiMetadata(metadata),
    "detected GitHub Actions, PR #42 @ 4f1c2d3 (feature/login) in acme/widgets",
  );
});

Deno.test("describeCiMetadata() names a merge queue by its target with the detected context, and by its seven fields without", async () => {
  const { metadata, context } = await detectCiBuild(GITHUB_MERGE_GROUP, {
    readTextFile: readFixture,
  });
  assert.equal(describeCiMetadata(metadata, context), QUEUE_LINE);
  assert.equal(
    describeCiMetadata(metadata),
    `detected GitHub Actions, PR #42 @ 9e8d7c6 (${QUEUE_BRANCH}) in acme/widgets`,
  );
});

const QUEUE_CONTEXT: CiContext = { kind: "merge_queue", baseRef: "main", evaluatedSha: GROUP_SHA };

const DESCRIPTIONS: readonly [CiMetadata, CiContext, string][] = [
  [QUEUE_METADATA, QUEUE_CONTEXT, QUEUE_LINE],
  [
    { ...QUEUE_METADATA, repository: null, pull_request_number: null },
    { ...QUEUE_CONTEXT, baseRef: null },
    `detected GitHub Actions, merge queue @ 9e8d7c6 (${QUEUE_BRANCH})`,
  ],
  [
    GITLAB_METADATA,
    { kind: "merge_train", baseRef: "main", evaluatedSha: TRAIN_RESULT },
    "detected GitLab CI, MR !7 @ 4f1c2d3 (feature/login) in acme/widgets, merge train into main: evaluating merge result c0ffee0",
  ],
  [
    GITLAB_METADATA,
    { kind: "merged_result", baseRef: "main", evaluatedSha: MERGE_RESULT },
    "detected GitLab CI, MR !7 @ 4f1c2d3 (feature/login) in acme/widgets, merged results into main: evaluating merge result 7a8b9c0",
  ],
  [
    GITLAB_METADATA,
    { kind: "merge_train", baseRef: null, evaluatedSha: null },
    "detected GitLab CI, MR !7 @ 4f1c2d3 (feature/login) in acme/widgets, merge train",
  ],
  [
    GITLAB_METADATA,
    { kind: "pull_request", baseRef: "main", evaluatedSha: HEAD },
    "detected GitLab CI, MR !7 @ 4f1c2d3 (feature/login) in acme/widgets",
  ],
  [
    { ...GITLAB_METADATA, branch: "evil\n::error::x" },
    { kind: "merge_train", baseRef: "main\x1b[31m", evaluatedSha: TRAIN_RESULT },
    "detected GitLab CI, MR !7 @ 4f1c2d3 (evil ::error::x) in acme/widgets, merge train into main: evaluating merge result c0ffee0",
  ],
];

for (const [metadata, context, line] of DESCRIPTIONS) {
  Deno.test(`describeCiMetadata() with a ${context.kind} context says ${JSON.stringify(line)}`, () => {
    assert.equal(describeCiMetadata(metadata, context), line);
  });
}

// --- GitLab merge trains and merged results --------------------------------------------------

const GITLAB_EXPECTED: Readonly<Record<keyof typeof GITLAB_EVENTS, CiContext>> = {
  detached: { kind: "pull_request", baseRef: "main", evaluatedSha: HEAD },
  merged_result: { kind: "merged_result", baseRef: "main", evaluatedSha: MERGE_RESULT },
  merge_train: { kind: "merge_train", baseRef: "main", evaluatedSha: TRAIN_RESULT },
};

for (const [type, env] of Object.entries(GITLAB_EVENTS)) {
  const expected = GITLAB_EXPECTED[type as keyof typeof GITLAB_EVENTS];
  Deno.test(`detectCiBuild() on a GitLab ${type} pipeline sends the merge request's head and says what was built`, async () => {
    const { metadata, context } = await detectCiBuild(env);
    assert.deepStrictEqual(metadata, GITLAB_METADATA);
    assert.deepStrictEqual(Object.keys(metadata).toSorted(), SEVEN_FIELDS);
    assert.deepStrictEqual(context, expected);
    assert.equal(await detectMergeKind(env), type === "detached" ? null : type);
  });
}

Deno.test("detectCiBuild() keeps the CI's merge result when --commit-sha corrects the head", async () => {
  const { metadata, context } = await detectCiBuild(GITLAB_EVENTS.merge_train, {
    overrides: { commitSha: TARGET_SHA },
  });
  assert.equal(metadata.commit_sha, TARGET_SHA);
  assert.equal(context.evaluatedSha, TRAIN_RESULT);
  const detached = await detectCiBuild(GITLAB_EVENTS.detached, {
    overrides: { commitSha: TARGET_SHA },
  });
  assert.equal(detached.context.evaluatedSha, TARGET_SHA);
});

Deno.test("detectCiBuild() calls a GitLab branch pipeline and a local run neither a pull request nor a merge", async () => {
  const branch = await detectCiBuild({
    GITLAB_CI: "true",
    CI_PIPELINE_SOURCE: "push",
    CI_COMMIT_SHA: HEAD,
    CI_COMMIT_BRANCH: "main",
    CI_COMMIT_REF_NAME: "main",
  });
  assert.deepStrictEqual(branch.context, { kind: "other", baseRef: null, evaluatedSha: HEAD });
  const local = await detectCiBuild({ CI: "false", GITHUB_EVENT_NAME: "merge_group" });
  assert.deepStrictEqual(local.context, { kind: "other", baseRef: null, evaluatedSha: null });
});

Deno.test("detectMergeKind() answers from the variables, and only for the CI detected", async () => {
  assert.equal(await detectMergeKind(GITHUB_MERGE_GROUP), "merge_queue");
  assert.equal(await detectMergeKind({ ...GITHUB_MERGE_GROUP, GITHUB_EVENT_NAME: "push" }), null);
  assert.equal(await detectMergeKind({ ...GITHUB_MERGE_GROUP, CI: "false" }), null);
  // Another CI's leftovers are not this build's.
  assert.equal(await detectMergeKind({ TRAVIS: "true", GITHUB_EVENT_NAME: "merge_group" }), null);
  assert.equal(
    await detectMergeKind({ ...GITLAB_EVENTS.merge_train, CI_MERGE_REQUEST_EVENT_TYPE: "other" }),
    null,
  );
});

Deno.test("the merge variables are read by exact name and allowed", async () => {
  for (const name of ["GITHUB_EVENT_NAME", "GITHUB_BASE_REF", "CI_MERGE_REQUEST_EVENT_TYPE"]) {
    assert.ok(CI_ENV_VARIABLES.includes(name), name);
  }
  assert.ok(CI_ENV_VARIABLES.includes("CI_MERGE_REQUEST_TARGET_BRANCH_NAME"));
  assert.ok(FORGE_ENV_VARIABLES.includes("GITHUB_EVENT_NAME"));
  const read = new Set<string>();
  for (const env of [GITHUB_MERGE_GROUP, ...Object.values(GITLAB_EVENTS)]) {
    const recording = new Proxy(env, {
      get(target, name) {
        if (typeof name === "string") read.add(name);
        return Reflect.get(target, name);
      },
    });
    await detectCiBuild(recording, { readTextFile: readFixture });
  }
  assert.deepStrictEqual([...read].filter((name) => !CI_ENV_VARIABLES.includes(name)), []);
  assert.ok(read.has("CI_MERGE_REQUEST_EVENT_TYPE") && read.has("GITHUB_EVENT_NAME"));
});

// --- The pull-request comment ----------------------------------------------------------------

const SKIP_LINE =
  "service-ci: no pull-request comment in a merge queue run (merge_group has no pull request); the pull_request run's comment stands";

// The comment's target: what made the comment skip, or where it goes.
function commentFor(env: Env, metadata: CiMetadata) {
  return forgeTarget(forgeConfig(env), { metadata }, "comment");
}

Deno.test("the pull-request comment's target writes no comment in a merge queue run, in one line", () => {
  const made = commentFor({ ...GITHUB_MERGE_GROUP, GITHUB_TOKEN: "ghs_example" }, QUEUE_METADATA);
  assert.ok("skip" in made);
  assert.equal(made.skip, SKIP_LINE);
});

Deno.test("the pull-request comment's target still comments on pull_request events and GitLab merge trains", () => {
  const pullRequest = commentFor(
    { ...GITHUB_MERGE_GROUP, GITHUB_EVENT_NAME: "pull_request", GITHUB_TOKEN: "ghs_example" },
    QUEUE_METADATA,
  );
  assert.ok(!("skip" in pullRequest), JSON.stringify(pullRequest));
  const train = commentFor(
    {
      ...GITLAB_EVENTS.merge_train,
      SERVICE_GITLAB_TOKEN: "glpat-example",
      CI_API_V4_URL: "https://gitlab.com/api/v4",
      CI_PROJECT_ID: "278964",
      CI_JOB_NAME: "gate",
    },
    GITLAB_METADATA,
  );
  assert.ok(!("skip" in train), JSON.stringify(train));
});

// --- A whole run, in process -----------------------------------------------------------------

Deno.test("run() in a merge queue sends the seven fields, says merge queue, and skips the comment", async () => {
  const faked = harness({
    args: ["--agent", AGENT, "--pr-comment"],
    env: { ...GITHUB_MERGE_GROUP, GITHUB_TOKEN: "ghs_example" } as Record<string, string>,
  });
  const bodies: unknown[] = [];
  const forge: string[] = [];
  const effects: RunEffects = {
    ...faked.effects,
    files: {
      ...faked.effects.files,
      readTextFile: (path) =>
        path === EVENT_PATH
          ? Promise.resolve(FIXTURE_TEXT)
          : Promise.reject(new Deno.errors.NotFound(path)),
    },
    http: {
      ...faked.effects.http,
      makeFetch: (setup) => {
        if (!("caCerts" in setup)) {
          return (input) => {
            forge.push(String(input));
            return Promise.reject(new TypeError("no forge here"));
          };
        }
        const service = faked.effects.http.makeFetch(setup);
        return (input, init) => {
          if (init?.method === "POST") bodies.push(JSON.parse(String(init.body)));
          return service(input, init);
        };
      },
    },
  };
  assert.equal(await run(effects), 0);
  const stderr = faked.stderr.join("");
  assert.ok(stderr.includes(`${SKIP_LINE}\n`), stderr);
  assert.ok(stderr.includes(QUEUE_LINE), stderr);
  assert.deepStrictEqual(forge, []);
  assert.equal(bodies.length, 1);
  const sent = (bodies[0] as { ci_metadata: Record<string, unknown> }).ci_metadata;
  assert.deepStrictEqual(Object.keys(sent).toSorted(), SEVEN_FIELDS);
  assert.deepStrictEqual(sent, { ...QUEUE_METADATA });
});

Deno.test("describeCiMetadata() says MR !7 on GitLab and PR #7 elsewhere; a local run names GITLAB_CI when GitLab's other variables are set", async () => {
  const base = {
    commit_sha: "4f1c2d3e5a",
    branch: "feature/login",
    pull_request_number: 7,
    repository: null,
    actor: null,
    build_url: null,
  };
  assert.match(describeCiMetadata({ ...base, provider: "gitlab" }), /^detected GitLab CI, MR !7 @/);
  for (const provider of ["github_actions", "bitbucket"]) {
    assert.match(describeCiMetadata({ ...base, provider }), /, PR #7 @ 4f1c2d3/);
  }
  const local = await detectCiBuild({
    GITLAB_CI: "false",
    CI_COMMIT_SHA: "4f1c2d3e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d",
    CI_PROJECT_PATH: "acme/widgets",
  }, { git: () => Promise.resolve(undefined) });
  assert.equal(local.metadata.provider, "local");
  assert.match(
    describeCiMetadata(local.metadata, local.context),
    /^no CI detected \(local: GITLAB_CI is "false" although GitLab's other variables are set, as gitlab-ci-local sets them; set GITLAB_CI=true to gate as GitLab CI\)$/,
  );
  const plain = await detectCiBuild({}, { git: () => Promise.resolve(undefined) });
  assert.equal(describeCiMetadata(plain.metadata, plain.context), "no CI detected (local)");
});
