/**
 * Picks the writer of the CI that detection found (`ci_metadata.ts`, the one answer to "which CI
 * is this"): GitHub Actions, Azure Pipelines, TeamCity, GitLab CI, Buildkite or Bitbucket
 * Pipelines. Only the detected CI's writer is loaded: the others stay off every run's start-up.
 * A new CI's writer is one new file and one line here.
 */

import type { NativeWriter } from "./native_io.ts";

/**
 * The variables the native writers read, besides the CI metadata's and the forge's
 * (`forge/target.ts`, which Bitbucket's Code Insights report reads).
 */
export const NATIVE_ENV_VARIABLES: readonly string[] = [
  "GITHUB_OUTPUT",
  "GITHUB_STEP_SUMMARY",
  "AGENT_TEMPDIRECTORY",
];

/** What the writers need from the run. */
export interface NativeOptions {
  /** The absolute working directory (Azure's summary file, when it has no temp directory). */
  readonly workingDirectory: string;
  /** Wall-clock time in epoch milliseconds (GitLab's section times). */
  readonly now: () => number;
  /** A fresh UUID v4 (Azure's summary file, GitHub's output delimiter). */
  readonly uuid: () => string;
}

/**
 * The writer for a detected provider (`CiMetadata.provider`), or `undefined` for a CI whose
 * native report is JUnit alone (Jenkins, CircleCI and the rest).
 *
 * @example
 * ```ts
 * const options = { workingDirectory: "/work", now: Date.now, uuid: () => crypto.randomUUID() };
 * (await nativeWriter("azure_pipelines", options))?.ci;
 * // "Azure Pipelines"
 * ```
 */
export async function nativeWriter(
  provider: string,
  options: NativeOptions,
): Promise<NativeWriter | undefined> {
  switch (provider) {
    case "github_actions":
      return (await import("./github.ts")).createGithubWriter({ uuid: options.uuid });
    case "azure_pipelines":
      return (await import("./azure.ts")).createAzureWriter({
        workingDirectory: options.workingDirectory,
        uuid: options.uuid,
      });
    case "teamcity":
      return (await import("./teamcity.ts")).createTeamcityWriter();
    case "gitlab":
      return (await import("./gitlab.ts")).createGitlabWriter({ now: options.now });
    case "buildkite":
      return (await import("./buildkite.ts")).createBuildkiteWriter();
    case "bitbucket":
      return (await import("./bitbucket.ts")).createBitbucketWriter();
    default:
      return undefined;
  }
}
