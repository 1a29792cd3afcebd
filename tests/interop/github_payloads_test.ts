/**
 * Interop: GitHub's own example webhook payloads (npm:@octokit/webhooks-examples), each played
 * through `--dry-run --json` with the variables GitHub Actions sets for its event. Without the
 * npm registry (and no cached copy) the tests are skipped with one line outside CI and fail in CI.
 */

import assert from "node:assert/strict";
import { runProgram } from "../support/program.ts";
import { needsPart } from "../support/tools.ts";

const AGENT = "6f1d2c3b-0a9e-4c8d-9b7a-1e2f3a4b5c6d";
const KEY = "sk_test_githubPayloads0123456789";
const TOKEN = "ghs_githubPayloadsToken0123456789abcdef";
const SERVER_URL = "https://github.com";

// Commits GitHub names in GITHUB_SHA that no payload holds, each distinct, so a test can tell
// which one the program took.
const FAKE_SHAS = {
  /** `pull_request`: the synthetic merge of the head into the base. */
  merge: "0e4e".repeat(10),
  /**
   * `pull_request_target`, `workflow_run`, `issue_comment`, and a push that deletes its ref: the
   * default branch's last commit.
   */
  defaultTip: "defa".repeat(10),
  /** `workflow_dispatch`: the last commit of the ref it was dispatched on. */
  dispatched: "d15a".repeat(10),
  /** `release`: the last commit of the release's tag. */
  tagged: "7a9d".repeat(10),
};

/** The events a workflow runs on that the examples hold, and `pull_request_target`. */
type EventName =
  | "pull_request"
  | "pull_request_target"
  | "push"
  | "merge_group"
  | "workflow_dispatch"
  | "workflow_run"
  | "release"
  | "issue_comment";

/** The parts of a payload the test reads (`@octokit/webhooks-types` has the whole of each). */
interface Payload {
  readonly action?: string;
  readonly ref?: string;
  readonly after?: string;
  readonly deleted?: boolean;
  readonly repository: { readonly full_name: string; readonly default_branch: string };
  readonly sender: { readonly login: string };
  readonly pull_request?: {
    readonly number: number;
    readonly title: string;
    readonly body: string | null;
    readonly head: { readonly sha: string; readonly ref: string };
    readonly base: { readonly ref: string };
  };
  readonly merge_group?: {
    readonly head_sha: string;
    readonly head_ref: string;
    readonly head_commit: { readonly message: string };
  };
  readonly head_commit?: { readonly message: string } | null;
  readonly commits?: readonly { readonly message: string }[];
  readonly workflow_run?: {
    readonly display_title?: string;
    readonly head_commit?: { readonly message: string } | null;
  };
  readonly release?: {
    readonly tag_name: string;
    readonly name: string | null;
    readonly body: string | null;
  };
  readonly issue?: { readonly title: string; readonly body: string | null };
  readonly comment?: { readonly body: string };
}

/** How GitHub runs a workflow on one payload, and what the metadata must then say. */
interface Play {
  /** GitHub's variables particular to the event. */
  readonly env: Readonly<Record<string, string>>;
  readonly commit: string;
  readonly branch: string | null;
  readonly pullRequest: number | null;
  /** The payload's own prose (titles, bodies, messages): never printed. */
  readonly prose: readonly (string | null | undefined)[];
}

function _shortRef(ref: string): string {
  return ref.replace(/^refs\/(?:heads|tags)\//, "");
}

function _onRef(ref: string, sha: string): Record<string, string> {
  return {
    GITHUB_SHA: sha,
    GITHUB_REF: ref,
    GITHUB_REF_NAME: _shortRef(ref),
    GITHUB_REF_TYPE: ref.startsWith("refs/tags/") ? "tag" : "branch",
    // Set, and empty, on every event but the two pull-request ones.
    GITHUB_HEAD_REF: "",
    GITHUB_BASE_REF: "",
  };
}

// What GitHub's "Events that trigger workflows" gives GITHUB_SHA and GITHUB_REF for each event.
// github.com runs `pull_request_target` on the default branch (GHES before 3.20: the base branch).
function _play(event: EventName, payload: Payload): Play {
  const defaultBranch = `refs/heads/${payload.repository.default_branch}`;
  const onDefault = {
    env: _onRef(defaultBranch, FAKE_SHAS.defaultTip),
    commit: FAKE_SHAS.defaultTip,
    branch: payload.repository.default_branch,
    pullRequest: null,
  };
  switch (event) {
    case "pull_request":
    case "pull_request_target": {
      const pr = payload.pull_request!;
      const heads = { GITHUB_HEAD_REF: pr.head.ref, GITHUB_BASE_REF: pr.base.ref };
      // None of the examples is merged: a closed one's run is on the merge branch too.
      const env = event === "pull_request_target" ? { ...onDefault.env, ...heads } : {
        GITHUB_SHA: FAKE_SHAS.merge,
        GITHUB_REF: `refs/pull/${pr.number}/merge`,
        GITHUB_REF_NAME: `${pr.number}/merge`,
        GITHUB_REF_TYPE: "branch",
        ...heads,
      };
      return {
        env,
        commit: pr.head.sha,
        branch: pr.head.ref,
        pullRequest: pr.number,
        prose: [pr.title, pr.body],
      };
    }
    case "push": {
      const ref = payload.ref!;
      const prose = [
        payload.head_commit?.message,
        ...(payload.commits ?? []).map((commit) => commit.message),
      ];
      // "When you delete a branch, the SHA in the workflow run (and its associated refs) reverts
      // to the default branch": never the deleted ref's `after`, forty zeros.
      if (payload.deleted) return { ...onDefault, prose };
      return {
        env: _onRef(ref, payload.after!),
        commit: payload.after!,
        branch: ref.startsWith("refs/heads/") ? _shortRef(ref) : null,
        pullRequest: null,
        prose,
      };
    }
    case "merge_group": {
      const group = payload.merge_group!;
      return {
        env: _onRef(group.head_ref, group.head_sha),
        commit: group.head_sha,
        branch: _shortRef(group.head_ref),
        // The queue's branch is `gh-readonly-queue/<base>/pr-<number>-<sha>` (docs/ci-metadata.md).
        pullRequest: Number(/\/pr-(\d+)-[^/]*$/.exec(group.head_ref)![1]),
        prose: [group.head_commit.message],
      };
    }
    case "workflow_dispatch": {
      const ref = payload.ref!;
      return {
        env: _onRef(ref, FAKE_SHAS.dispatched),
        commit: FAKE_SHAS.dispatched,
        branch: ref.startsWith("refs/heads/") ? _shortRef(ref) : null,
        pullRequest: null,
        prose: [],
      };
    }
    case "workflow_run": {
      // The workflow runs on the default branch, whichever run and pull requests started it.
      const run = payload.workflow_run!;
      return { ...onDefault, prose: [run.display_title, run.head_commit?.message] };
    }
    case "release": {
      const release = payload.release!;
      return {
        env: _onRef(`refs/tags/${release.tag_name}`, FAKE_SHAS.tagged),
        commit: FAKE_SHAS.tagged,
        branch: null,
        pullRequest: null,
        prose: [release.name, release.body],
      };
    }
    case "issue_comment": {
      // On the default branch too; none of the examples' issues is a pull request.
      const { issue, comment } = payload;
      return { ...onDefault, prose: [comment!.body, issue!.title, issue!.body] };
    }
  }
}

// Each line of the prose that is long enough not to occur by chance, as written and as JSON
// escapes it.
function _needles(prose: Play["prose"]): string[] {
  const lines = prose.flatMap((text) => (text ?? "").split(/\r?\n/))
    .map((line) => line.trim())
    .filter((line) => line.length >= 8);
  return [...new Set(lines.flatMap((line) => [line, JSON.stringify(line).slice(1, -1)]))];
}

async function _inPool<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

// Plays every payload of `event` and names each one the program got wrong.
async function _playAll(event: EventName, payloads: readonly Payload[]): Promise<string[]> {
  const root = await Deno.makeTempDir({ prefix: "service-ci-github-payloads-" });
  // Dry runs send nothing: a listener that counts connections proves it, and its port is one the
  // program accepts (port 9, discard, is a fetch "bad port" it refuses with exit 2).
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let connections = 0;
  const accepting = (async () => {
    for await (const connection of listener) {
      connections++;
      connection.close();
    }
  })();
  const failures: string[] = [];
  try {
    await _inPool([...payloads.entries()], 4, async ([index, payload]) => {
      const label = `${event} example ${index} (${payload.action ?? "no action"})`;
      try {
        await _playOne(event, payload, index, {
          root,
          baseUrl: `http://127.0.0.1:${listener.addr.port}`,
        });
      } catch (error) {
        failures.push(`${label}: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
  } finally {
    listener.close();
    await accepting.catch(() => {});
    await Deno.remove(root, { recursive: true });
  }
  if (connections > 0) failures.push(`${connections} connection(s) to the service on a dry run`);
  return failures.sort();
}

async function _playOne(
  event: EventName,
  payload: Payload,
  index: number,
  { root, baseUrl }: { root: string; baseUrl: string },
): Promise<void> {
  const play = _play(event, payload);
  const eventPath = `${root}/${index}-event.json`;
  await Deno.writeTextFile(eventPath, JSON.stringify(payload));
  const cwd = await Deno.makeTempDir({ dir: root });
  const runId = String(7_000_000_000 + index);
  // The comment and the statuses on, as the action can turn them on, so that the dry run also says
  // where they would go.
  const args = ["--dry-run", "--json", "--pr-comment", "--commit-status", "--base-url", baseUrl];
  const result = await runProgram(
    ["--agent", AGENT, ...args],
    {
      cwd,
      env: {
        CI: "true",
        GITHUB_ACTIONS: "true",
        GITHUB_EVENT_NAME: event,
        GITHUB_EVENT_PATH: eventPath,
        GITHUB_REPOSITORY: payload.repository.full_name,
        GITHUB_REPOSITORY_OWNER: payload.repository.full_name.split("/")[0]!,
        GITHUB_ACTOR: payload.sender.login,
        GITHUB_TRIGGERING_ACTOR: payload.sender.login,
        GITHUB_RUN_ID: runId,
        GITHUB_RUN_NUMBER: String(index + 1),
        GITHUB_RUN_ATTEMPT: "1",
        GITHUB_WORKFLOW: "quality gate",
        GITHUB_JOB: "gate",
        GITHUB_SERVER_URL: SERVER_URL,
        GITHUB_API_URL: "https://api.github.com",
        RUNNER_OS: "Linux",
        ...play.env,
        GITHUB_TOKEN: TOKEN,
        SERVICE_API_KEY: KEY,
      },
    },
  );
  const both = `${result.stdout}\n${result.stderr}`;
  assert.doesNotMatch(both, /^\s+at \S.*:\d+:\d+\)?$|Uncaught/m, `a stack trace:\n${both}`);
  assert.equal(result.code, 0, `a dry run exits 0 (got ${result.code}):\n${result.stderr}`);
  assert.match(result.stderr, /dry run, nothing is sent; detected GitHub Actions/);
  const document = JSON.parse(result.stdout);
  assert.equal(document.dry_run, true);
  assert.equal(document.requests.length, 1);
  assert.deepEqual(document.requests[0].body.ci_metadata, {
    commit_sha: play.commit,
    branch: play.branch,
    pull_request_number: play.pullRequest,
    repository: payload.repository.full_name,
    actor: payload.sender.login,
    provider: "github_actions",
    build_url: `${SERVER_URL}/${payload.repository.full_name}/actions/runs/${runId}`,
  });
  const short = play.commit.slice(0, 7);
  const status =
    /^service-ci: 1 commit status \(one per agent\) would be written on GitHub .*\bcommit ([0-9a-f]{7}) /m
      .exec(result.stderr);
  assert.equal(status?.[1], short, `the status goes on ${short}:\n${result.stderr}`);
  assert.match(
    result.stderr,
    play.pullRequest === null || event === "merge_group"
      ? /^service-ci: no pull-request comment\b/m
      : new RegExp(
        `^service-ci: the comment would be kept on GitHub pull request #${play.pullRequest}, commit ${short} \\(the pull request's head\\)`,
        "m",
      ),
  );
  for (const needle of _needles(play.prose)) {
    assert.ok(
      !both.includes(needle),
      `the payload's own text is printed: ${JSON.stringify(needle)}`,
    );
  }
  assert.ok(!both.includes(KEY) && !both.includes(TOKEN.slice(0, 8)), "a secret is printed");
}

/** The examples of each event, from the package's index (one entry per event name). */
type Examples = ReadonlyMap<string, readonly Payload[]>;

async function _loadExamples(): Promise<Examples> {
  const { default: index } = await import(
    "npm:@octokit/webhooks-examples@7.6.1/api.github.com/index.json",
    { with: { type: "json" } }
  );
  const events = index as unknown as readonly { name: string; examples: Payload[] }[];
  return new Map(events.map(({ name, examples }) => [name, examples]));
}

const loaded = await _loadExamples().then(
  (examples) => ({ examples }),
  (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
);

const EVENTS: readonly { event: EventName; examples: string; says: string }[] = [
  {
    event: "pull_request",
    examples: "pull_request",
    says: "the PR's head commit (not GITHUB_SHA's merge commit), head branch and number",
  },
  {
    event: "pull_request_target",
    examples: "pull_request",
    says: "the PR's head commit (not GITHUB_SHA, the default branch's), head branch and number",
  },
  { event: "push", examples: "push", says: "the pushed commit, and no branch for a tag" },
  {
    event: "merge_group",
    examples: "merge_group",
    says: "the group's commit, the queue's branch and the PR named in it",
  },
  { event: "workflow_dispatch", examples: "workflow_dispatch", says: "the dispatched ref" },
  { event: "workflow_run", examples: "workflow_run", says: "the default branch's commit" },
  { event: "release", examples: "release", says: "the tag's commit and no branch" },
  { event: "issue_comment", examples: "issue_comment", says: "the default branch's commit" },
];

if ("examples" in loaded) {
  for (const { event, examples, says } of EVENTS) {
    Deno.test(`every ${examples} example played as ${event} sends ${says}, the repository and the actor, exits 0 and prints none of its prose`, async () => {
      const payloads = loaded.examples.get(examples) ?? [];
      assert.ok(payloads.length > 0, `@octokit/webhooks-examples has no ${examples} example`);
      assert.deepEqual(await _playAll(event, payloads), []);
    });
  }
} else {
  const why = "npm:@octokit/webhooks-examples@7.6.1 cannot be loaded";
  const needs = needsPart(why, "is the npm registry reachable?", `${why}: ${loaded.error}`);
  Deno.test({
    name: `GitHub's example payloads run through --dry-run${needs.nameSuffix}`,
    ignore: needs.ignore,
    fn: () => needs.assertFound(),
  });
}
