/** Every writer's one answer to "which forge, address, token, commit and change, or why none". */

import { type CiContext, type CiMetadata, reader } from "../ci/detect.ts";
import { optionName, OPTIONS } from "../config/options.ts";
import type { Config } from "../config/resolve.ts";
import { maskSecrets } from "../text/sanitize.ts";
import { tokenUrlProblem } from "../http/url.ts";

export type ForgeName = "GitHub" | "GitLab" | "Bitbucket";

export interface ForgeTarget {
  readonly forge: ForgeName;
  /** The API root (GitHub, GitLab), or the commit's API address through the proxy (Bitbucket). */
  readonly apiUrl: string;
  /** The token and the variable it came from; none for Bitbucket, whose proxy signs. */
  readonly token: { readonly value: string; readonly variable: string } | null;
  readonly proxy: string | null;
  /** GitHub's `owner/name`, GitLab's project id, Bitbucket's `workspace/slug`. */
  readonly repository: string;
  /** Lower-case hex, and which commit it is as `--dry-run` says it: "the commit built". */
  readonly commit: { readonly sha: string; readonly of: string };
  /** The pull request's number or the merge request's iid. */
  readonly change: number | null;
  /** GitLab: the pipeline's ref (a status carries it). */
  readonly ref: string | null;
  /** GitLab: set only when the status's commit is the pipeline's own. */
  readonly pipelineId: number | null;
  /** Tells this gate's comment from another's. */
  readonly gate: { readonly workflow: string; readonly job: string };
}

/** Why nothing is written to a forge, as one line for the user. */
export type ForgeSkip = { readonly skip: string };

/** The target reads the forge's settings and the CI's variables. */
export type ForgeConfig = Partial<
  Pick<
    Config,
    "githubToken" | "githubApiUrl" | "gitlabToken" | "gitlabApiUrl" | "bitbucketProxy" | "ci"
  >
>;

/** Every Bitbucket Pipelines step has it: it signs requests to `http://api.bitbucket.org`. */
export const BITBUCKET_PROXY = "http://localhost:29418";

/** Where `use` writes for this build, or the one line saying why nothing is written. */
export function forgeTarget(
  config: ForgeConfig,
  build: { readonly metadata: CiMetadata; readonly context?: CiContext | undefined },
  use: "comment" | "statuses" | "insights",
): ForgeTarget | ForgeSkip {
  const read = reader(config.ci ?? {});
  const { metadata } = build;
  // Code Insights is Bitbucket's alone: its writer runs only in Bitbucket Pipelines.
  const forge = use === "insights" ? "Bitbucket" : ({
    github_actions: "GitHub",
    gitlab: "GitLab",
    bitbucket: use === "comment" ? null : "Bitbucket",
  } as Readonly<Record<string, ForgeName | null>>)[metadata.provider] ?? null;
  const who = use === "insights" ? "Bitbucket Pipelines" : "service-ci";
  const nothing = use === "statuses"
    ? "no commit statuses"
    : use === "insights"
    ? "no Code Insights report was sent"
    : `no ${forge === "GitLab" ? "merge-request" : "pull-request"} comment`;
  const skip = (why: string): ForgeSkip => ({ skip: `${who}: ${nothing}: ${why}` });
  if (forge === null) {
    const from = use === "comment"
      ? "comments are written from GitHub Actions and GitLab CI"
      : "commit statuses are written from GitHub Actions, GitLab CI and Bitbucket Pipelines";
    return skip(`${from} only (this build: ${metadata.provider})`);
  }
  const mergeQueue = (build.context?.kind ?? null) === "merge_queue" ||
    (forge === "GitHub" && read("GITHUB_EVENT_NAME") === "merge_group");
  let change: number | null = null;
  if (use === "comment" && forge === "GitHub") {
    // The queue's branch names a pull request, but the event has none: the comment belongs to
    // the pull request's own run.
    if (mergeQueue) {
      return {
        skip:
          "service-ci: no pull-request comment in a merge queue run (merge_group has no pull request); the pull_request run's comment stands",
      };
    }
    change = metadata.pull_request_number;
    const flag = optionName(OPTIONS.pullRequest);
    if (change === null) {
      return skip(
        `this build is not for a pull request (no pull request number was detected; ${flag} <n> names one)`,
      );
    }
  }
  if (use === "comment" && forge === "GitLab") {
    const iidText = read("CI_MERGE_REQUEST_IID");
    if (iidText === null && read("CI_EXTERNAL_PULL_REQUEST_IID") !== null) {
      return skip(
        "this pipeline is for an external pull request, which has no GitLab merge request to comment on",
      );
    }
    change = iidText === null ? metadata.pull_request_number : Number(iidText);
    if (change === null || !Number.isSafeInteger(change) || change < 1) {
      return skip(
        'this pipeline is not for a merge request (CI_MERGE_REQUEST_IID is set in merge request pipelines: `rules: - if: $CI_PIPELINE_SOURCE == "merge_request_event"`)',
      );
    }
  }
  // The metadata already picks the pull or merge request's head over the merge commit. Code
  // Insights takes an abbreviated SHA.
  const sha = metadata.commit_sha ?? (forge === "Bitbucket" ? read("BITBUCKET_COMMIT") : null);
  const valid = use === "insights" ? /^[0-9a-f]{7,64}$/i : /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i;
  const commit = sha !== null && valid.test(sha) ? sha.toLowerCase() : null;
  if (commit === null && use !== "comment") {
    const got = JSON.stringify(metadata.commit_sha ?? "");
    const flag = optionName(OPTIONS.commitSha);
    return skip(
      use === "insights"
        ? `the commit is not a hex SHA (got ${got})`
        : `no full commit SHA was detected (got ${got}; ${flag} gives one)`,
    );
  }
  // A merge group is GitHub's merge queue; a merge request's head is also the commit in a GitLab
  // merge train or merged-results pipeline, whose merge result is another commit.
  const of = forge === "GitHub" && mergeQueue
    ? "the merge group's head"
    : forge === "GitHub" && metadata.pull_request_number !== null
    ? "the pull request's head"
    : forge === "GitLab" && read("CI_MERGE_REQUEST_IID") !== null
    ? "the merge request's head"
    : "the commit built";
  const base = {
    forge,
    commit: { sha: commit ?? "", of },
    change: change ?? metadata.pull_request_number,
    token: null,
    proxy: null,
    ref: null,
    pipelineId: null,
  };
  switch (forge) {
    case "GitHub": {
      const value = config.githubToken;
      const permission = use === "comment" ? "pull-requests" : "checks";
      if (value === undefined) {
        return skip(
          `${OPTIONS.githubToken.variable} is not set; set it to \${{ github.token }} and grant the job \`permissions: ${permission}: write\``,
        );
      }
      // GITHUB_API_URL points elsewhere on GitHub Enterprise Server.
      const apiUrl = config.githubApiUrl ?? "https://api.github.com";
      const problem = tokenUrlProblem(apiUrl, OPTIONS.githubApiUrl.variable);
      if (problem !== null) return skip(problem);
      const slug = metadata.repository ?? read("GITHUB_REPOSITORY");
      if (slug === null || !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(slug)) {
        const got = JSON.stringify(maskSecrets(slug ?? "", [value]));
        const flag = optionName(OPTIONS.repository);
        return skip(
          `the repository must be "owner/name" (got ${got}; GITHUB_REPOSITORY or ${flag} sets it)`,
        );
      }
      return {
        ...base,
        apiUrl,
        token: { value, variable: OPTIONS.githubToken.variable },
        repository: slug,
        gate: { workflow: read("GITHUB_WORKFLOW") ?? "", job: read("GITHUB_JOB") ?? "" },
      };
    }
    case "GitLab": {
      const value = config.gitlabToken;
      const role = use === "comment"
        ? " (CI_JOB_TOKEN cannot write merge request notes)"
        : " and the Developer role (CI_JOB_TOKEN cannot set statuses)";
      if (value === undefined) {
        return skip(
          `${OPTIONS.gitlabToken.variable} is not set; set it to a project access token with the api scope${role}`,
        );
      }
      const apiUrl = config.gitlabApiUrl;
      if (apiUrl === undefined) return skip(`${OPTIONS.gitlabApiUrl.variable} is not set`);
      const problem = tokenUrlProblem(apiUrl, OPTIONS.gitlabApiUrl.variable);
      if (problem !== null) return skip(problem);
      const projectId = read("CI_PROJECT_ID");
      if (projectId === null) return skip("CI_PROJECT_ID is not set");
      const pipeline = Number(read("CI_PIPELINE_ID"));
      const own = commit !== null && read("CI_COMMIT_SHA")?.toLowerCase() === commit;
      return {
        ...base,
        apiUrl,
        token: { value, variable: OPTIONS.gitlabToken.variable },
        repository: projectId,
        ref: read("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME") ?? read("CI_COMMIT_REF_NAME") ??
          metadata.branch,
        pipelineId: own && Number.isSafeInteger(pipeline) && pipeline > 0 ? pipeline : null,
        gate: { workflow: "", job: read("CI_JOB_NAME") ?? "" },
      };
    }
    case "Bitbucket": {
      const [owner, name] = (read("BITBUCKET_REPO_FULL_NAME") ?? "").split("/");
      const workspace = read("BITBUCKET_WORKSPACE") || owner;
      const slug = read("BITBUCKET_REPO_SLUG") || name;
      if (!workspace || !slug) {
        return skip(
          "BITBUCKET_WORKSPACE and BITBUCKET_REPO_SLUG (or BITBUCKET_REPO_FULL_NAME) are not set",
        );
      }
      const repository = `${encodeURIComponent(workspace)}/${encodeURIComponent(slug)}`;
      return {
        ...base,
        apiUrl: `http://api.bitbucket.org/2.0/repositories/${repository}/commit/${commit}`,
        proxy: config.bitbucketProxy ?? BITBUCKET_PROXY,
        repository,
        gate: { workflow: "", job: "" },
      };
    }
  }
}

/** One phrase for `--dry-run`; it names the token's variable, never its value. */
export function describeTarget(target: ForgeTarget): string {
  const change = target.change === null
    ? ""
    : target.forge === "GitLab"
    ? ` merge request !${target.change},`
    : ` pull request #${target.change},`;
  const how = target.token !== null
    ? `with ${target.token.variable} to ${target.apiUrl}`
    : `through the pipeline's proxy ${target.proxy ?? BITBUCKET_PROXY}`;
  return `on ${target.forge}${change} commit ${
    target.commit.sha.slice(0, 7)
  } (${target.commit.of}) of ${target.repository}, ${how}`;
}
