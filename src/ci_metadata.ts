/** Works out the CI metadata sent with each run: commit, branch, pull request, repository, actor. */

/**
 * The `ci_metadata` object of the trigger request (contract §1).
 *
 * @example
 * ```ts
 * const metadata: CiMetadata = {
 *   commit_sha: "4f1c2d3e",
 *   branch: "main",
 *   pull_request_number: null,
 *   repository: "acme/widgets",
 *   actor: "octocat",
 *   provider: "github_actions",
 *   build_url: null,
 * };
 * ```
 */
export interface CiMetadata {
  readonly commit_sha: string | null;
  readonly branch: string | null;
  readonly pull_request_number: number | null;
  readonly repository: string | null;
  readonly actor: string | null;
  readonly provider: string;
  readonly build_url: string | null;
}

/** Values given on the command line (`--commit-sha` …); each one that is set wins. */
export interface MetadataOverrides {
  readonly commitSha?: string;
  readonly branch?: string;
  readonly pullRequest?: number;
  readonly repository?: string;
  readonly actor?: string;
}

/** The environment variables this module reads; the program reads only these. */
export const CI_ENV_VARIABLES: readonly string[] = [
  "GITHUB_ACTIONS",
  "GITHUB_SHA",
  "GITHUB_REF_NAME",
  "GITHUB_HEAD_REF",
  "GITHUB_REPOSITORY",
  "GITHUB_ACTOR",
  "GITHUB_SERVER_URL",
  "GITHUB_RUN_ID",
];

/**
 * Detects the CI metadata from an environment, then applies the overrides.
 *
 * @example
 * ```ts
 * const metadata = await detectCiMetadata({ GITHUB_ACTIONS: "true", GITHUB_SHA: "abc" }, {});
 * ```
 */
export function detectCiMetadata(
  env: Readonly<Record<string, string | undefined>>,
  overrides: MetadataOverrides,
): Promise<CiMetadata> {
  const value = (name: string) => env[name] || null;
  const github = env.GITHUB_ACTIONS === "true";
  const detected: CiMetadata = github
    ? {
      commit_sha: value("GITHUB_SHA"),
      branch: value("GITHUB_HEAD_REF") ?? value("GITHUB_REF_NAME"),
      pull_request_number: null,
      repository: value("GITHUB_REPOSITORY"),
      actor: value("GITHUB_ACTOR"),
      provider: "github_actions",
      build_url: env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY && env.GITHUB_RUN_ID
        ? `${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}`
        : null,
    }
    : {
      commit_sha: null,
      branch: null,
      pull_request_number: null,
      repository: null,
      actor: null,
      provider: "local",
      build_url: null,
    };
  return Promise.resolve({
    ...detected,
    commit_sha: overrides.commitSha ?? detected.commit_sha,
    branch: overrides.branch ?? detected.branch,
    pull_request_number: overrides.pullRequest ?? detected.pull_request_number,
    repository: overrides.repository ?? detected.repository,
    actor: overrides.actor ?? detected.actor,
  });
}
