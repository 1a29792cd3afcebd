/** Picks the detected CI's writer; only it is loaded, keeping the others off every start-up. */

import type { RunEffects } from "../../effects.ts";
import type { NativeWriter } from "./native_io.ts";

/** `undefined` for a CI whose native report is JUnit alone (Jenkins, CircleCI and the rest). */
export async function nativeWriter(
  provider: string,
  effects: Pick<RunEffects, "clock" | "uuid" | "cwd">,
): Promise<NativeWriter | undefined> {
  switch (provider) {
    case "github_actions":
      return (await import("./github.ts")).createGithubWriter(effects);
    case "azure_pipelines":
      return (await import("./azure.ts")).createAzureWriter(effects);
    case "teamcity":
      return (await import("./teamcity.ts")).createTeamcityWriter();
    case "gitlab":
      return (await import("./gitlab.ts")).createGitlabWriter(effects.clock);
    case "buildkite":
      return (await import("./buildkite.ts")).createBuildkiteWriter();
    case "bitbucket":
      return (await import("./bitbucket.ts")).createBitbucketWriter();
    default:
      return undefined;
  }
}
