/** The table of CI providers: one entry per CI, and the order they are detected in. */

import { repositorySlug } from "./git_url.ts";
import { GITHUB_ACTIONS } from "./github_actions.ts";
import { GITLAB } from "./gitlab.ts";
import { type CiProvider, first, provider, unlessTag } from "./provider.ts";

const CIRCLECI = provider({
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

const BITBUCKET = provider({
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

const JENKINS = provider({
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
    return unlessTag(
      first(read, ["BRANCH_NAME", "GIT_LOCAL_BRANCH"]) ?? gitBranch,
      read("TAG_NAME"),
    );
  },
  repository: ({ read }) => repositorySlug(read("GIT_URL")),
  actor: ["CHANGE_AUTHOR", "BUILD_USER_ID"],
  buildUrl: ["BUILD_URL"],
});

const AZURE_PIPELINES = provider({
  id: "azure_pipelines",
  name: "Azure Pipelines",
  debug: {
    variable: "SYSTEM_DEBUG",
    on: (value) => value.toLowerCase() === "true",
    format: "azure",
  },
  reads: [
    "BUILD_SOURCEVERSION",
    "SYSTEM_PULLREQUEST_SOURCECOMMITID",
    "SYSTEM_TEAMFOUNDATIONSERVERURI",
    "SYSTEM_TEAMPROJECTID",
    "BUILD_BUILDID",
  ],
  detect: { true: "TF_BUILD" },
  // For GitHub repositories the ID is GitHub's internal one and the NUMBER is the one people see.
  pullRequest: ["SYSTEM_PULLREQUEST_PULLREQUESTNUMBER", "SYSTEM_PULLREQUEST_PULLREQUESTID"],
  commitSha: ({ read, pullRequest }) =>
    (pullRequest === null ? null : read("SYSTEM_PULLREQUEST_SOURCECOMMITID")) ??
      read("BUILD_SOURCEVERSION"),
  // BUILD_SOURCEBRANCHNAME is not used: it is only the last segment of `feature/login`.
  branch: { branch: "BUILD_SOURCEBRANCH", source: "SYSTEM_PULLREQUEST_SOURCEBRANCH" },
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

const BUILDKITE = provider({
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

const TRAVIS = provider({
  id: "travis",
  name: "Travis CI",
  reads: ["TRAVIS_COMMIT", "TRAVIS_PULL_REQUEST_SHA"],
  detect: { true: "TRAVIS" },
  pullRequest: ["TRAVIS_PULL_REQUEST"],
  // On PR builds TRAVIS_COMMIT is the merge and TRAVIS_BRANCH the target.
  commitSha: ({ read, pullRequest }) =>
    (pullRequest === null ? null : read("TRAVIS_PULL_REQUEST_SHA")) ?? read("TRAVIS_COMMIT"),
  branch: { branch: "TRAVIS_BRANCH", tag: "TRAVIS_TAG", source: "TRAVIS_PULL_REQUEST_BRANCH" },
  repository: ["TRAVIS_REPO_SLUG"],
  buildUrl: ["TRAVIS_JOB_WEB_URL", "TRAVIS_BUILD_WEB_URL"],
});

// TeamCity keeps branch and pull request in configuration parameters, not in the environment. On
// a pull request's build `teamcity.build.branch` is `pull/42` (the logical name of the PR's ref),
// not a branch; the Pull Requests build feature gives the source branch and the number.
const TEAMCITY = provider({
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
const HARNESS = provider({
  id: "harness",
  name: "Harness CI",
  detect: { set: "HARNESS_BUILD_ID" },
  pullRequest: ["DRONE_PULL_REQUEST"],
  commitSha: ["DRONE_COMMIT_SHA", "CI_COMMIT_SHA"],
  branch: { branch: "DRONE_BRANCH", tag: "DRONE_TAG", source: "DRONE_SOURCE_BRANCH" },
  repository: ["DRONE_REPO"],
  actor: ["HARNESS_USER_ID"],
  buildUrl: ["DRONE_BUILD_LINK", "CI_BUILD_LINK"],
});

const WOODPECKER = provider({
  id: "woodpecker",
  name: "Woodpecker CI",
  reads: ["CI"],
  detect: (read) => read("CI") === "woodpecker",
  pullRequest: ["CI_COMMIT_PULL_REQUEST"],
  commitSha: ["CI_COMMIT_SHA"],
  branch: { branch: "CI_COMMIT_BRANCH", tag: "CI_COMMIT_TAG", source: "CI_COMMIT_SOURCE_BRANCH" },
  repository: ["CI_REPO"],
  actor: ["CI_COMMIT_AUTHOR"],
  buildUrl: ["CI_PIPELINE_URL"],
});

const DRONE = provider({
  id: "drone",
  name: "Drone",
  detect: { true: "DRONE" },
  pullRequest: ["DRONE_PULL_REQUEST"],
  commitSha: ["DRONE_COMMIT_SHA"],
  branch: { branch: "DRONE_BRANCH", tag: "DRONE_TAG", source: "DRONE_SOURCE_BRANCH" },
  repository: ["DRONE_REPO"],
  actor: ["DRONE_COMMIT_AUTHOR"],
  buildUrl: ["DRONE_BUILD_LINK"],
});

const CODEBUILD = provider({
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

const BITRISE = provider({
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

// Cloud Build sets no variables of its own in a step: substitutions reach the environment only when
// mapped (`env:` or `options: automapSubstitutions: true`). Detected by PROJECT_ID and BUILD_ID
// (every build has them) plus one mapped value; last, as BUILD_ID alone is also Jenkins'.
const CLOUD_BUILD = provider({
  id: "cloud_build",
  name: "Google Cloud Build",
  reads: [
    "PROJECT_ID",
    "BUILD_ID",
    "LOCATION",
    "_BASE_BRANCH",
  ],
  detect: (read) =>
    read("PROJECT_ID") !== null && read("BUILD_ID") !== null &&
    first(read, ["COMMIT_SHA", "BRANCH_NAME", "_PR_NUMBER", "REPO_FULL_NAME"]) !== null,
  pullRequest: ["_PR_NUMBER"],
  commitSha: ["COMMIT_SHA"],
  // Pull-request triggers name the change's branches in _HEAD_BRANCH and _BASE_BRANCH; what
  // BRANCH_NAME holds on such a build is not documented, so it is only the fallback.
  branch: { branch: "BRANCH_NAME", tag: "TAG_NAME", source: ["_HEAD_BRANCH", "BRANCH_NAME"] },
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
