/**
 * Picks the native writer of the CI the metadata detection found: Azure Pipelines, TeamCity,
 * GitLab CI, Buildkite or Bitbucket Pipelines. GitHub Actions has its own reports (github.ts).
 */

import { createAzureWriter } from "./azure.ts";
import { createBitbucketWriter } from "./bitbucket.ts";
import { createBuildkiteWriter } from "./buildkite.ts";
import { createGitlabWriter } from "./gitlab.ts";
import type { NativeWriter } from "./native_io.ts";
import { createTeamcityWriter } from "./teamcity.ts";

/** The variables the native writers read, besides the CI metadata's. */
export const NATIVE_ENV_VARIABLES: readonly string[] = [
  "AGENT_TEMPDIRECTORY",
  "SERVICE_BITBUCKET_PROXY",
  "BITBUCKET_COMMIT",
  "BITBUCKET_REPO_FULL_NAME",
  "BITBUCKET_WORKSPACE",
  "BITBUCKET_REPO_SLUG",
];

/** What the writers need from the run. */
export interface NativeOptions {
  /** The absolute working directory (Azure's summary file, when it has no temp directory). */
  readonly workingDirectory: string;
  /** Wall-clock time in epoch milliseconds (GitLab's section times). */
  readonly now: () => number;
}

/**
 * The native writer for a detected provider (`CiMetadata.provider`), or `undefined` for a CI
 * whose native report is JUnit alone (Jenkins, CircleCI and the rest) and for GitHub Actions.
 *
 * @example
 * ```ts
 * nativeWriter("azure_pipelines", { workingDirectory: "/work", now: Date.now })?.ci;
 * // "Azure Pipelines"
 * ```
 */
export function nativeWriter(provider: string, options: NativeOptions): NativeWriter | undefined {
  switch (provider) {
    case "azure_pipelines":
      return createAzureWriter({ workingDirectory: options.workingDirectory });
    case "teamcity":
      return createTeamcityWriter();
    case "gitlab":
      return createGitlabWriter({ now: options.now });
    case "buildkite":
      return createBuildkiteWriter();
    case "bitbucket":
      return createBitbucketWriter();
    default:
      return undefined;
  }
}
