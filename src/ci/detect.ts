/** Works out the CI metadata sent with each run: commit, branch, pull request, repository, actor. */

import type { GitRunner } from "../effects.ts";
import { type CiProvider, type MergeKind, PROVIDERS, type Read } from "./providers.ts";
import { FileRefused, quoteValue, UsageError } from "../config/errors.ts";
import { pullRequestNumber } from "./pull_request.ts";
import { repositorySlug } from "./git_url.ts";
import { sanitize } from "../text/sanitize.ts";

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
  /** The commit built; on a pull request, the change's head, never a synthetic merge. */
  readonly commit_sha: string | null;
  /** The branch, without `refs/heads/` or `origin/`; the source branch on a pull request; none for a tag. */
  readonly branch: string | null;
  /** A positive integer on pull/merge-request builds, otherwise `null`. */
  readonly pull_request_number: number | null;
  /** The `owner/name` slug (`group/sub/name` on GitLab), never with credentials. */
  readonly repository: string | null;
  /** The account that started the build. */
  readonly actor: string | null;
  /** Which CI was detected (`github_actions`, `gitlab`, …), or `local`. */
  readonly provider: string;
  /** An http(s) link back to the CI job, without credentials. */
  readonly build_url: string | null;
}

/**
 * What kind of build the metadata describes: a pull/merge request, a merge build (GitHub's merge
 * queue, a GitLab merge train or merged-results pipeline), or anything else (a push, a tag, a
 * schedule, a local run).
 *
 * @example
 * ```ts
 * const kind: CiBuildKind = "merge_queue";
 * ```
 */
export type CiBuildKind = "pull_request" | MergeKind | "other";

/**
 * Where the metadata's commit stands, beside the metadata and never sent (the trigger body is the
 * seven fields of {@linkcode CiMetadata}, contract §1). It words the progress line, and tells an
 * output that needs a pull request (the comment, commit statuses) that a merge queue has none.
 *
 * @example
 * ```ts
 * const context: CiContext = {
 *   kind: "merge_train",
 *   baseRef: "main",
 *   evaluatedSha: "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d",
 * };
 * ```
 */
export interface CiContext {
  /** What kind of build this is. */
  readonly kind: CiBuildKind;
  /** The branch the change merges into, without `refs/heads/`; `null` when there is none or it is unknown. */
  readonly baseRef: string | null;
  /**
   * The commit the CI built and tested: the merge result in a merge train or merged-results
   * pipeline (while `commit_sha` is the change's head), the merge group's commit in a merge queue
   * (which is `commit_sha` too), otherwise `commit_sha`.
   */
  readonly evaluatedSha: string | null;
  /**
   * In a local run, why a CI whose variables are set was not detected (`GITLAB_CI` is "false"),
   * for the "no CI detected" line; absent otherwise.
   */
  readonly almostDetected?: string;
}

/**
 * What {@linkcode detectCiBuild} found: the metadata to send and its context.
 *
 * @example
 * ```ts
 * const { metadata, context } = await detectCiBuild({ GITLAB_CI: "true" });
 * ```
 */
export interface DetectedCiBuild {
  /** The seven fields sent with each trigger. */
  readonly metadata: CiMetadata;
  /** What kind of build it is; never sent. */
  readonly context: CiContext;
}

/**
 * Values given on the command line (`--commit-sha` …); each one that is set wins.
 *
 * @example
 * ```ts
 * const overrides: MetadataOverrides = { commitSha: "4f1c2d3e", pullRequest: 42 };
 * ```
 */
export interface MetadataOverrides {
  /** `--commit-sha` */
  readonly commitSha?: string;
  /** `--branch` */
  readonly branch?: string;
  /** `--pull-request`: a positive integer. */
  readonly pullRequest?: number;
  /** `--repository` */
  readonly repository?: string;
  /** `--actor` */
  readonly actor?: string;
}

/**
 * Every environment variable the detection may read, by exact name. The entry point reads
 * exactly these and passes them to {@linkcode detectCiMetadata}.
 *
 * @example
 * ```ts
 * const env = Object.fromEntries(CI_ENV_VARIABLES.map((name) => [name, Deno.env.get(name)]));
 * ```
 */
export const CI_ENV_VARIABLES: readonly string[] = Object.freeze([
  ...new Set(["CI", ...PROVIDERS.flatMap((provider) => provider.variables)]),
]);

/**
 * The effects detection may use. Without them it reads no file and runs no git: the
 * entry point passes real ones, tests pass fakes.
 *
 * @example
 * ```ts
 * const options: DetectOptions = { git: () => Promise.resolve(undefined) };
 * ```
 */
export interface DetectOptions {
  /** Values from the command line that win over detected ones. */
  readonly overrides?: MetadataOverrides;
  /**
   * Reads a text file (GitHub's event JSON at GITHUB_EVENT_PATH); resolves undefined when it
   * cannot be read, rejects with {@linkcode FileRefused} for a path that must not be read.
   */
  readonly readTextFile?: (path: string) => Promise<string | undefined>;
  /** Runs git in the working directory (no git, not a repository: undefined). */
  readonly git?: GitRunner;
}

/**
 * Detects the CI provider and its metadata from an environment, falls back to the local git
 * checkout when no CI is detected (or `CI=false`), then applies the overrides that are set.
 * Never rejects for a missing or broken git or event file: unknown values are `null`.
 *
 * @throws {RangeError} when `overrides.pullRequest` is not a positive whole number.
 * @example
 * ```ts
 * const metadata = await detectCiMetadata(
 *   { TRAVIS: "true", TRAVIS_PULL_REQUEST: "false", TRAVIS_BRANCH: "main" },
 *   { overrides: { actor: "octocat" } },
 * );
 * // metadata.provider === "travis", metadata.branch === "main", metadata.actor === "octocat"
 * ```
 */
export async function detectCiMetadata(
  env: Readonly<Record<string, string | undefined>>,
  options: DetectOptions = {},
): Promise<CiMetadata> {
  return (await detectCiBuild(env, options)).metadata;
}

/**
 * {@linkcode detectCiMetadata}, with the build's {@linkcode CiContext} beside the metadata: the
 * metadata is what is sent, the context what the outputs and {@linkcode describeCiMetadata} say
 * of a merge queue or merge train. Nothing of the context is sent.
 *
 * @throws {RangeError} when `overrides.pullRequest` is not a positive whole number.
 * @example
 * ```ts
 * const { metadata, context } = await detectCiBuild({
 *   GITLAB_CI: "true",
 *   CI_MERGE_REQUEST_EVENT_TYPE: "merge_train",
 *   CI_MERGE_REQUEST_IID: "7",
 *   CI_MERGE_REQUEST_SOURCE_BRANCH_SHA: "4f1c2d3e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d",
 *   CI_COMMIT_SHA: "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d",
 *   CI_MERGE_REQUEST_TARGET_BRANCH_NAME: "main",
 * });
 * // metadata.commit_sha is the head 4f1c2d3…; context is
 * // { kind: "merge_train", baseRef: "main", evaluatedSha: "9e8d7c6…" }
 * ```
 */
export async function detectCiBuild(
  env: Readonly<Record<string, string | undefined>>,
  options: DetectOptions = {},
): Promise<DetectedCiBuild> {
  const read: Read = (name) => env[name]?.trim() || null;
  const git = _neverFailing(options.git);
  const provider = _detect(read);
  const found = provider === undefined
    ? { metadata: await _fromLocalCheckout(git), merge: null, baseRef: null, mergeSha: null }
    : await _fromProvider(provider, read, git, options.readTextFile);
  const metadata = _applyOverrides(found.metadata, options.overrides ?? {});
  const context: CiContext = Object.freeze({
    kind: found.merge ??
      (metadata.pull_request_number === null ? "other" : "pull_request"),
    baseRef: found.baseRef,
    evaluatedSha: found.merge === null
      ? metadata.commit_sha
      : found.mergeSha ?? metadata.commit_sha,
    ...(provider !== undefined ? {} : _almostDetected(read)),
  });
  return { metadata, context };
}

/**
 * Which merge build this is (GitHub's merge queue, a GitLab merge train or merged-results
 * pipeline), or `null`, from the variables alone: the one rule {@linkcode detectCiBuild} uses,
 * for callers that have the environment but not the context. A merge queue run has no pull
 * request to comment on or to set statuses on.
 *
 * @example
 * ```ts
 * detectMergeKind({ GITHUB_ACTIONS: "true", GITHUB_EVENT_NAME: "merge_group" }); // "merge_queue"
 * detectMergeKind({ GITHUB_ACTIONS: "true", GITHUB_EVENT_NAME: "pull_request" }); // null
 * ```
 */
export function detectMergeKind(
  env: Readonly<Record<string, string | undefined>>,
): MergeKind | null {
  const read: Read = (name) => env[name]?.trim() || null;
  return _detect(read)?.merge?.(read) ?? null;
}

/**
 * Which CI this is: the id of the first provider of {@linkcode PROVIDERS} whose variables are
 * set (values compared without regard to case, so `GITHUB_ACTIONS=TRUE` counts), or `"local"`.
 * `CI=false` (any case) switches detection off, whatever else is set. This is the one answer every
 * part of the program uses (docs/ci-metadata.md, "Which CI is this").
 *
 * @example
 * ```ts
 * detectProvider({ GITHUB_ACTIONS: "TRUE" }); // "github_actions"
 * detectProvider({ GITHUB_ACTIONS: "true", CI: "false" }); // "local"
 * ```
 */
export function detectProvider(env: Readonly<Record<string, string | undefined>>): string {
  return _detect((name) => env[name]?.trim() || null)?.id ?? "local";
}

// ci-info's convention: CI=false switches detection off, whatever else is set.
function _detect(read: Read): CiProvider | undefined {
  return read("CI")?.toLowerCase() === "false"
    ? undefined
    : PROVIDERS.find((candidate) => candidate.detect(read));
}

/**
 * One line for progress output saying which CI was detected and what will be sent. With the
 * {@linkcode CiContext} {@linkcode detectCiBuild} found, a merge queue is named by its target, and a merge train or merged-results pipeline by the merge
 * result it evaluated; without one, the line says what the seven fields say.
 *
 * @example
 * ```ts
 * describeCiMetadata({
 *   commit_sha: "4f1c2d3e5a",
 *   branch: "feature/login",
 *   pull_request_number: 42,
 *   repository: "acme/widgets",
 *   actor: null,
 *   provider: "github_actions",
 *   build_url: null,
 * }); // "detected GitHub Actions, PR #42 @ 4f1c2d3 (feature/login) in acme/widgets"
 * describeCiMetadata(
 *   {
 *     commit_sha: "4f1c2d3e5a",
 *     branch: "feature/login",
 *     pull_request_number: 7,
 *     repository: null,
 *     actor: null,
 *     provider: "gitlab",
 *     build_url: null,
 *   },
 *   { kind: "merge_train", baseRef: "main", evaluatedSha: "c0ffee00c0" },
 * ); // "detected GitLab CI, MR !7 @ 4f1c2d3 (feature/login), merge train into main: evaluating merge result c0ffee0"
 * ```
 */
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
  const baseRef = context?.baseRef ?? null;
  const into = baseRef === null ? "" : ` into ${baseRef}`;
  // A merge group is named by its target: its branch is the queue's, its number only the last
  // pull request in it.
  let what = kind === "merge_queue"
    ? `merge queue${into}`
    : pr !== null
    ? provider?.changeLabel?.(pr) ?? `PR #${pr}`
    : branch ?? "";
  if (commit !== null) {
    what += what === "" ? `commit ${commit.slice(0, 7)}` : ` @ ${commit.slice(0, 7)}`;
  }
  if ((pr !== null || kind === "merge_queue") && branch !== null) what += ` (${branch})`;
  if (repository !== null) what += what === "" ? repository : ` in ${repository}`;
  if (kind === "merge_train" || kind === "merged_result") {
    const evaluated = context?.evaluatedSha ?? null;
    what += `, ${kind === "merge_train" ? "merge train" : "merged results"}${into}${
      evaluated === null ? "" : `: evaluating merge result ${evaluated.slice(0, 7)}`
    }`;
  }
  // Branch and repository names come from the environment: keep them on one inert line.
  return sanitize(what === "" ? lead : `${lead}, ${what}`);
}

// What a provider gives: the metadata, and the facts the context is made of.
interface _Found {
  readonly metadata: CiMetadata;
  readonly merge: MergeKind | null;
  readonly baseRef: string | null;
  readonly mergeSha: string | null;
}

async function _fromProvider(
  provider: CiProvider,
  read: Read,
  git: GitRunner,
  readTextFile: DetectOptions["readTextFile"],
): Promise<_Found> {
  const files = new Map<string, Promise<unknown>>();
  const readJson = (variable: string): Promise<unknown> => {
    const path = read(variable);
    if (path === null) return Promise.resolve(undefined);
    if (!files.has(path)) files.set(path, _readJson(variable, path, readTextFile));
    return files.get(path) as Promise<unknown>;
  };
  const base = { read, git, readJson };
  const pullRequest = pullRequestNumber(await provider.pullRequest(base));
  const context = { ...base, pullRequest };
  const merge = provider.merge?.(read) ?? null;
  const [commit, branch, repository, actor, buildUrl, baseRef, mergeSha] = await Promise.all([
    provider.commitSha(context),
    provider.branch(context),
    provider.repository(context),
    provider.actor(context),
    provider.buildUrl(context),
    provider.baseRef?.(context) ?? null,
    merge === null ? null : provider.mergeSha?.(context) ?? null,
  ]);
  return {
    metadata: {
      commit_sha: _text(commit),
      branch: _branchName(branch),
      pull_request_number: pullRequest,
      repository: _text(repository),
      actor: _text(actor),
      provider: provider.id,
      build_url: _webUrl(buildUrl),
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
    repository: origin === undefined ? null : repositorySlug(origin),
    // git's user.name is a person's name, not an account: better none than a wrong one.
    actor: null,
    provider: "local",
    build_url: null,
  };
}

function _almostDetected(read: Read): { almostDetected?: string } {
  for (const provider of PROVIDERS) {
    const why = provider.almostDetected?.(read) ?? null;
    if (why !== null) return { almostDetected: why };
  }
  return {};
}

function _applyOverrides(detected: CiMetadata, overrides: MetadataOverrides): CiMetadata {
  const { pullRequest } = overrides;
  if (pullRequest !== undefined && pullRequestNumber(String(pullRequest)) !== pullRequest) {
    throw new RangeError(
      `overrides.pullRequest must be a positive whole number (got ${JSON.stringify(pullRequest)})`,
    );
  }
  const set = (value: string | undefined) => value === undefined || value === "" ? null : value;
  return {
    ...detected,
    commit_sha: set(overrides.commitSha) ?? detected.commit_sha,
    branch: set(overrides.branch) ?? detected.branch,
    pull_request_number: pullRequest ?? detected.pull_request_number,
    repository: set(overrides.repository) ?? detected.repository,
    actor: set(overrides.actor) ?? detected.actor,
  };
}

// A runner that throws or rejects counts as a failed git command, like any other.
function _neverFailing(git: DetectOptions["git"]): GitRunner {
  if (git === undefined) return () => Promise.resolve(undefined);
  return async (args) => {
    try {
      return (await git(args))?.trim() || undefined;
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
    // A pipe or a huge file where the runner puts a small regular one would hang or flood the
    // run before anything is sent.
    if (error instanceof FileRefused) {
      throw new UsageError(
        `${variable} ${
          quoteValue(path)
        } ${error.message}: the CI writes its event there as a regular file; unset or correct it (nothing was sent)`,
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

// Build links are sent and printed: only http(s), and never with credentials in them.
function _webUrl(value: string | null): string | null {
  const text = _text(value);
  if (text === null || !URL.canParse(text)) return null;
  const url = new URL(text);
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  url.username = "";
  url.password = "";
  return url.href;
}
