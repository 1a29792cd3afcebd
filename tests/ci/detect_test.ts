import assert from "node:assert/strict";
import {
  CI_ENV_VARIABLES,
  type CiMetadata,
  describeCiMetadata,
  detectCiBuild,
  type DetectOptions,
} from "../../src/ci/detect.ts";

type Env = Record<string, string | undefined>;

const detectCiMetadata = async (env: Env, options?: DetectOptions): Promise<CiMetadata> =>
  (await detectCiBuild(env, options)).metadata;

const HEAD = "4f1c2d3e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d";
const MERGE = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d";
const OTHER = "0123456789abcdef0123456789abcdef01234567";
const TOKEN = "glcbt-s3cr3t-t0ken";
const EVENT_PATH = "/home/runner/work/_temp/_github_workflow/event.json";

/** A git that answers only the commands it is given, like a checkout would. */
function fakeGit(answers: Record<string, string>): NonNullable<DetectOptions["git"]> {
  return (args) => Promise.resolve(answers[args.join(" ")]);
}

/** A readTextFile that knows one file. */
function fakeFiles(files: Record<string, string>): NonNullable<DetectOptions["readTextFile"]> {
  return (path) => Promise.resolve(files[path]);
}

function local(fields: Partial<CiMetadata> = {}): CiMetadata {
  return {
    commit_sha: null,
    branch: null,
    pull_request_number: null,
    repository: null,
    actor: null,
    provider: "local",
    build_url: null,
    ...fields,
  };
}

interface Case {
  readonly name: string;
  readonly env: Env;
  readonly options?: DetectOptions;
  readonly expected: CiMetadata;
}

const GITHUB_BASE: Env = {
  CI: "true",
  GITHUB_ACTIONS: "true",
  GITHUB_REPOSITORY: "acme/widgets",
  GITHUB_ACTOR: "octocat",
  GITHUB_SERVER_URL: "https://github.com",
  GITHUB_RUN_ID: "8812",
  GITHUB_EVENT_PATH: EVENT_PATH,
};

const GITLAB_BASE: Env = {
  CI: "true",
  GITLAB_CI: "true",
  CI_COMMIT_SHA: HEAD,
  CI_PROJECT_PATH: "acme/widgets",
  GITLAB_USER_LOGIN: "octocat",
  CI_JOB_URL: "https://gitlab.com/acme/widgets/-/jobs/77",
  // Carries the job token: must never be read, let alone sent.
  CI_REPOSITORY_URL: `https://gitlab-ci-token:${TOKEN}@gitlab.com/acme/widgets.git`,
};

const JENKINS_BASE: Env = {
  JENKINS_URL: "https://ci.acme.test/",
  BUILD_ID: "311",
  BUILD_URL: "https://ci.acme.test/job/widgets/311/",
  GIT_URL: "https://github.com/acme/widgets.git",
};

const AZURE_BASE: Env = {
  TF_BUILD: "True",
  BUILD_REPOSITORY_NAME: "acme/widgets",
  BUILD_REQUESTEDFOR: "Octo Cat",
  SYSTEM_TEAMFOUNDATIONSERVERURI: "https://dev.azure.com/acme/",
  SYSTEM_TEAMPROJECTID: "5c2e9d1a",
  BUILD_BUILDID: "1042",
};

const BUILDKITE_BASE: Env = {
  BUILDKITE: "true",
  BUILDKITE_COMMIT: HEAD,
  BUILDKITE_BRANCH: "feature/login",
  BUILDKITE_PULL_REQUEST: "false",
  BUILDKITE_REPO: "git@github.com:acme/widgets.git",
  BUILDKITE_BUILD_CREATOR: "Octo Cat",
  BUILDKITE_BUILD_URL: "https://buildkite.com/acme/widgets/builds/51",
};

const TRAVIS_BASE: Env = {
  CI: "true",
  TRAVIS: "true",
  TRAVIS_REPO_SLUG: "acme/widgets",
  TRAVIS_JOB_WEB_URL: "https://app.travis-ci.com/acme/widgets/jobs/900",
};

const DRONE_BASE: Env = {
  CI: "true",
  DRONE: "true",
  DRONE_COMMIT_SHA: HEAD,
  DRONE_REPO: "acme/widgets",
  DRONE_COMMIT_AUTHOR: "octocat",
  DRONE_BUILD_LINK: "https://drone.acme.test/acme/widgets/12",
};

const HARNESS_BASE: Env = {
  ...DRONE_BASE,
  HARNESS_BUILD_ID: "19",
  HARNESS_USER_ID: "u-123",
  DRONE_COMMIT_AUTHOR: "someone-else",
};

const WOODPECKER_BASE: Env = {
  CI: "woodpecker",
  CI_COMMIT_SHA: HEAD,
  CI_REPO: "acme/widgets",
  CI_COMMIT_AUTHOR: "octocat",
  CI_PIPELINE_URL: "https://ci.acme.test/repos/4/pipeline/31",
};

const CODEBUILD_BASE: Env = {
  CODEBUILD_BUILD_ID: "widgets:0b6c",
  CODEBUILD_RESOLVED_SOURCE_VERSION: HEAD,
  CODEBUILD_SOURCE_REPO_URL: "https://github.com/acme/widgets.git",
  CODEBUILD_WEBHOOK_ACTOR_ACCOUNT_ID: "583231",
  CODEBUILD_BUILD_URL: "https://us-east-1.console.aws.amazon.com/codesuite/codebuild/p/1",
};

const BITRISE_BASE: Env = {
  CI: "true",
  BITRISE_IO: "true",
  BITRISE_GIT_COMMIT: HEAD,
  GIT_REPOSITORY_URL: "git@github.com:acme/widgets.git",
  BITRISE_BUILD_URL: "https://app.bitrise.io/build/a1b2",
};

const CLOUD_BUILD_BASE: Env = {
  PROJECT_ID: "acme-ci",
  BUILD_ID: "b7f1c2",
  COMMIT_SHA: HEAD,
  REPO_FULL_NAME: "acme/widgets",
};

const CASES: readonly Case[] = [
  {
    name: "reads a GitHub Actions push build",
    env: {
      ...GITHUB_BASE,
      GITHUB_SHA: HEAD,
      GITHUB_REF: "refs/heads/feature/login",
      GITHUB_REF_NAME: "feature/login",
      GITHUB_REF_TYPE: "branch",
      GITHUB_HEAD_REF: "",
    },
    options: { readTextFile: fakeFiles({ [EVENT_PATH]: '{"ref":"x"}' }) },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "github_actions",
      build_url: "https://github.com/acme/widgets/actions/runs/8812",
    },
  },
  {
    name: "reads the head commit and number of a GitHub pull request from the event JSON",
    env: {
      ...GITHUB_BASE,
      GITHUB_SHA: MERGE,
      GITHUB_REF: "refs/pull/42/merge",
      GITHUB_REF_NAME: "42/merge",
      GITHUB_HEAD_REF: "feature/login",
      GITHUB_BASE_REF: "main",
    },
    options: {
      readTextFile: fakeFiles({
        [EVENT_PATH]: JSON.stringify({
          action: "synchronize",
          number: 42,
          pull_request: { number: 42, head: { sha: HEAD, ref: "feature/login" } },
        }),
      }),
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "github_actions",
      build_url: "https://github.com/acme/widgets/actions/runs/8812",
    },
  },
  {
    name: "falls back to refs/pull/N/merge when the GitHub event JSON cannot be read",
    env: {
      ...GITHUB_BASE,
      GITHUB_SHA: MERGE,
      GITHUB_REF: "refs/pull/42/merge",
      GITHUB_HEAD_REF: "feature/login",
    },
    options: { readTextFile: () => Promise.resolve(undefined) },
    expected: {
      commit_sha: MERGE,
      branch: "feature/login",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "github_actions",
      build_url: "https://github.com/acme/widgets/actions/runs/8812",
    },
  },
  {
    name: "ignores a GitHub event file that is not JSON",
    env: { ...GITHUB_BASE, GITHUB_SHA: HEAD, GITHUB_REF: "refs/heads/main" },
    options: { readTextFile: fakeFiles({ [EVENT_PATH]: "{not json" }) },
    expected: {
      commit_sha: HEAD,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "github_actions",
      build_url: "https://github.com/acme/widgets/actions/runs/8812",
    },
  },
  {
    name: "gives a GitHub tag build no branch",
    env: {
      ...GITHUB_BASE,
      GITHUB_SHA: HEAD,
      GITHUB_REF: "refs/tags/v1.2.0",
      GITHUB_REF_NAME: "v1.2.0",
      GITHUB_REF_TYPE: "tag",
    },
    expected: {
      commit_sha: HEAD,
      branch: null,
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "github_actions",
      build_url: "https://github.com/acme/widgets/actions/runs/8812",
    },
  },
  {
    name: "uses GITHUB_REF_NAME without GITHUB_REF, but not for a tag",
    env: { ...GITHUB_BASE, GITHUB_REF_NAME: "v2", GITHUB_REF_TYPE: "tag" },
    expected: {
      commit_sha: null,
      branch: null,
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "github_actions",
      build_url: "https://github.com/acme/widgets/actions/runs/8812",
    },
  },
  {
    name: "names whoever re-ran a GitHub workflow as the actor",
    env: {
      ...GITHUB_BASE,
      GITHUB_SHA: HEAD,
      GITHUB_REF: "refs/heads/main",
      GITHUB_TRIGGERING_ACTOR: "hubot",
      GITHUB_SERVER_URL: "https://github.acme.test/",
    },
    expected: {
      commit_sha: HEAD,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "hubot",
      provider: "github_actions",
      build_url: "https://github.acme.test/acme/widgets/actions/runs/8812",
    },
  },
  {
    name: "reads a GitLab branch pipeline",
    env: { ...GITLAB_BASE, CI_COMMIT_BRANCH: "main", CI_COMMIT_REF_NAME: "main" },
    expected: {
      commit_sha: HEAD,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "gitlab",
      build_url: "https://gitlab.com/acme/widgets/-/jobs/77",
    },
  },
  {
    name: "reads a GitLab merge request in a subgroup by its IID, not its instance-wide ID",
    env: {
      ...GITLAB_BASE,
      CI_PROJECT_PATH: "acme/platform/widgets",
      CI_COMMIT_REF_NAME: "feature/login",
      CI_MERGE_REQUEST_IID: "7",
      CI_MERGE_REQUEST_ID: "4433221",
      CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: "feature/login",
      CI_MERGE_REQUEST_TARGET_BRANCH_NAME: "main",
      CI_MERGE_REQUEST_SOURCE_BRANCH_SHA: "",
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 7,
      repository: "acme/platform/widgets",
      actor: "octocat",
      provider: "gitlab",
      build_url: "https://gitlab.com/acme/widgets/-/jobs/77",
    },
  },
  {
    name: "reads the source commit of a GitLab merged-results pipeline",
    env: {
      ...GITLAB_BASE,
      CI_COMMIT_SHA: MERGE,
      CI_COMMIT_REF_NAME: "refs/merge-requests/7/merge",
      CI_MERGE_REQUEST_IID: "7",
      CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: "feature/login",
      CI_MERGE_REQUEST_SOURCE_BRANCH_SHA: HEAD,
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 7,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "gitlab",
      build_url: "https://gitlab.com/acme/widgets/-/jobs/77",
    },
  },
  {
    name: "gives a GitLab tag pipeline no branch",
    env: { ...GITLAB_BASE, CI_COMMIT_TAG: "v1.2.0", CI_COMMIT_REF_NAME: "v1.2.0" },
    expected: {
      commit_sha: HEAD,
      branch: null,
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "gitlab",
      build_url: "https://gitlab.com/acme/widgets/-/jobs/77",
    },
  },
  {
    name: "reads a CircleCI branch build",
    env: {
      CI: "true",
      CIRCLECI: "true",
      CIRCLE_SHA1: HEAD,
      CIRCLE_BRANCH: "main",
      CIRCLE_PROJECT_USERNAME: "acme",
      CIRCLE_PROJECT_REPONAME: "widgets",
      CIRCLE_USERNAME: "octocat",
      CIRCLE_BUILD_URL: "https://circleci.com/gh/acme/widgets/55",
    },
    expected: {
      commit_sha: HEAD,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "circleci",
      build_url: "https://circleci.com/gh/acme/widgets/55",
    },
  },
  {
    name: "reads a CircleCI PR number from the end of CIRCLE_PULL_REQUEST",
    env: {
      CIRCLECI: "true",
      CIRCLE_SHA1: HEAD,
      CIRCLE_BRANCH: "feature/login",
      CIRCLE_PULL_REQUEST: "https://github.com/acme/widgets/pull/42",
      CIRCLE_REPOSITORY_URL: "git@github.com:acme/widgets.git",
      CIRCLE_USERNAME: "octocat",
      CIRCLE_BUILD_URL: "https://circleci.com/gh/acme/widgets/56",
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "circleci",
      build_url: "https://circleci.com/gh/acme/widgets/56",
    },
  },
  {
    name: "reads a CircleCI fork PR from CIRCLE_PR_NUMBER",
    env: { CIRCLECI: "true", CIRCLE_SHA1: HEAD, CIRCLE_BRANCH: "pull/43", CIRCLE_PR_NUMBER: "43" },
    expected: {
      commit_sha: HEAD,
      branch: "pull/43",
      pull_request_number: 43,
      repository: null,
      actor: null,
      provider: "circleci",
      build_url: null,
    },
  },
  {
    name: "gives a CircleCI tag build no branch",
    env: { CIRCLECI: "true", CIRCLE_SHA1: HEAD, CIRCLE_TAG: "v1.2.0", CIRCLE_BRANCH: "" },
    expected: {
      commit_sha: HEAD,
      branch: null,
      pull_request_number: null,
      repository: null,
      actor: null,
      provider: "circleci",
      build_url: null,
    },
  },
  {
    name: "reads a Bitbucket Pipelines branch build",
    env: {
      CI: "true",
      BITBUCKET_BUILD_NUMBER: "7",
      BITBUCKET_COMMIT: HEAD,
      BITBUCKET_BRANCH: "main",
      BITBUCKET_REPO_FULL_NAME: "acme/widgets",
      BITBUCKET_STEP_TRIGGERER_UUID: "{5e1c3b0a-1111-2222-3333-444455556666}",
    },
    expected: {
      commit_sha: HEAD,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "{5e1c3b0a-1111-2222-3333-444455556666}",
      provider: "bitbucket",
      build_url: "https://bitbucket.org/acme/widgets/addon/pipelines/home#!/results/7",
    },
  },
  {
    name: "reads a Bitbucket Pipelines pull request",
    env: {
      BITBUCKET_BUILD_NUMBER: "8",
      BITBUCKET_COMMIT: HEAD,
      BITBUCKET_BRANCH: "feature/login",
      BITBUCKET_PR_ID: "12",
      BITBUCKET_PR_DESTINATION_BRANCH: "main",
      BITBUCKET_REPO_FULL_NAME: "acme/widgets",
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 12,
      repository: "acme/widgets",
      actor: null,
      provider: "bitbucket",
      build_url: "https://bitbucket.org/acme/widgets/addon/pipelines/home#!/results/8",
    },
  },
  {
    name: "gives a Bitbucket tag build no branch",
    env: { BITBUCKET_BUILD_NUMBER: "9", BITBUCKET_COMMIT: HEAD, BITBUCKET_TAG: "v1.2.0" },
    expected: {
      commit_sha: HEAD,
      branch: null,
      pull_request_number: null,
      repository: null,
      actor: null,
      provider: "bitbucket",
      build_url: null,
    },
  },
  {
    name: "strips origin/ from the Jenkins Git plugin's GIT_BRANCH and drops URL credentials",
    env: {
      ...JENKINS_BASE,
      GIT_COMMIT: HEAD,
      GIT_BRANCH: "origin/main",
      GIT_URL: `https://jenkins:${TOKEN}@github.com/acme/widgets.git`,
      BUILD_USER_ID: "octocat",
    },
    expected: {
      commit_sha: HEAD,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "jenkins",
      build_url: "https://ci.acme.test/job/widgets/311/",
    },
  },
  {
    name: "reads a plain Jenkins job with an scp-like GIT_URL and a local branch",
    env: {
      ...JENKINS_BASE,
      GIT_COMMIT: HEAD,
      GIT_BRANCH: "refs/remotes/origin/feature/login",
      GIT_LOCAL_BRANCH: "feature/login",
      GIT_URL: "git@github.com:acme/widgets.git",
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: null,
      provider: "jenkins",
      build_url: "https://ci.acme.test/job/widgets/311/",
    },
  },
  {
    name: "reads a Jenkins multibranch branch build",
    env: {
      ...JENKINS_BASE,
      GIT_COMMIT: HEAD,
      BRANCH_NAME: "feature/login",
      GIT_BRANCH: "feature/login",
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: null,
      provider: "jenkins",
      build_url: "https://ci.acme.test/job/widgets/311/",
    },
  },
  {
    name: "takes HEAD^2 as the head of a Jenkins multibranch PR whose HEAD is GIT_COMMIT's merge",
    env: {
      ...JENKINS_BASE,
      GIT_COMMIT: MERGE,
      BRANCH_NAME: "PR-24",
      GIT_BRANCH: "PR-24",
      CHANGE_ID: "24",
      CHANGE_BRANCH: "feature/login",
      CHANGE_TARGET: "main",
      CHANGE_AUTHOR: "octocat",
    },
    options: { git: fakeGit({ "rev-parse HEAD": MERGE, "rev-parse HEAD^2": HEAD }) },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 24,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "jenkins",
      build_url: "https://ci.acme.test/job/widgets/311/",
    },
  },
  {
    name: "keeps GIT_COMMIT for a Jenkins PR when the checkout's HEAD is another commit",
    env: { ...JENKINS_BASE, GIT_COMMIT: MERGE, CHANGE_ID: "24", CHANGE_BRANCH: "feature/login" },
    options: { git: fakeGit({ "rev-parse HEAD": OTHER, "rev-parse HEAD^2": HEAD }) },
    expected: {
      commit_sha: MERGE,
      branch: "feature/login",
      pull_request_number: 24,
      repository: "acme/widgets",
      actor: null,
      provider: "jenkins",
      build_url: "https://ci.acme.test/job/widgets/311/",
    },
  },
  {
    name: "keeps GIT_COMMIT for a Jenkins PR built without a merge (no HEAD^2)",
    env: { ...JENKINS_BASE, GIT_COMMIT: HEAD, CHANGE_ID: "24", CHANGE_BRANCH: "feature/login" },
    options: { git: fakeGit({ "rev-parse HEAD": HEAD }) },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 24,
      repository: "acme/widgets",
      actor: null,
      provider: "jenkins",
      build_url: "https://ci.acme.test/job/widgets/311/",
    },
  },
  {
    name: "gives a Jenkins multibranch tag build no branch",
    env: { ...JENKINS_BASE, GIT_COMMIT: HEAD, BRANCH_NAME: "v1.2.0", TAG_NAME: "v1.2.0" },
    expected: {
      commit_sha: HEAD,
      branch: null,
      pull_request_number: null,
      repository: "acme/widgets",
      actor: null,
      provider: "jenkins",
      build_url: "https://ci.acme.test/job/widgets/311/",
    },
  },
  {
    name: "reads a whole Azure Pipelines branch, not just BUILD_SOURCEBRANCHNAME",
    env: {
      ...AZURE_BASE,
      BUILD_SOURCEVERSION: HEAD,
      BUILD_SOURCEBRANCH: "refs/heads/feature/login",
      BUILD_SOURCEBRANCHNAME: "login",
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "Octo Cat",
      provider: "azure_pipelines",
      build_url: "https://dev.azure.com/acme/5c2e9d1a/_build/results?buildId=1042",
    },
  },
  {
    name: "reads an Azure Repos pull request whose source branch is a full ref",
    env: {
      ...AZURE_BASE,
      BUILD_REASON: "PullRequest",
      BUILD_SOURCEVERSION: MERGE,
      BUILD_SOURCEBRANCH: "refs/pull/17/merge",
      SYSTEM_PULLREQUEST_PULLREQUESTID: "17",
      SYSTEM_PULLREQUEST_SOURCEBRANCH: "refs/heads/feature/login",
      SYSTEM_PULLREQUEST_TARGETBRANCH: "refs/heads/main",
      SYSTEM_PULLREQUEST_SOURCECOMMITID: HEAD,
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 17,
      repository: "acme/widgets",
      actor: "Octo Cat",
      provider: "azure_pipelines",
      build_url: "https://dev.azure.com/acme/5c2e9d1a/_build/results?buildId=1042",
    },
  },
  {
    name: "prefers the GitHub PR number to GitHub's internal PR id on Azure Pipelines",
    env: {
      ...AZURE_BASE,
      BUILD_SOURCEVERSION: MERGE,
      BUILD_SOURCEBRANCH: "refs/pull/42/merge",
      SYSTEM_PULLREQUEST_PULLREQUESTID: "1928374650",
      SYSTEM_PULLREQUEST_PULLREQUESTNUMBER: "42",
      SYSTEM_PULLREQUEST_SOURCEBRANCH: "feature/login",
      SYSTEM_PULLREQUEST_TARGETBRANCH: "main",
      SYSTEM_TEAMFOUNDATIONSERVERURI: "https://dev.azure.com/acme",
    },
    expected: {
      commit_sha: MERGE,
      branch: "feature/login",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: "Octo Cat",
      provider: "azure_pipelines",
      build_url: "https://dev.azure.com/acme/5c2e9d1a/_build/results?buildId=1042",
    },
  },
  {
    name: "gives an Azure Pipelines tag build no branch",
    env: { ...AZURE_BASE, BUILD_SOURCEVERSION: HEAD, BUILD_SOURCEBRANCH: "refs/tags/v1.2.0" },
    expected: {
      commit_sha: HEAD,
      branch: null,
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "Octo Cat",
      provider: "azure_pipelines",
      build_url: "https://dev.azure.com/acme/5c2e9d1a/_build/results?buildId=1042",
    },
  },
  {
    name: 'reads BUILDKITE_PULL_REQUEST="false" as a Buildkite branch build',
    env: BUILDKITE_BASE,
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "Octo Cat",
      provider: "buildkite",
      build_url: "https://buildkite.com/acme/widgets/builds/51",
    },
  },
  {
    name: "reads a Buildkite pull request",
    env: {
      ...BUILDKITE_BASE,
      BUILDKITE_PULL_REQUEST: "42",
      BUILDKITE_PULL_REQUEST_BASE_BRANCH: "main",
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: "Octo Cat",
      provider: "buildkite",
      build_url: "https://buildkite.com/acme/widgets/builds/51",
    },
  },
  {
    name: "resolves a Buildkite commit of HEAD with git rev-parse",
    env: { ...BUILDKITE_BASE, BUILDKITE_COMMIT: "HEAD" },
    options: { git: fakeGit({ "rev-parse HEAD": OTHER }) },
    expected: {
      commit_sha: OTHER,
      branch: "feature/login",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "Octo Cat",
      provider: "buildkite",
      build_url: "https://buildkite.com/acme/widgets/builds/51",
    },
  },
  {
    name: "never sends the word HEAD as a Buildkite commit when git cannot answer",
    env: { ...BUILDKITE_BASE, BUILDKITE_COMMIT: "HEAD", BUILDKITE_TAG: "v1.2.0" },
    expected: {
      commit_sha: null,
      branch: null,
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "Octo Cat",
      provider: "buildkite",
      build_url: "https://buildkite.com/acme/widgets/builds/51",
    },
  },
  {
    name: "reads a Travis CI push build",
    env: {
      ...TRAVIS_BASE,
      TRAVIS_COMMIT: HEAD,
      TRAVIS_BRANCH: "main",
      TRAVIS_PULL_REQUEST: "false",
      TRAVIS_PULL_REQUEST_BRANCH: "",
      TRAVIS_PULL_REQUEST_SHA: "",
    },
    expected: {
      commit_sha: HEAD,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: null,
      provider: "travis",
      build_url: "https://app.travis-ci.com/acme/widgets/jobs/900",
    },
  },
  {
    name: "reads the source branch and head commit of a Travis CI PR, not the target and merge",
    env: {
      ...TRAVIS_BASE,
      TRAVIS_COMMIT: MERGE,
      TRAVIS_BRANCH: "main",
      TRAVIS_PULL_REQUEST: "42",
      TRAVIS_PULL_REQUEST_BRANCH: "feature/login",
      TRAVIS_PULL_REQUEST_SHA: HEAD,
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: null,
      provider: "travis",
      build_url: "https://app.travis-ci.com/acme/widgets/jobs/900",
    },
  },
  {
    name: "gives a Travis CI tag build no branch",
    env: {
      ...TRAVIS_BASE,
      TRAVIS_COMMIT: HEAD,
      TRAVIS_BRANCH: "v1.2.0",
      TRAVIS_TAG: "v1.2.0",
      TRAVIS_PULL_REQUEST: "false",
    },
    expected: {
      commit_sha: HEAD,
      branch: null,
      pull_request_number: null,
      repository: "acme/widgets",
      actor: null,
      provider: "travis",
      build_url: "https://app.travis-ci.com/acme/widgets/jobs/900",
    },
  },
  {
    name: "reads the commit and build link of a TeamCity build",
    env: {
      TEAMCITY_VERSION: "2024.12",
      BUILD_VCS_NUMBER: HEAD,
      BUILD_URL: "https://teamcity.acme.test/viewLog.html?buildId=5",
    },
    expected: {
      commit_sha: HEAD,
      branch: null,
      pull_request_number: null,
      repository: null,
      actor: null,
      provider: "teamcity",
      build_url: "https://teamcity.acme.test/viewLog.html?buildId=5",
    },
  },
  {
    name: "reads a Drone push build",
    env: { ...DRONE_BASE, DRONE_BRANCH: "main" },
    expected: {
      commit_sha: HEAD,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "drone",
      build_url: "https://drone.acme.test/acme/widgets/12",
    },
  },
  {
    name: "reads the source branch of a Drone PR, not DRONE_BRANCH (the target)",
    env: {
      ...DRONE_BASE,
      DRONE_BRANCH: "main",
      DRONE_SOURCE_BRANCH: "feature/login",
      DRONE_TARGET_BRANCH: "main",
      DRONE_PULL_REQUEST: "42",
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "drone",
      build_url: "https://drone.acme.test/acme/widgets/12",
    },
  },
  {
    name: "gives a Drone tag build no branch",
    env: { ...DRONE_BASE, DRONE_BRANCH: "main", DRONE_TAG: "v1.2.0" },
    expected: {
      commit_sha: HEAD,
      branch: null,
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "drone",
      build_url: "https://drone.acme.test/acme/widgets/12",
    },
  },
  {
    name: "detects Harness before Drone, whose variables it also sets",
    env: { ...HARNESS_BASE, DRONE_BRANCH: "main" },
    expected: {
      commit_sha: HEAD,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "u-123",
      provider: "harness",
      build_url: "https://drone.acme.test/acme/widgets/12",
    },
  },
  {
    name: "reads the source branch of a Harness PR",
    env: {
      ...HARNESS_BASE,
      DRONE_COMMIT_SHA: "",
      CI_COMMIT_SHA: HEAD,
      DRONE_BRANCH: "main",
      DRONE_SOURCE_BRANCH: "feature/login",
      DRONE_PULL_REQUEST: "42",
      DRONE_BUILD_LINK: "",
      CI_BUILD_LINK: "https://app.harness.io/ng/builds/19",
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: "u-123",
      provider: "harness",
      build_url: "https://app.harness.io/ng/builds/19",
    },
  },
  {
    name: "reads a Woodpecker push build",
    env: { ...WOODPECKER_BASE, CI_COMMIT_BRANCH: "main" },
    expected: {
      commit_sha: HEAD,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "woodpecker",
      build_url: "https://ci.acme.test/repos/4/pipeline/31",
    },
  },
  {
    name: "reads the source branch of a Woodpecker PR, not CI_COMMIT_BRANCH (the target)",
    env: {
      ...WOODPECKER_BASE,
      CI_COMMIT_BRANCH: "main",
      CI_COMMIT_SOURCE_BRANCH: "feature/login",
      CI_COMMIT_TARGET_BRANCH: "main",
      CI_COMMIT_PULL_REQUEST: "42",
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "woodpecker",
      build_url: "https://ci.acme.test/repos/4/pipeline/31",
    },
  },
  {
    name: "reads an AWS CodeBuild webhook push build",
    env: {
      ...CODEBUILD_BASE,
      CODEBUILD_WEBHOOK_TRIGGER: "branch/main",
      CODEBUILD_WEBHOOK_HEAD_REF: "refs/heads/main",
    },
    expected: {
      commit_sha: HEAD,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "583231",
      provider: "codebuild",
      build_url: "https://us-east-1.console.aws.amazon.com/codesuite/codebuild/p/1",
    },
  },
  {
    name: "reads an AWS CodeBuild PR from pr/12",
    env: {
      ...CODEBUILD_BASE,
      CODEBUILD_WEBHOOK_TRIGGER: "pr/12",
      CODEBUILD_SOURCE_VERSION: "pr/12",
      CODEBUILD_WEBHOOK_HEAD_REF: "refs/heads/feature/login",
      CODEBUILD_WEBHOOK_BASE_REF: "refs/heads/main",
      CODEBUILD_PUBLIC_BUILD_URL: "https://public.codebuild.test/builds/1",
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 12,
      repository: "acme/widgets",
      actor: "583231",
      provider: "codebuild",
      build_url: "https://public.codebuild.test/builds/1",
    },
  },
  {
    name: "gives an AWS CodeBuild tag build no branch",
    env: {
      ...CODEBUILD_BASE,
      CODEBUILD_WEBHOOK_TRIGGER: "tag/v1.2.0",
      CODEBUILD_WEBHOOK_HEAD_REF: "refs/tags/v1.2.0",
    },
    expected: {
      commit_sha: HEAD,
      branch: null,
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "583231",
      provider: "codebuild",
      build_url: "https://us-east-1.console.aws.amazon.com/codesuite/codebuild/p/1",
    },
  },
  {
    name: "reads a Bitrise branch build",
    env: { ...BITRISE_BASE, BITRISE_GIT_BRANCH: "main" },
    expected: {
      commit_sha: HEAD,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: null,
      provider: "bitrise",
      build_url: "https://app.bitrise.io/build/a1b2",
    },
  },
  {
    name: "reads a Bitrise pull request",
    env: {
      ...BITRISE_BASE,
      BITRISE_GIT_COMMIT: "",
      GIT_CLONE_COMMIT_HASH: HEAD,
      BITRISE_GIT_BRANCH: "feature/login",
      BITRISEIO_GIT_BRANCH_DEST: "main",
      BITRISE_PULL_REQUEST: "42",
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: null,
      provider: "bitrise",
      build_url: "https://app.bitrise.io/build/a1b2",
    },
  },
  {
    name: "reads a Google Cloud Build branch build from the mapped substitutions",
    env: { ...CLOUD_BUILD_BASE, BRANCH_NAME: "main" },
    expected: {
      commit_sha: HEAD,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: null,
      provider: "cloud_build",
      build_url: "https://console.cloud.google.com/cloud-build/builds/b7f1c2?project=acme-ci",
    },
  },
  {
    name: "reads a Google Cloud Build pull request in a region",
    env: {
      ...CLOUD_BUILD_BASE,
      BRANCH_NAME: "feature/login",
      _PR_NUMBER: "42",
      LOCATION: "europe-west1",
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: null,
      provider: "cloud_build",
      build_url:
        "https://console.cloud.google.com/cloud-build/builds;region=europe-west1/b7f1c2?project=acme-ci",
    },
  },
  {
    name: "reads a Google Cloud Build pull request's head branch from _HEAD_BRANCH",
    env: {
      ...CLOUD_BUILD_BASE,
      BRANCH_NAME: "main",
      _PR_NUMBER: "42",
      _HEAD_BRANCH: "feature/login",
      _BASE_BRANCH: "main",
    },
    expected: {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: null,
      provider: "cloud_build",
      build_url: "https://console.cloud.google.com/cloud-build/builds/b7f1c2?project=acme-ci",
    },
  },
  {
    name: "reads a Google Cloud Build branch build from BRANCH_NAME, whatever _HEAD_BRANCH says",
    env: { ...CLOUD_BUILD_BASE, BRANCH_NAME: "main", _HEAD_BRANCH: "feature/stale" },
    expected: {
      commit_sha: HEAD,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: null,
      provider: "cloud_build",
      build_url: "https://console.cloud.google.com/cloud-build/builds/b7f1c2?project=acme-ci",
    },
  },
  {
    name: "gives a Google Cloud Build tag build no branch",
    env: { ...CLOUD_BUILD_BASE, TAG_NAME: "v1.2.0" },
    expected: {
      commit_sha: HEAD,
      branch: null,
      pull_request_number: null,
      repository: "acme/widgets",
      actor: null,
      provider: "cloud_build",
      build_url: "https://console.cloud.google.com/cloud-build/builds/b7f1c2?project=acme-ci",
    },
  },
  {
    name: "does not take Jenkins without JENKINS_URL (BUILD_ID, BRANCH_NAME) for Cloud Build",
    env: { BUILD_ID: "311", BRANCH_NAME: "main", BUILD_URL: "https://ci.acme.test/job/w/311/" },
    expected: local(),
  },
  {
    name: "does not detect Cloud Build without a mapped value",
    env: { PROJECT_ID: "acme-ci", BUILD_ID: "b7f1c2" },
    expected: local(),
  },
  {
    name: "treats CI=false as no CI, whatever else is set",
    env: { ...GITHUB_BASE, CI: "false", GITHUB_SHA: MERGE, GITHUB_REF: "refs/heads/ci" },
    options: {
      git: fakeGit({
        "rev-parse HEAD": HEAD,
        "symbolic-ref --short HEAD": "main",
        "remote get-url origin": "git@github.com:acme/widgets.git",
      }),
    },
    expected: local({ commit_sha: HEAD, branch: "main", repository: "acme/widgets" }),
  },
  {
    name: "falls back to the local checkout when no CI is detected",
    env: { CI: "", HOME: "/home/octocat", USER: "octocat" },
    options: {
      git: fakeGit({
        "rev-parse HEAD": HEAD,
        "symbolic-ref --short HEAD": "feature/login",
        "remote get-url origin": `https://octocat:${TOKEN}@gitlab.com/acme/platform/widgets.git`,
        "config user.name": "Octo Cat",
      }),
    },
    expected: local({
      commit_sha: HEAD,
      branch: "feature/login",
      repository: "acme/platform/widgets",
    }),
  },
  {
    name: "gives a detached local checkout no branch",
    env: {},
    options: { git: fakeGit({ "rev-parse HEAD": HEAD }) },
    expected: local({ commit_sha: HEAD }),
  },
  {
    name: "gives all nulls locally when git is missing or fails",
    env: {},
    options: { git: () => Promise.reject(new Deno.errors.NotFound("git")) },
    expected: local(),
  },
  {
    name: "gives all nulls locally when no git runner is given",
    env: {},
    expected: local(),
  },
  {
    name: "lets every override that is set win over what was detected",
    env: {
      ...TRAVIS_BASE,
      TRAVIS_COMMIT: MERGE,
      TRAVIS_BRANCH: "main",
      TRAVIS_PULL_REQUEST: "42",
      TRAVIS_PULL_REQUEST_BRANCH: "feature/login",
    },
    options: {
      overrides: {
        commitSha: OTHER,
        branch: "release/2",
        pullRequest: 7,
        repository: "acme/gadgets",
        actor: "hubot",
      },
    },
    expected: {
      commit_sha: OTHER,
      branch: "release/2",
      pull_request_number: 7,
      repository: "acme/gadgets",
      actor: "hubot",
      provider: "travis",
      build_url: "https://app.travis-ci.com/acme/widgets/jobs/900",
    },
  },
  {
    name: "keeps detected values whose overrides are not set",
    env: { ...DRONE_BASE, DRONE_BRANCH: "main" },
    options: { overrides: { commitSha: OTHER, branch: "" } },
    expected: {
      commit_sha: OTHER,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "drone",
      build_url: "https://drone.acme.test/acme/widgets/12",
    },
  },
  {
    name: "fills values the local checkout cannot know from overrides",
    env: {},
    options: { overrides: { pullRequest: 42, actor: "octocat" } },
    expected: local({ pull_request_number: 42, actor: "octocat" }),
  },
  {
    name: "drops credentials and non-web schemes from build links",
    env: {
      ...JENKINS_BASE,
      GIT_COMMIT: HEAD,
      BUILD_URL: `https://admin:${TOKEN}@ci.acme.test/job/widgets/311/`,
    },
    expected: {
      commit_sha: HEAD,
      branch: null,
      pull_request_number: null,
      repository: "acme/widgets",
      actor: null,
      provider: "jenkins",
      build_url: "https://ci.acme.test/job/widgets/311/",
    },
  },
  {
    name: "sends no build link that is not an http(s) URL",
    env: { ...DRONE_BASE, DRONE_BRANCH: "main", DRONE_BUILD_LINK: "javascript:alert(1)" },
    expected: {
      commit_sha: HEAD,
      branch: "main",
      pull_request_number: null,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "drone",
      build_url: null,
    },
  },
];

for (const { name, env, options, expected } of CASES) {
  Deno.test(`detectCiMetadata() ${name}`, async () => {
    assert.deepStrictEqual(await detectCiMetadata(env, options), expected);
  });
}

Deno.test("detectCiBuild() takes a Google Cloud Build pull request's target from _BASE_BRANCH", async () => {
  const env = { ...CLOUD_BUILD_BASE, _PR_NUMBER: "42", _HEAD_BRANCH: "feat", _BASE_BRANCH: "main" };
  assert.deepEqual((await detectCiBuild(env)).context, {
    kind: "pull_request",
    baseRef: "main",
    evaluatedSha: HEAD,
  });
  // A branch build has no target, even where a trigger's substitution is mapped anyway.
  const push = { ...CLOUD_BUILD_BASE, BRANCH_NAME: "main", _BASE_BRANCH: "main" };
  assert.equal((await detectCiBuild(push)).context.baseRef, null);
});

Deno.test("detectCiMetadata() reads a GitHub pull request event from a real file", async () => {
  const directory = await Deno.makeTempDir();
  try {
    const path = `${directory}/event.json`;
    await Deno.writeTextFile(
      path,
      JSON.stringify({ pull_request: { number: 42, head: { sha: HEAD, ref: "feature/login" } } }),
    );
    const metadata = await detectCiMetadata(
      {
        ...GITHUB_BASE,
        GITHUB_EVENT_PATH: path,
        GITHUB_SHA: MERGE,
        GITHUB_REF: "refs/pull/42/merge",
      },
      { readTextFile: (file) => Deno.readTextFile(file).catch(() => undefined) },
    );
    assert.deepStrictEqual(metadata, {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "github_actions",
      build_url: "https://github.com/acme/widgets/actions/runs/8812",
    });
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
});

Deno.test("detectCiMetadata() reads the GitHub event file once", async () => {
  const reads: string[] = [];
  await detectCiMetadata({ ...GITHUB_BASE, GITHUB_REF: "refs/pull/3/merge" }, {
    readTextFile: (path) => {
      reads.push(path);
      return Promise.resolve('{"pull_request":{"number":3}}');
    },
  });
  assert.deepStrictEqual(reads, [EVENT_PATH]);
});

const NOT_A_PULL_REQUEST = ["false", "", "  ", "abc", "0", "-1", "1.5", "12abc", "1e3", "0x1f"];

for (const value of NOT_A_PULL_REQUEST) {
  Deno.test(`detectCiMetadata() reads PR ${JSON.stringify(value)} as no pull request`, async () => {
    const metadata = await detectCiMetadata({ ...BUILDKITE_BASE, BUILDKITE_PULL_REQUEST: value });
    assert.equal(metadata.pull_request_number, null);
  });
}

Deno.test("detectCiMetadata() reads a PR number past 2^53 as no pull request", async () => {
  const metadata = await detectCiMetadata({
    ...TRAVIS_BASE,
    TRAVIS_PULL_REQUEST: "9007199254740993",
  });
  assert.equal(metadata.pull_request_number, null);
});

Deno.test("detectCiMetadata() refuses a pull-request override that is not a positive integer", async () => {
  for (const pullRequest of [0, -3, 1.5, Number.NaN, 2 ** 60]) {
    await assert.rejects(
      detectCiMetadata({}, { overrides: { pullRequest } }),
      (error: unknown) =>
        error instanceof RangeError && error.message.includes("overrides.pullRequest"),
    );
  }
});

Deno.test("detectCiMetadata() never sends a credential found in the environment", async () => {
  const envs: Env[] = [
    { ...GITLAB_BASE, CI_COMMIT_BRANCH: "main" },
    { ...JENKINS_BASE, GIT_URL: `https://jenkins:${TOKEN}@github.com/acme/widgets.git` },
    { ...BUILDKITE_BASE, BUILDKITE_REPO: `https://x-access-token:${TOKEN}@github.com/acme/w.git` },
    { ...CODEBUILD_BASE, CODEBUILD_SOURCE_REPO_URL: `https://u:${TOKEN}@github.com/acme/w` },
    { ...BITRISE_BASE, GIT_REPOSITORY_URL: `https://u:${TOKEN}@github.com/acme/w.git` },
  ];
  for (const env of envs) {
    const sent = JSON.stringify(await detectCiMetadata(env));
    assert.ok(!sent.includes(TOKEN), sent);
  }
  const local = await detectCiMetadata({}, {
    git: fakeGit({ "remote get-url origin": `https://octocat:${TOKEN}@github.com/acme/w.git` }),
  });
  assert.ok(!JSON.stringify(local).includes(TOKEN));
  assert.equal(local.repository, "acme/w");
});

Deno.test("detectCiMetadata() reads no variable missing from CI_ENV_VARIABLES", async () => {
  const read = new Set<string>();
  for (const { env, options } of CASES) {
    const recording = new Proxy(env, {
      get(target, name) {
        if (typeof name === "string") read.add(name);
        return Reflect.get(target, name);
      },
    });
    await detectCiMetadata(recording, options);
  }
  const unlisted = [...read].filter((name) => !CI_ENV_VARIABLES.includes(name));
  assert.deepStrictEqual(unlisted, []);
  assert.ok(read.has("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"));
  assert.ok(!read.has("CI_REPOSITORY_URL"));
});

Deno.test("CI_ENV_VARIABLES lists exact names, once each", () => {
  assert.equal(new Set(CI_ENV_VARIABLES).size, CI_ENV_VARIABLES.length);
  for (const name of CI_ENV_VARIABLES) assert.match(name, /^[A-Z_][A-Z0-9_]*$/);
  for (const name of ["CI", "GITHUB_EVENT_PATH", "JENKINS_URL", "TF_BUILD", "_PR_NUMBER"]) {
    assert.ok(CI_ENV_VARIABLES.includes(name), name);
  }
  assert.ok(!CI_ENV_VARIABLES.includes("CI_REPOSITORY_URL"));
});

Deno.test("detectCiMetadata() does not run git for providers that do not need it", async () => {
  const calls: string[] = [];
  await detectCiMetadata({ ...TRAVIS_BASE, TRAVIS_COMMIT: HEAD, TRAVIS_BRANCH: "main" }, {
    git: (args) => {
      calls.push(args.join(" "));
      return Promise.resolve(undefined);
    },
  });
  assert.deepStrictEqual(calls, []);
});

const DESCRIPTIONS: readonly [CiMetadata, string][] = [
  [
    {
      commit_sha: HEAD,
      branch: "feature/login",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "github_actions",
      build_url: null,
    },
    "detected GitHub Actions, PR #42 @ 4f1c2d3 (feature/login) in acme/widgets",
  ],
  [local({ commit_sha: HEAD, branch: "main" }), "no CI detected (local), main @ 4f1c2d3"],
  [
    local({ commit_sha: HEAD, branch: "main", repository: "acme/widgets" }),
    "no CI detected (local), main @ 4f1c2d3 in acme/widgets",
  ],
  [local(), "no CI detected (local)"],
  [local({ repository: "acme/widgets" }), "no CI detected (local), acme/widgets"],
  [
    { ...local({ commit_sha: HEAD, repository: "acme/widgets" }), provider: "jenkins" },
    "detected Jenkins, commit 4f1c2d3 in acme/widgets",
  ],
  [
    { ...local({ branch: "main", pull_request_number: 9 }), provider: "cloud_build" },
    "detected Google Cloud Build, PR #9 (main)",
  ],
  [{ ...local(), provider: "someday_ci" }, "detected someday_ci"],
  [
    { ...local({ branch: "evil\n::error::x\x1b[31m" }), provider: "drone" },
    "detected Drone, evil ::error::x",
  ],
];

for (const [metadata, line] of DESCRIPTIONS) {
  Deno.test(`describeCiMetadata() says ${JSON.stringify(line)}`, () => {
    assert.equal(describeCiMetadata(metadata), line);
  });
}

Deno.test("describeCiMetadata() names TeamCity's branch parameters while no branch is known, and not once one is", async () => {
  const env = { TEAMCITY_VERSION: "2025.11", BUILD_VCS_NUMBER: HEAD };
  const { metadata, context } = await detectCiBuild(env, { git: fakeGit({}) });
  assert.equal(
    describeCiMetadata(metadata, context),
    "detected TeamCity, commit 4f1c2d3; no branch in the environment: pass %teamcity.build.branch% as the branch (on a pull request's build, %teamcity.pullRequest.source.branch%, and %teamcity.pullRequest.number% as the pull request)",
  );
  const given = await detectCiBuild(env, { git: fakeGit({}), overrides: { branch: "main" } });
  assert.doesNotMatch(describeCiMetadata(given.metadata, given.context), /no branch/);
});
