/**
 * What the pull-request comment reads from the environment, and which of it is secret: kept apart
 * from the comment itself, so a run without `--pr-comment` loads none of it but still masks the
 * forge tokens.
 */

/**
 * Every environment variable `PullRequestComment.fromEnv` may read, by exact name.
 *
 * @example
 * ```ts
 * const env = Object.fromEntries(PR_COMMENT_ENV_VARIABLES.map((name) => [name, Deno.env.get(name)]));
 * ```
 */
export const PR_COMMENT_ENV_VARIABLES: readonly string[] = Object.freeze([
  "GITHUB_TOKEN",
  "GITHUB_API_URL",
  "GITHUB_EVENT_NAME",
  "GITHUB_REPOSITORY",
  "GITHUB_WORKFLOW",
  "GITHUB_JOB",
  "SERVICE_GITLAB_TOKEN",
  "CI_API_V4_URL",
  "CI_PROJECT_ID",
  "CI_MERGE_REQUEST_IID",
  "CI_EXTERNAL_PULL_REQUEST_IID",
  "CI_JOB_NAME",
]);

/**
 * The forge tokens set in `env` (`GITHUB_TOKEN`, `SERVICE_GITLAB_TOKEN`): secrets to mask in
 * every output, like the service key, whether or not a comment is written.
 *
 * @example
 * ```ts
 * forgeTokens({ GITHUB_TOKEN: "ghs_example", SERVICE_GITLAB_TOKEN: "" }); // ["ghs_example"]
 * ```
 */
export function forgeTokens(env: Readonly<Record<string, string | undefined>>): string[] {
  return ["GITHUB_TOKEN", "SERVICE_GITLAB_TOKEN"]
    .map((name) => env[name]?.trim() ?? "")
    .filter((token) => token !== "");
}
