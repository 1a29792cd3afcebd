/**
 * What the pull-request comment reads from the environment: kept apart from the comment itself,
 * so a run without `--pr-comment` loads none of it. Which of it is secret is the option table's
 * to say (`SECRET_VARIABLES`, options.ts).
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
