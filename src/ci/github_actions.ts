import { type CiProvider, provider, type ProviderContext } from "./provider.ts";

// A value in the event that started a GitHub workflow (`pull_request`, `merge_group`), if any.
async function _event(
  { readJson }: Pick<ProviderContext<"GITHUB_EVENT_PATH">, "readJson">,
  ...path: string[]
): Promise<string | null> {
  let value = await readJson("GITHUB_EVENT_PATH");
  for (const key of path) {
    if (typeof value !== "object" || value === null) return null;
    value = (value as Record<string, unknown>)[key];
  }
  if (typeof value === "number") return String(value);
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}

/** GitHub Actions: the event file holds what the variables do not (a pull request's head). */
export const GITHUB_ACTIONS: CiProvider = provider({
  id: "github_actions",
  name: "GitHub Actions",
  // Shown only with RUNNER_DEBUG=1.
  debug: { variable: "RUNNER_DEBUG", on: (value) => value === "1", format: "github" },
  reads: [
    "GITHUB_EVENT_NAME",
    "GITHUB_EVENT_PATH",
    "GITHUB_SHA",
    "GITHUB_REF",
    "GITHUB_REF_NAME",
    "GITHUB_REF_TYPE",
    "GITHUB_HEAD_REF",
    "GITHUB_BASE_REF",
    "GITHUB_SERVER_URL",
    "GITHUB_RUN_ID",
  ],
  detect: { true: "GITHUB_ACTIONS" },
  pullRequest: async (context) =>
    await _event(context, "pull_request", "number") ??
      /^refs\/pull\/(\d+)\//.exec(context.read("GITHUB_REF") ?? "")?.[1] ??
      // `gh-readonly-queue/<base>/pr-<number>-<sha>`: the PR the group was made for, its last one.
      /^(?:refs\/heads\/)?gh-readonly-queue\/.+\/pr-(\d+)-[^/]*$/.exec(
        await _event(context, "merge_group", "head_ref") ?? "",
      )?.[1] ?? null,
  // GITHUB_SHA is the synthetic merge commit on pull-request events; the event holds the head.
  // A merge group has no head of its own: its merge commit is what is tested and what lands.
  commitSha: async (context) =>
    await _event(context, "pull_request", "head", "sha") ??
      await _event(context, "merge_group", "head_sha") ??
      context.read("GITHUB_SHA"),
  branch: async (context) =>
    await _event(context, "pull_request", "head", "ref") ??
      await _event(context, "merge_group", "head_ref") ??
      context.read("GITHUB_HEAD_REF") ??
      context.read("GITHUB_REF") ??
      (context.read("GITHUB_REF_TYPE") === "tag" ? null : context.read("GITHUB_REF_NAME")),
  repository: ["GITHUB_REPOSITORY"],
  // On a re-run GITHUB_ACTOR is still whoever started the first attempt.
  actor: ["GITHUB_TRIGGERING_ACTOR", "GITHUB_ACTOR"],
  buildUrl: ({ read }) => {
    const [server, repository, run] = [
      read("GITHUB_SERVER_URL"),
      read("GITHUB_REPOSITORY"),
      read("GITHUB_RUN_ID"),
    ];
    if (server === null || repository === null || run === null) return null;
    return `${server.replace(/\/+$/, "")}/${repository}/actions/runs/${run}`;
  },
  merge: (read) => read("GITHUB_EVENT_NAME") === "merge_group" ? "merge_queue" : null,
  baseRef: async (context) =>
    await _event(context, "merge_group", "base_ref") ??
      await _event(context, "pull_request", "base", "ref") ??
      context.read("GITHUB_BASE_REF"),
  mergeSha: async (context) =>
    await _event(context, "merge_group", "head_sha") ??
      context.read("GITHUB_SHA"),
});
