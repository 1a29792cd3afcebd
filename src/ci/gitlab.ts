import { type CiProvider, first, provider, unlessTag } from "./provider.ts";

/** GitLab CI, merge-request pipelines, merge trains and merged results included. */
export const GITLAB: CiProvider = provider({
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
    first(read, [
      "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME",
      "CI_EXTERNAL_PULL_REQUEST_SOURCE_BRANCH_NAME",
    ]) ??
      unlessTag(first(read, ["CI_COMMIT_BRANCH", "CI_COMMIT_REF_NAME"]), read("CI_COMMIT_TAG")),
  repository: ["CI_PROJECT_PATH"],
  actor: ["GITLAB_USER_LOGIN"],
  buildUrl: ["CI_JOB_URL"],
  // `detached` is a merge request pipeline on the source branch's head: no merge build.
  merge: (read) => {
    const type = read("CI_MERGE_REQUEST_EVENT_TYPE");
    return type === "merge_train" || type === "merged_result" ? type : null;
  },
  baseRef: ["CI_MERGE_REQUEST_TARGET_BRANCH_NAME"],
  mergeSha: ["CI_COMMIT_SHA"],
});
