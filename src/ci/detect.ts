/** The CI metadata sent with each run: commit, branch, pull request, repository, actor. */

import type { GitRunner } from "../effects.ts";
import { PROVIDERS } from "./providers.ts";
import { UsageError } from "../config/errors.ts";
import {
  CONFIG_ENV_VARIABLES,
  nearMissNames,
  OPTIONS,
  type OptionValues,
} from "../config/options.ts";
import { repositorySlug } from "./git_url.ts";
import { sanitize } from "../text/sanitize.ts";
import { httpLink } from "../text/markdown.ts";
import { quoteValue } from "../text/quote.ts";
import { FileRefused } from "../platform/bounds.ts";
import { pullRequestNumber } from "../config/values.ts";
import { type CiProvider, fieldValue, type MergeKind, type Read } from "./provider.ts";

/** The `ci_metadata` object of the trigger request (contract §1). */
export interface CiMetadata {
  /** On a pull request, the change's head, never a synthetic merge. */
  readonly commit_sha: string | null;
  /** Without `refs/heads/` or `origin/`; the source branch on a pull request; none for a tag. */
  readonly branch: string | null;
  readonly pull_request_number: number | null;
  /** `owner/name` (`group/sub/name` on GitLab), never with credentials. */
  readonly repository: string | null;
  readonly actor: string | null;
  readonly provider: string;
  readonly build_url: string | null;
}

/**
 * Where the metadata's commit stands; never sent (contract §1 is the seven fields). It words the
 * progress line, and tells the comment and the statuses that a merge queue has no pull request.
 */
export interface CiContext {
  /** A merge build is GitHub's merge queue, a GitLab merge train or a merged-results pipeline. */
  readonly kind: "pull_request" | MergeKind | "other";
  /** The branch the change merges into, without `refs/heads/`. */
  readonly baseRef: string | null;
  /** The commit the CI tested: the merge result in a merge train or merged-results pipeline. */
  readonly evaluatedSha: string | null;
  /** In a local run, why a CI whose variables are set was not detected (`GITLAB_CI` is "false"). */
  readonly almostDetected?: string;
}

/** Besides the metadata's: the runner's files for its writer, and what the forge target reads. */
export const RUNNER_VARIABLES = [
  "GITHUB_OUTPUT",
  "GITHUB_STEP_SUMMARY",
  "AGENT_TEMPDIRECTORY",
  "GITHUB_EVENT_NAME",
  "GITHUB_REPOSITORY",
  "GITHUB_WORKFLOW",
  "GITHUB_JOB",
  "CI_PROJECT_ID",
  "CI_MERGE_REQUEST_IID",
  "CI_EXTERNAL_PULL_REQUEST_IID",
  "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME",
  "CI_COMMIT_REF_NAME",
  "CI_COMMIT_SHA",
  "CI_PIPELINE_ID",
  "CI_JOB_NAME",
  "BITBUCKET_WORKSPACE",
  "BITBUCKET_REPO_SLUG",
  "BITBUCKET_REPO_FULL_NAME",
  "BITBUCKET_COMMIT",
] as const;

/** Every variable detection may read: the entry point reads exactly these. */
export const CI_ENV_VARIABLES: readonly string[] = Object.freeze([
  ...new Set(["CI", ...PROVIDERS.flatMap((provider) => provider.variables), ...RUNNER_VARIABLES]),
]);

/** Every environment variable the program reads: the only ones `main.ts` asks the system for. */
export const ENV_VARIABLES: readonly string[] = [
  ...new Set([
    ...CONFIG_ENV_VARIABLES,
    // Read only to say "did you mean" when a required variable is unset.
    ...[OPTIONS.apiKey.variable, OPTIONS.agents.variable, OPTIONS.baseUrl.variable].flatMap(
      nearMissNames,
    ),
    ...CI_ENV_VARIABLES,
    // The console's (`TERM=dumb`: a terminal that shows neither cursor movement nor colours).
    "NO_COLOR",
    "TERM",
  ]),
];

/** Without its effects, detection reads no file and runs no git. */
export interface DetectOptions {
  /** The command line's `--commit-sha` …: each one that is set wins over detection. */
  readonly overrides?: Partial<
    Pick<OptionValues, "commitSha" | "branch" | "pullRequest" | "repository" | "actor">
  >;
  /** Resolves undefined when unreadable; rejects with {@linkcode FileRefused} when refused. */
  readonly readTextFile?: (path: string) => Promise<string | undefined>;
  readonly git?: GitRunner;
}

/**
 * The metadata sent, and the build's {@linkcode CiContext}, which is never sent. Falls back to the
 * local git checkout when no CI is detected (or `CI=false`), then applies the overrides. A missing
 * or broken git or event file gives `null` values, never a rejection.
 *
 * @throws {UsageError} when the event file's variable names a pipe, a device or a huge file.
 */
export async function detectCiBuild(
  env: Readonly<Record<string, string | undefined>>,
  options: DetectOptions = {},
): Promise<{ readonly metadata: CiMetadata; readonly context: CiContext }> {
  const read = reader(env);
  const git = _neverFailing(options.git);
  const provider = _detect(read);
  const found = provider === undefined
    ? { metadata: await _fromLocalCheckout(git), merge: null, baseRef: null, mergeSha: null }
    : await _fromProvider(provider, read, git, options.readTextFile);
  const almostDetected = provider === undefined
    ? PROVIDERS.map((each) => each.almostDetected?.(read)).find((why) => typeof why === "string")
    : undefined;
  const { metadata: detected } = found;
  const overrides = options.overrides ?? {};
  const { pullRequest } = overrides;
  if (pullRequest !== undefined && pullRequestNumber(String(pullRequest)) !== pullRequest) {
    throw new RangeError(
      `overrides.pullRequest must be a positive whole number (got ${JSON.stringify(pullRequest)})`,
    );
  }
  const metadata = {
    ...detected,
    commit_sha: overrides.commitSha || detected.commit_sha,
    branch: overrides.branch || detected.branch,
    pull_request_number: pullRequest ?? detected.pull_request_number,
    repository: overrides.repository || detected.repository,
    actor: overrides.actor || detected.actor,
  };
  const context: CiContext = Object.freeze({
    kind: found.merge ?? (metadata.pull_request_number === null ? "other" : "pull_request"),
    baseRef: found.baseRef,
    evaluatedSha: found.mergeSha ?? metadata.commit_sha,
    ...(almostDetected ? { almostDetected } : {}),
  });
  return { metadata, context };
}

/** The first provider of {@linkcode PROVIDERS} whose variables are set: the one answer used. */
export function detectProvider(env: Readonly<Record<string, string | undefined>>): string {
  return _detect(reader(env))?.id ?? "local";
}

export function reader(env: Readonly<Record<string, string | undefined>>): Read {
  return (name) => env[name]?.trim() || null;
}

// ci-info's convention: CI=false switches detection off, whatever else is set.
function _detect(read: Read): CiProvider | undefined {
  return read("CI")?.toLowerCase() === "false"
    ? undefined
    : PROVIDERS.find(({ detect }) =>
      typeof detect === "function"
        ? detect(read)
        : "set" in detect
        ? read(detect.set) !== null
        : read(detect.true)?.toLowerCase() === "true"
    );
}

/** The progress line: the CI and what is sent (a merge queue by target, a train by its merge). */
export function describeCiMetadata(
  metadata: CiMetadata,
  context?: CiContext,
): string {
  const { commit_sha: commit, branch, pull_request_number: pr, repository } = metadata;
  const provider = PROVIDERS.find((each) => each.id === metadata.provider);
  const lead = metadata.provider === "local"
    ? `no CI detected (local${
      context?.almostDetected === undefined ? "" : `: ${context.almostDetected}`
    })`
    : `detected ${provider?.name ?? metadata.provider}`;
  const kind = context?.kind;
  const into = context?.baseRef ? ` into ${context.baseRef}` : "";
  // A merge group is named by its target: its branch is the queue's, its number the last PR's.
  let what = kind === "merge_queue"
    ? `merge queue${into}`
    : pr !== null
    ? provider?.changeLabel?.(pr) ?? `PR #${pr}`
    : branch ?? "";
  if (commit !== null) what += `${what === "" ? "commit" : " @"} ${commit.slice(0, 7)}`;
  if ((pr !== null || kind === "merge_queue") && branch !== null) what += ` (${branch})`;
  if (repository !== null) what += what === "" ? repository : ` in ${repository}`;
  if (kind === "merge_train" || kind === "merged_result") {
    const evaluated = context?.evaluatedSha ?? null;
    what += `, ${kind === "merge_train" ? "merge train" : "merged results"}${into}${
      evaluated === null ? "" : `: evaluating merge result ${evaluated.slice(0, 7)}`
    }`;
  }
  if (branch === null && provider?.parameters !== undefined) {
    const { branch: parameter, pullRequest } = provider.parameters;
    what += `${
      what === "" ? "" : "; "
    }no branch in the environment: pass ${parameter} as the branch (on a pull request's build, ${pullRequest.branch}, and ${pullRequest.number} as the pull request)`;
  }
  // Branch and repository names come from the environment: keep them on one inert line.
  return sanitize(what === "" ? lead : `${lead}, ${what}`);
}

async function _fromProvider(
  provider: CiProvider,
  read: Read,
  git: GitRunner,
  readTextFile: DetectOptions["readTextFile"],
) {
  const files = new Map<string, Promise<unknown>>();
  const readJson = (variable: string): Promise<unknown> => {
    const path = read(variable);
    if (path === null) return Promise.resolve(undefined);
    if (!files.has(path)) files.set(path, _readJson(variable, path, readTextFile));
    return files.get(path) as Promise<unknown>;
  };
  const base = { read, git, readJson, pullRequest: null };
  const pullRequest = pullRequestNumber(await fieldValue(provider.pullRequest, base));
  const context = { ...base, pullRequest };
  const merge = provider.merge?.(read) ?? null;
  const [commit, branch, repository, actor, buildUrl, baseRef, mergeSha] = await Promise.all([
    fieldValue(provider.commitSha, context),
    fieldValue(provider.branch, context),
    fieldValue(provider.repository, context),
    fieldValue(provider.actor, context),
    fieldValue(provider.buildUrl, context),
    fieldValue(provider.baseRef, context),
    merge === null ? null : fieldValue(provider.mergeSha, context),
  ]);
  return {
    metadata: {
      commit_sha: _text(commit),
      branch: _branchName(branch),
      pull_request_number: pullRequest,
      repository: _text(repository),
      actor: _text(actor),
      provider: provider.id,
      // Sent and printed: only http(s), and never with credentials in it.
      build_url: httpLink(_text(buildUrl)),
    },
    merge,
    baseRef: _branchName(baseRef),
    mergeSha: _text(mergeSha),
  };
}

async function _fromLocalCheckout(git: GitRunner): Promise<CiMetadata> {
  const [commit, branch, origin] = await Promise.all([
    git(["rev-parse", "HEAD"]),
    // Fails on a detached HEAD, which has no branch.
    git(["symbolic-ref", "--short", "HEAD"]),
    git(["remote", "get-url", "origin"]),
  ]);
  return {
    commit_sha: commit !== undefined && /^[0-9a-f]{40,64}$/i.test(commit) ? commit : null,
    branch: branch ?? null,
    pull_request_number: null,
    repository: repositorySlug(origin),
    // git's user.name is a person's name, not an account: better none than a wrong one.
    actor: null,
    provider: "local",
    build_url: null,
  };
}

function _neverFailing(git: DetectOptions["git"]): GitRunner {
  return async (args) => {
    try {
      return (await git?.(args))?.trim() || undefined;
    } catch {
      return undefined;
    }
  };
}

async function _readJson(
  variable: string,
  path: string,
  readTextFile: DetectOptions["readTextFile"],
): Promise<unknown> {
  try {
    const text = await readTextFile?.(path);
    return text === undefined ? undefined : JSON.parse(text);
  } catch (error) {
    // A pipe or huge file where a small one belongs would hang or flood the run before any send.
    if (error instanceof FileRefused) {
      const quoted = quoteValue(path);
      throw new UsageError(
        `${variable} ${quoted} ${error.message}: the CI writes its event there as a regular file; unset or correct it (nothing was sent)`,
      );
    }
    return undefined;
  }
}

function _text(value: string | null): string | null {
  return value?.trim() || null;
}

// A branch without `refs/heads/`; tags (`refs/tags/…`) and other refs (`refs/pull/…`) are none.
function _branchName(value: string | null): string | null {
  const text = _text(value);
  if (text === null) return null;
  if (text.startsWith("refs/heads/")) return _text(text.slice("refs/heads/".length));
  return text.startsWith("refs/") ? null : text;
}
