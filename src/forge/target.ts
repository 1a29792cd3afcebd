/** Every writer's one answer to "which forge, address, token, commit and change, or why none". */

import { type CiContext, type CiMetadata, reader } from "../ci/detect.ts";
import { PROVIDERS } from "../ci/providers.ts";
import { andList } from "../text/quote.ts";
import { optionName, OPTIONS } from "../config/options.ts";
import type { ForgeConfig, ForgeSkip, ForgeTarget, ForgeUse, TargetInput } from "./forge.ts";
import { forgeNamed, forgeOf, FORGES } from "./registry.ts";

/** Where `use` writes for this build, or the one line saying why nothing is written. */
export function forgeTarget(
  config: ForgeConfig,
  build: { readonly metadata: CiMetadata; readonly context?: CiContext | undefined },
  use: ForgeUse,
): ForgeTarget | ForgeSkip {
  const read = reader(config.ci ?? {});
  const { metadata } = build;
  const forge = forgeOf(metadata.provider, use);
  // Code Insights is its CI's own report: its writer runs only there.
  const who = use === "insights" ? _ciName(forge?.provider ?? "") : "service-ci";
  const nothing = use === "statuses"
    ? "no commit statuses"
    : use === "insights"
    ? "no Code Insights report was sent"
    : `no ${(forge?.comment?.noun ?? "pull request").replace(" ", "-")} comment`;
  const skip = (why: string): ForgeSkip => ({ skip: `${who}: ${nothing}: ${why}` });
  if (forge === undefined) {
    const writers = FORGES.filter((forge) => use !== "comment" || forge.comment !== undefined);
    const from = use === "comment" ? "comments" : "commit statuses";
    const cis = andList(writers.map((forge) => _ciName(forge.provider)));
    return skip(`${from} are written from ${cis} only (this build: ${metadata.provider})`);
  }
  // The metadata already prefers the change's head to a merge; Code Insights takes a short SHA.
  const sha = metadata.commit_sha ??
    (forge.commitVariable === undefined ? null : read(forge.commitVariable));
  const valid = use === "insights" ? /^[0-9a-f]{7,64}$/i : /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i;
  const commit = sha !== null && valid.test(sha) ? sha.toLowerCase() : null;
  const input: TargetInput = { config, read, metadata, context: build.context, use, commit, skip };
  let change = metadata.pull_request_number;
  if (use === "comment") {
    const found = forge.comment!.change(input);
    if (typeof found !== "number") return found;
    change = found;
  }
  if (commit === null && use !== "comment") {
    const got = JSON.stringify(metadata.commit_sha ?? "");
    const flag = optionName(OPTIONS.commitSha);
    return skip(
      use === "insights"
        ? `the commit is not a hex SHA (got ${got})`
        : `no full commit SHA was detected (got ${got}; ${flag} gives one)`,
    );
  }
  const connection = forge.connect(input);
  if ("skip" in connection) return connection;
  return {
    proxy: null,
    ref: null,
    pipelineId: null,
    ...connection,
    forge: forge.name,
    commit: { sha: commit ?? "", of: forge.commitOf(input) ?? "the commit built" },
    change,
  };
}

/** One phrase for `--dry-run`; it names the token's variable, never its value. */
export function describeTarget(target: ForgeTarget): string {
  const { noun, sign } = forgeNamed(target.forge).comment ?? { noun: "pull request", sign: "#" };
  const change = target.change === null ? "" : ` ${noun} ${sign}${target.change},`;
  const how = target.token !== null
    ? `with ${target.token.variable} to ${target.apiUrl}`
    : `through the pipeline's proxy ${target.proxy}`;
  return `on ${target.forge}${change} commit ${
    target.commit.sha.slice(0, 7)
  } (${target.commit.of}) of ${target.repository}, ${how}`;
}

function _ciName(provider: string): string {
  return PROVIDERS.find((ci) => ci.id === provider)?.name ?? provider;
}
