/** The table of CI providers: how each one is detected and where it keeps each metadata field. */

import type { GitRunner } from "../effects.ts";
import { repositorySlug } from "./git_url.ts";

/** Trimmed, or `null` when unset or blank. */
export type Read<V extends string = string> = (name: V) => string | null;

export interface ProviderContext<V extends string = string> {
  readonly read: Read<V>;
  /** Read-only git commands in the working directory. */
  readonly git: GitRunner;
  /**
   * `undefined` when the variable is not set or the file cannot be read or parsed; a path that is
   * not a regular file, or too large, is a usage error naming the variable.
   */
  readonly readJson: (variable: V) => Promise<unknown>;
  /** Found first (`null` while it is), so commit and branch can pick the change's head. */
  readonly pullRequest: number | null;
}

/** As the provider keeps it (a full ref, a number as text); `detectCiBuild()` normalizes it. */
export type RawValue = string | null | Promise<string | null>;

/** Its variables (the first that is set), or how it is found. */
type Field<V extends string> = readonly V[] | ((context: ProviderContext<V>) => RawValue);

/**
 * A change merged with its target before it lands: GitHub's merge queue, a GitLab merge train or
 * merged-results pipeline.
 */
export type MergeKind = "merge_queue" | "merge_train" | "merged_result";

/**
 * `V` lists the variables the provider reads; reading any other name is a type error, so
 * `variables` (and from it `CI_ENV_VARIABLES`) cannot fall behind the code.
 */
export interface CiProvider<V extends string = string> {
  /** The `provider` value sent to the service. */
  readonly id: string;
  readonly name: string;
  /** Every name the provider gives: its fields', `detect`'s and `reads` (what only functions read). */
  readonly variables: readonly V[];
  /** Its variable set to `true` (any case), its variable set at all, or a test. */
  readonly detect: { true: V } | { set: V } | ((read: Read<V>) => boolean);
  /** Absent where the CI does not keep the field (as `--pull-request`, `--actor`, … can give it). */
  readonly pullRequest?: Field<V>;
  /** The change's head on a pull request. */
  readonly commitSha: Field<V>;
  /**
   * The source branch on a pull request. As data: the branch and tag variables (none on a tag
   * build), with the source branch of a pull request when the branch is then the target.
   */
  readonly branch?: Field<V> | { branch: V; tag: V; source?: V };
  readonly repository?: Field<V>;
  readonly actor?: Field<V>;
  readonly buildUrl: Field<V>;
  /** Reads variables only: the answer needs no file. */
  readonly merge?: (read: Read<V>) => MergeKind | null;
  readonly baseRef?: Field<V>;
  /** Not sent: contract §1. */
  readonly mergeSha?: Field<V>;
  /** Default `PR #7`. */
  readonly changeLabel?: (number: number) => string;
  /**
   * A local runner that sets the CI's variables but not its switch; said in the "no CI detected"
   * line.
   */
  readonly almostDetected?: (read: Read<V>) => string | null;
  /**
   * The CI's own debug switch (a re-run with debug logging), which turns `--verbose` on, and the
   * form its log shows debug lines in: GitHub's `::debug::`, Azure's `##[debug]`, or plain.
   */
  readonly debug?: {
    readonly variable: V;
    readonly on: (value: string) => boolean;
    readonly format: "github" | "azure" | "plain";
  };
  /**
   * Where the CI keeps the branch and the pull request outside the environment: the parameters a
   * user passes as `--branch` and `--pull-request`, on a pull request's build (`pullRequest`) and
   * on any other (`branch`). Named when no branch was found; docs/ci/teamcity.md quotes them.
   */
  readonly parameters?: {
    readonly branch: string;
    readonly pullRequest: { readonly branch: string; readonly number: string };
  };
}

// `const V` makes the names the declaration gives the exact set its functions may read.
function _provider<const V extends string>(
  declared: Omit<CiProvider<V>, "variables"> & { readonly reads?: readonly V[] },
): CiProvider {
  // Every object but `parameters` (the CI's own, not the environment's) names variables, and so
  // does `debug.variable`.
  const { parameters: _parameters, debug, ...fields } = declared;
  const names = Object.values(fields).flatMap((value) =>
    typeof value === "object" ? Object.values(value) : []
  ).concat(debug === undefined ? [] : [debug.variable]);
  return { ...declared, variables: [...new Set(names)] } as unknown as CiProvider;
}

/** A field's value: its first variable that is set, or what its function finds. */
export function fieldValue(field: CiProvider["branch"], context: ProviderContext): RawValue {
  const { read, pullRequest } = context;
  if (field === undefined) return null;
  if (typeof field === "function") return field(context);
  if (Array.isArray(field)) return _first(read, field);
  const { branch, tag, source } = field as Exclude<typeof field, readonly string[]>;
  return source !== undefined && pullRequest !== null
    ? read(source)
    : _unlessTag(read(branch), read(tag));
}

function _first<V extends string>(read: Read<V>, names: readonly V[]): string | null {
  return names.map(read).find((value) => value !== null) ?? null;
}

// Several providers put the tag's name in their branch variable on tag builds: a tag has no branch.
function _unlessTag(branch: string | null, tag: string | null): string | null {
  return tag === null ? branch : null;
}

// A value in the event that started a GitHub workflow (`pull_request`, `merge_group`), if any.
async function _event(
  { readJson }: Pick<ProviderContext<"GITHUB_EVENT_PATH">, "readJson">,
  ...path: string[]
): Promise<string | null> {
  let value = await readJson("GITHUB_EVENT_PATH");
  for (const key of path) {
    if (typeof value !== "object" || value === null) return null;
    value = (value as Record<string, unknown>)[key];
  }
  if (typeof value === "number") return String(value);
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}

const GITHUB_ACTIONS = _provider({
  id: "github_actions",
  name: "GitHub Actions",
  // Shown only with RUNNER_DEBUG=1.
  debug: { variable: "RUNNER_DEBUG", on: (value) => value === "1", format: "github" },
  reads: [
    "GITHUB_EVENT_NAME",
    "GITHUB_EVENT_PATH",
    "GITHUB_SHA",
    "GITHUB_REF",
    "GITHUB_REF_NAME",
    "GITHUB_REF_TYPE",
    "GITHUB_HEAD_REF",
    "GITHUB_BASE_REF",
    "GITHUB_SERVER_URL",
    "GITHUB_RUN_ID",
  ],
  detect: { true: "GITHUB_ACTIONS" },
  pullRequest: async (context) =>
    await _event(context, "pull_request", "number") ??
      /^refs\/pull\/(\d+)\//.exec(context.read("GITHUB_REF") ?? "")?.[1] ??
      // The queue's branch is `gh-readonly-queue/<base>/pr-<number>-<sha>`: the number is the
      // pull request the group was made for, the last one in it.
      /^(?:refs\/heads\/)?gh-readonly-queue\/.+\/pr-(\d+)-[^/]*$/.exec(
        await _event(context, "merge_group", "head_ref") ?? "",
      )?.[1] ?? null,
  // GITHUB_SHA is the synthetic merge commit on pull-request events; the event holds the head.
  // A merge group has no head of its own: its merge commit is what is tested and what lands.
  commitSha: async (context) =>
    await _event(context, "pull_request", "head", "sha") ??
      await _event(context, "merge_group", "head_sha") ??
      context.read("GITHUB_SHA"),
  branch: async (context) => {
    const { read } = context;
    const head = await _event(context, "pull_request", "head", "ref") ??
      await _event(context, "merge_group", "head_ref") ??
      read("GITHUB_HEAD_REF");
    if (head !== null) return head;
    if (read("GITHUB_REF") !== null) return read("GITHUB_REF");
    return read("GITHUB_REF_TYPE") === "tag" ? null : read("GITHUB_REF_NAME");
  },
  repository: ["GITHUB_REPOSITORY"],
  // On a re-run GITHUB_ACTOR is still whoever started the first attempt.
  actor: ["GITHUB_TRIGGERING_ACTOR", "GITHUB_ACTOR"],
  buildUrl: ({ read }) => {
    const [server, repository, run] = [
      read("GITHUB_SERVER_URL"),
      read("GITHUB_REPOSITORY"),
      read("GITHUB_RUN_ID"),
    ];
    if (server === null || repository === null || run === null) return null;
    return `${server.replace(/\/+$/, "")}/${repository}/actions/runs/${run}`;
  },
  merge: (read) => read("GITHUB_EVENT_NAME") === "merge_group" ? "merge_queue" : null,
  baseRef: async (context) =>
    await _event(context, "merge_group", "base_ref") ??
      await _event(context, "pull_request", "base", "ref") ??
      context.read("GITHUB_BASE_REF"),
  mergeSha: async (context) =>
    await _event(context, "merge_group", "head_sha") ??
      context.read("GITHUB_SHA"),
});

const GITLAB = _provider({
  id: "gitlab",
  name: "GitLab CI",
  // No debug form of its own.
  debug: { variable: "CI_DEBUG_TRACE", on: (value) => value === "true", format: "plain" },
  reads: [
    "CI_COMMIT_BRANCH",
    "CI_COMMIT_REF_NAME",
    "CI_COMMIT_TAG",
    "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME",
    "CI_EXTERNAL_PULL_REQUEST_SOURCE_BRANCH_NAME",
    "CI_MERGE_REQUEST_EVENT_TYPE",
  ],
  detect: { true: "GITLAB_CI" },
  changeLabel: (number) => `MR !${number}`,
  // gitlab-ci-local sets GITLAB_CI=false and the rest of GitLab's variables.
  almostDetected: (read) =>
    read("GITLAB_CI") !== null && (read("CI_COMMIT_SHA") ?? read("CI_PROJECT_PATH")) !== null
      ? `GITLAB_CI is ${
        JSON.stringify(read("GITLAB_CI"))
      } although GitLab's other variables are set, as gitlab-ci-local sets them; set GITLAB_CI=true to gate as GitLab CI`
      : null,
  // Not CI_MERGE_REQUEST_ID: that one is unique across the whole GitLab instance.
  pullRequest: ["CI_MERGE_REQUEST_IID", "CI_EXTERNAL_PULL_REQUEST_IID"],
  // The source SHAs are set only in merged-results and merge-train pipelines, where CI_COMMIT_SHA
  // is the merge result; the contract wants the change's head.
  commitSha: [
    "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA",
    "CI_EXTERNAL_PULL_REQUEST_SOURCE_BRANCH_SHA",
    "CI_COMMIT_SHA",
  ],
  branch: ({ read }) =>
    _first(read, [
      "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME",
      "CI_EXTERNAL_PULL_REQUEST_SOURCE_BRANCH_NAME",
    ]) ??
      _unlessTag(_first(read, ["CI_COMMIT_BRANCH", "CI_COMMIT_REF_NAME"]), read("CI_COMMIT_TAG")),
  repository: ["CI_PROJECT_PATH"],
  actor: ["GITLAB_USER_LOGIN"],
  buildUrl: ["CI_JOB_URL"],
  // `detached` is a merge request pipeline on the source branch's head: no merge build.
  merge: (read) => {
    const type = read("CI_MERGE_REQUEST_EVENT_TYPE");
    return type === "merge_train" || type === "merged_result" ? type : null;
  },
  baseRef: ["CI_MERGE_REQUEST_TARGET_BRANCH_NAME"],
  // In merge trains and merged-results pipelines CI_COMMIT_SHA is the merge result.
  mergeSha: ["CI_COMMIT_SHA"],
});

const CIRCLECI = _provider({
  id: "circleci",
  name: "CircleCI",
  reads: [
    "CIRCLE_PULL_REQUEST",
    "CIRCLE_PR_NUMBER",
    "CIRCLE_PROJECT_USERNAME",
    "CIRCLE_PROJECT_REPONAME",
    "CIRCLE_REPOSITORY_URL",
  ],
  detect: { true: "CIRCLECI" },
  // CIRCLE_PR_NUMBER is set only for pull requests from forks; the URL always ends in the number.
  pullRequest: ({ read }) =>
    /\/(\d+)\/?$/.exec(read("CIRCLE_PULL_REQUEST") ?? "")?.[1] ?? read("CIRCLE_PR_NUMBER"),
  commitSha: ["CIRCLE_SHA1"],
  branch: { branch: "CIRCLE_BRANCH", tag: "CIRCLE_TAG" },
  repository: ({ read }) => {
    const [owner, name] = [read("CIRCLE_PROJECT_USERNAME"), read("CIRCLE_PROJECT_REPONAME")];
    return owner !== null && name !== null
      ? `${owner}/${name}`
      : repositorySlug(read("CIRCLE_REPOSITORY_URL"));
  },
  actor: ["CIRCLE_USERNAME"],
  buildUrl: ["CIRCLE_BUILD_URL"],
});

const BITBUCKET = _provider({
  id: "bitbucket",
  name: "Bitbucket Pipelines",
  detect: { set: "BITBUCKET_BUILD_NUMBER" },
  pullRequest: ["BITBUCKET_PR_ID"],
  commitSha: ["BITBUCKET_COMMIT"],
  branch: { branch: "BITBUCKET_BRANCH", tag: "BITBUCKET_TAG" },
  repository: ["BITBUCKET_REPO_FULL_NAME"],
  actor: ["BITBUCKET_STEP_TRIGGERER_UUID"],
  buildUrl: ({ read }) => {
    const [repository, build] = [read("BITBUCKET_REPO_FULL_NAME"), read("BITBUCKET_BUILD_NUMBER")];
    return repository === null || build === null
      ? null
      : `https://bitbucket.org/${repository}/addon/pipelines/home#!/results/${build}`;
  },
});

const JENKINS = _provider({
  id: "jenkins",
  name: "Jenkins",
  reads: [
    "GIT_COMMIT",
    "GIT_BRANCH",
    "GIT_LOCAL_BRANCH",
    "GIT_URL",
    "BRANCH_NAME",
    "TAG_NAME",
    "CHANGE_BRANCH",
  ],
  // Not BUILD_ID: every Jenkins build has it, and so do other systems (Cloud Build).
  detect: { set: "JENKINS_URL" },
  pullRequest: ["CHANGE_ID"],
  // A multibranch PR build that merges the change with its target reports the merge in
  // GIT_COMMIT and keeps the head nowhere but in the merge's second parent.
  commitSha: async ({ read, git }) => {
    const commit = read("GIT_COMMIT");
    if (commit === null || read("CHANGE_ID") === null) return commit;
    const [head, secondParent] = await Promise.all([
      git(["rev-parse", "HEAD"]),
      git(["rev-parse", "HEAD^2"]),
    ]);
    const isMergeOfCommit = head?.toLowerCase() === commit.toLowerCase();
    return isMergeOfCommit && secondParent !== undefined && /^[0-9a-f]{40,64}$/i.test(secondParent)
      ? secondParent
      : commit;
  },
  // On a PR build BRANCH_NAME is `PR-24`; CHANGE_BRANCH is the source.
  branch: ({ read }) => {
    if (read("CHANGE_ID") !== null) return read("CHANGE_BRANCH");
    const gitBranch = read("GIT_BRANCH")?.replace(/^(?:refs\/remotes\/)?origin\//, "") ?? null;
    return _unlessTag(
      _first(read, ["BRANCH_NAME", "GIT_LOCAL_BRANCH"]) ?? gitBranch,
      read("TAG_NAME"),
    );
  },
  repository: ({ read }) => repositorySlug(read("GIT_URL")),
  actor: ["CHANGE_AUTHOR", "BUILD_USER_ID"],
  buildUrl: ["BUILD_URL"],
});

const AZURE_PIPELINES = _provider({
  id: "azure_pipelines",
  name: "Azure Pipelines",
  // `##[debug]` lines show in grey.
  debug: {
    variable: "SYSTEM_DEBUG",
    on: (value) => value.toLowerCase() === "true",
    format: "azure",
  },
  reads: [
    "BUILD_SOURCEVERSION",
    "BUILD_SOURCEBRANCH",
    "SYSTEM_PULLREQUEST_SOURCECOMMITID",
    "SYSTEM_PULLREQUEST_SOURCEBRANCH",
    "SYSTEM_TEAMFOUNDATIONSERVERURI",
    "SYSTEM_TEAMPROJECTID",
    "BUILD_BUILDID",
  ],
  detect: { true: "TF_BUILD" },
  // For GitHub repositories the ID is GitHub's internal one and the NUMBER is the one people see.
  pullRequest: ["SYSTEM_PULLREQUEST_PULLREQUESTNUMBER", "SYSTEM_PULLREQUEST_PULLREQUESTID"],
  commitSha: ({ read, pullRequest }) =>
    pullRequest === null
      ? read("BUILD_SOURCEVERSION")
      : _first(read, ["SYSTEM_PULLREQUEST_SOURCECOMMITID", "BUILD_SOURCEVERSION"]),
  // BUILD_SOURCEBRANCHNAME is not used: it is only the last segment of `feature/login`.
  branch: ({ read, pullRequest }) =>
    read(pullRequest === null ? "BUILD_SOURCEBRANCH" : "SYSTEM_PULLREQUEST_SOURCEBRANCH"),
  repository: ["BUILD_REPOSITORY_NAME"],
  actor: ["BUILD_REQUESTEDFOR"],
  buildUrl: ({ read }) => {
    const [server, project, build] = [
      read("SYSTEM_TEAMFOUNDATIONSERVERURI"),
      read("SYSTEM_TEAMPROJECTID"),
      read("BUILD_BUILDID"),
    ];
    if (server === null || project === null || build === null) return null;
    return `${server.replace(/\/+$/, "")}/${project}/_build/results?buildId=${build}`;
  },
});

const BUILDKITE = _provider({
  id: "buildkite",
  name: "Buildkite",
  reads: ["BUILDKITE_COMMIT", "BUILDKITE_REPO"],
  detect: { true: "BUILDKITE" },
  pullRequest: ["BUILDKITE_PULL_REQUEST"],
  // A build started from the UI without a commit reports the word HEAD: ask the checkout.
  commitSha: async ({ read, git }) => {
    const commit = read("BUILDKITE_COMMIT");
    return commit?.toUpperCase() === "HEAD" ? (await git(["rev-parse", "HEAD"])) ?? null : commit;
  },
  branch: { branch: "BUILDKITE_BRANCH", tag: "BUILDKITE_TAG" },
  repository: ({ read }) => repositorySlug(read("BUILDKITE_REPO")),
  actor: ["BUILDKITE_BUILD_CREATOR"],
  buildUrl: ["BUILDKITE_BUILD_URL"],
});

const TRAVIS = _provider({
  id: "travis",
  name: "Travis CI",
  reads: ["TRAVIS_COMMIT", "TRAVIS_PULL_REQUEST_SHA"],
  detect: { true: "TRAVIS" },
  pullRequest: ["TRAVIS_PULL_REQUEST"],
  // On PR builds TRAVIS_COMMIT is the merge and TRAVIS_BRANCH the target.
  commitSha: ({ read, pullRequest }) =>
    pullRequest === null
      ? read("TRAVIS_COMMIT")
      : _first(read, ["TRAVIS_PULL_REQUEST_SHA", "TRAVIS_COMMIT"]),
  branch: { branch: "TRAVIS_BRANCH", tag: "TRAVIS_TAG", source: "TRAVIS_PULL_REQUEST_BRANCH" },
  repository: ["TRAVIS_REPO_SLUG"],
  buildUrl: ["TRAVIS_JOB_WEB_URL", "TRAVIS_BUILD_WEB_URL"],
});

// TeamCity keeps branch and pull request in configuration parameters, not in the environment. On
// a pull request's build `teamcity.build.branch` is `pull/42` (the logical name of the PR's ref),
// not a branch; the Pull Requests build feature gives the source branch and the number.
const TEAMCITY = _provider({
  id: "teamcity",
  name: "TeamCity",
  detect: { set: "TEAMCITY_VERSION" },
  commitSha: ["BUILD_VCS_NUMBER"],
  buildUrl: ["BUILD_URL"],
  parameters: {
    branch: "%teamcity.build.branch%",
    pullRequest: {
      branch: "%teamcity.pullRequest.source.branch%",
      number: "%teamcity.pullRequest.number%",
    },
  },
});

// Harness CI runs Drone plugins, so it sets DRONE_* (and DRONE=true) too: it is checked first.
const HARNESS = _provider({
  id: "harness",
  name: "Harness CI",
  detect: { set: "HARNESS_BUILD_ID" },
  pullRequest: ["DRONE_PULL_REQUEST"],
  commitSha: ["DRONE_COMMIT_SHA", "CI_COMMIT_SHA"],
  // DRONE_BRANCH is the target on PR builds.
  branch: { branch: "DRONE_BRANCH", tag: "DRONE_TAG", source: "DRONE_SOURCE_BRANCH" },
  repository: ["DRONE_REPO"],
  actor: ["HARNESS_USER_ID"],
  buildUrl: ["DRONE_BUILD_LINK", "CI_BUILD_LINK"],
});

const WOODPECKER = _provider({
  id: "woodpecker",
  name: "Woodpecker CI",
  reads: ["CI"],
  detect: (read) => read("CI") === "woodpecker",
  pullRequest: ["CI_COMMIT_PULL_REQUEST"],
  commitSha: ["CI_COMMIT_SHA"],
  // CI_COMMIT_BRANCH is the target on PR builds.
  branch: { branch: "CI_COMMIT_BRANCH", tag: "CI_COMMIT_TAG", source: "CI_COMMIT_SOURCE_BRANCH" },
  repository: ["CI_REPO"],
  actor: ["CI_COMMIT_AUTHOR"],
  buildUrl: ["CI_PIPELINE_URL"],
});

const DRONE = _provider({
  id: "drone",
  name: "Drone",
  detect: { true: "DRONE" },
  pullRequest: ["DRONE_PULL_REQUEST"],
  commitSha: ["DRONE_COMMIT_SHA"],
  // DRONE_BRANCH is the target on PR builds.
  branch: { branch: "DRONE_BRANCH", tag: "DRONE_TAG", source: "DRONE_SOURCE_BRANCH" },
  repository: ["DRONE_REPO"],
  actor: ["DRONE_COMMIT_AUTHOR"],
  buildUrl: ["DRONE_BUILD_LINK"],
});

const CODEBUILD = _provider({
  id: "codebuild",
  name: "AWS CodeBuild",
  reads: [
    "CODEBUILD_WEBHOOK_HEAD_REF",
    "CODEBUILD_WEBHOOK_TRIGGER",
    "CODEBUILD_SOURCE_VERSION",
    "CODEBUILD_SOURCE_REPO_URL",
  ],
  detect: { set: "CODEBUILD_BUILD_ID" },
  // Webhook builds say `pr/12` in the trigger; builds started for a PR by hand, in the source version.
  pullRequest: ({ read }) =>
    /^pr\/(\d+)$/.exec(read("CODEBUILD_WEBHOOK_TRIGGER") ?? "")?.[1] ??
      /^pr\/(\d+)$/.exec(read("CODEBUILD_SOURCE_VERSION") ?? "")?.[1] ?? null,
  commitSha: ["CODEBUILD_RESOLVED_SOURCE_VERSION"],
  branch: ({ read }) =>
    read("CODEBUILD_WEBHOOK_HEAD_REF") ??
      /^branch\/(.+)$/.exec(read("CODEBUILD_WEBHOOK_TRIGGER") ?? "")?.[1] ?? null,
  repository: ({ read }) => repositorySlug(read("CODEBUILD_SOURCE_REPO_URL")),
  actor: ["CODEBUILD_WEBHOOK_ACTOR_ACCOUNT_ID"],
  buildUrl: ["CODEBUILD_PUBLIC_BUILD_URL", "CODEBUILD_BUILD_URL"],
});

const BITRISE = _provider({
  id: "bitrise",
  name: "Bitrise",
  reads: ["GIT_REPOSITORY_URL"],
  detect: { set: "BITRISE_IO" },
  pullRequest: ["BITRISE_PULL_REQUEST"],
  commitSha: ["BITRISE_GIT_COMMIT", "GIT_CLONE_COMMIT_HASH"],
  branch: { branch: "BITRISE_GIT_BRANCH", tag: "BITRISE_GIT_TAG" },
  repository: ({ read }) => repositorySlug(read("GIT_REPOSITORY_URL")),
  buildUrl: ["BITRISE_BUILD_URL"],
});

// Cloud Build sets no variables of its own in a step: its values are substitutions, which reach
// the environment only when mapped (`env:` or `options: automapSubstitutions: true`). It is
// detected by PROJECT_ID and BUILD_ID, which every build has, plus one of the mapped values;
// it is checked last because BUILD_ID alone is also Jenkins'.
const CLOUD_BUILD = _provider({
  id: "cloud_build",
  name: "Google Cloud Build",
  reads: [
    "PROJECT_ID",
    "BUILD_ID",
    "LOCATION",
    "BRANCH_NAME",
    "TAG_NAME",
    "_HEAD_BRANCH",
    "_BASE_BRANCH",
  ],
  detect: (read) =>
    read("PROJECT_ID") !== null && read("BUILD_ID") !== null &&
    _first(read, ["COMMIT_SHA", "BRANCH_NAME", "_PR_NUMBER", "REPO_FULL_NAME"]) !== null,
  pullRequest: ["_PR_NUMBER"],
  commitSha: ["COMMIT_SHA"],
  // Pull-request triggers name the change's branches in _HEAD_BRANCH and _BASE_BRANCH; what
  // BRANCH_NAME holds on such a build is not documented, so it is only the fallback.
  branch: ({ read, pullRequest }) =>
    pullRequest === null
      ? _unlessTag(read("BRANCH_NAME"), read("TAG_NAME"))
      : _first(read, ["_HEAD_BRANCH", "BRANCH_NAME"]),
  baseRef: ({ read, pullRequest }) => pullRequest === null ? null : read("_BASE_BRANCH"),
  repository: ["REPO_FULL_NAME"],
  buildUrl: ({ read }) => {
    const [project, build, location] = [read("PROJECT_ID"), read("BUILD_ID"), read("LOCATION")];
    if (project === null || build === null) return null;
    const region = location === null || location === "global" ? "" : `;region=${location}`;
    return `https://console.cloud.google.com/cloud-build/builds${region}/${build}?project=${project}`;
  },
});

/** The first whose `detect` matches wins: one system may set another's variables (Harness). */
export const PROVIDERS: readonly CiProvider[] = [
  GITHUB_ACTIONS,
  GITLAB,
  CIRCLECI,
  BITBUCKET,
  JENKINS,
  AZURE_PIPELINES,
  BUILDKITE,
  TRAVIS,
  TEAMCITY,
  HARNESS,
  WOODPECKER,
  DRONE,
  CODEBUILD,
  BITRISE,
  CLOUD_BUILD,
];
