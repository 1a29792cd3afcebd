/**
 * Keeps one comment per gate on the pull request (GitHub) or merge request (GitLab): written
 * "in progress" once the runs are triggered, edited with the verdicts at the end. A comment that
 * cannot be written is one line of diagnostics; it never throws and never touches the verdict.
 */

import { type CiMetadata, detectMergeKind } from "../ci_metadata.ts";
import { optionName, OPTIONS } from "../options.ts";
import type { RunReport } from "../outcome.ts";
import { maskSecrets } from "../sanitize.ts";
import { type CommentProgress, finalComment, progressComment } from "./content.ts";
import {
  type ForgeEffects,
  ForgeError,
  githubTarget,
  gitlabTarget,
  pickEffects,
} from "./forge_http.ts";
import { GithubThread } from "./github.ts";
import { GitlabThread } from "./gitlab.ts";
import { type CommentHistory, readHistory, recordRun } from "./history.ts";
import { gateMarker } from "./marker.ts";
import type { CommentThread } from "./thread.ts";

export { PR_COMMENT_ENV_VARIABLES } from "./env.ts";

/** The effects and facts {@linkcode PullRequestComment.fromEnv} needs. */
export interface PullRequestCommentOptions extends ForgeEffects {
  /** The run's CI metadata: the provider, the pull request's number, the repository. */
  readonly metadata: CiMetadata;
  /** The agents of this gate, as given (part of the marker). */
  readonly agents: readonly string[];
  /** `--pr-comment-key` (part of the marker when given). */
  readonly key?: string | undefined;
  /** The `User-Agent` header. */
  readonly userAgent: string;
  /** Prints one line of diagnostics (without its newline). */
  readonly warn: (line: string) => void;
}

/** Why no comment will be written, as one line for the user. */
export interface PullRequestCommentSkip {
  /** The line, e.g. `service-ci: no pull-request comment: GITHUB_TOKEN is not set; …`. */
  readonly skip: string;
}

/**
 * One gate's comment on one pull request or merge request.
 *
 * @example
 * ```ts
 * import type { CiMetadata } from "../ci_metadata.ts";
 * import type { RunReport } from "../outcome.ts";
 * declare const metadata: CiMetadata;
 * declare const report: RunReport;
 * const comment = PullRequestComment.fromEnv(
 *   { GITHUB_TOKEN: "ghs_example", GITHUB_WORKFLOW: "ci", GITHUB_JOB: "gate" },
 *   { metadata, agents: ["0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10"], userAgent: "service-ci/1.0.0", warn: console.error },
 * );
 * if ("skip" in comment) {
 *   console.error(comment.skip);
 * } else {
 *   void comment.begin({ commitSha: metadata.commit_sha, buildUrl: metadata.build_url, runs: [] });
 *   await comment.finish(report);
 * }
 * ```
 */
export class PullRequestComment {
  readonly #thread: CommentThread;
  readonly #marker: string;
  readonly #warn: (line: string) => void;
  readonly #secrets: readonly string[];
  readonly #noun: string;
  readonly #advice: Readonly<Partial<Record<ForgeError["kind"], string>>>;
  #queue: Promise<void> = Promise.resolve();
  #commentId: number | null = null;
  // The history the comment held before this run, once read (docs/pr-comment.md, "History
  // across pushes"); the verdicts add this run to it.
  #earlier: CommentHistory | null = null;
  // Set after a failure that another attempt would only repeat (a refused or read-only token).
  #givenUp = false;

  /**
   * Writes to `thread` under `marker`. {@linkcode PullRequestComment.fromEnv} is the usual
   * way in; tests may pass any thread.
   */
  constructor(
    thread: CommentThread,
    options: {
      readonly marker: string;
      readonly warn: (line: string) => void;
      readonly secrets: readonly string[];
    },
  ) {
    this.#thread = thread;
    this.#marker = options.marker;
    this.#warn = options.warn;
    this.#secrets = options.secrets;
    this.#noun = thread.forge === "GitLab" ? "merge-request comment" : "pull-request comment";
    this.#advice = thread.forge === "GitLab" ? _GITLAB_ADVICE : _GITHUB_ADVICE;
  }

  /**
   * The comment for this CI job, or the one line saying why there is none: not GitHub Actions
   * or GitLab CI, a merge queue run (`GITHUB_EVENT_NAME=merge_group`), no pull/merge request
   * number, no token, an unusable API address.
   *
   * GitHub: `GITHUB_TOKEN` to `GITHUB_API_URL` (default `https://api.github.com`), repository
   * from the metadata or `GITHUB_REPOSITORY`, marker from `GITHUB_WORKFLOW`, `GITHUB_JOB` and
   * the agents. GitLab: `SERVICE_GITLAB_TOKEN` to `CI_API_V4_URL`, project `CI_PROJECT_ID`,
   * merge request `CI_MERGE_REQUEST_IID`, marker from `CI_JOB_NAME` and the agents.
   */
  static fromEnv(
    env: Readonly<Record<string, string | undefined>>,
    options: PullRequestCommentOptions,
  ): PullRequestComment | PullRequestCommentSkip {
    const read = (name: string) => env[name]?.trim() || null;
    const skip = (why: string): PullRequestCommentSkip => ({ skip: `service-ci: ${why}` });
    const effects = {
      userAgent: options.userAgent,
      ...pickEffects(options),
    };
    const { metadata } = options;
    switch (metadata.provider) {
      case "github_actions": {
        // The queue's branch names a pull request, but the event has none: the comment belongs to
        // the pull request's own run.
        if (detectMergeKind(env) === "merge_queue") {
          return skip(
            "no pull-request comment in a merge queue run (merge_group has no pull request); the pull_request run's comment stands",
          );
        }
        const number = metadata.pull_request_number;
        if (number === null) {
          return skip(
            `no pull-request comment: this build is not for a pull request (no pull request number was detected; ${
              optionName(OPTIONS.pullRequest)
            } <n> names one)`,
          );
        }
        const token = read("GITHUB_TOKEN");
        if (token === null) {
          return skip(
            "no pull-request comment: GITHUB_TOKEN is not set; set it to ${{ github.token }} and grant the job `permissions: pull-requests: write`",
          );
        }
        const target = githubTarget(read, metadata.repository, token);
        if ("problem" in target) return skip(`no pull-request comment: ${target.problem}`);
        const thread = new GithubThread({
          token,
          apiUrl: target.apiUrl,
          repository: target.repository,
          pullRequest: number,
          ...effects,
        });
        const marker = gateMarker({
          workflow: read("GITHUB_WORKFLOW") ?? "",
          job: read("GITHUB_JOB") ?? "",
          agents: options.agents,
          key: options.key,
        });
        return new PullRequestComment(thread, { marker, warn: options.warn, secrets: [token] });
      }
      case "gitlab": {
        const iidText = read("CI_MERGE_REQUEST_IID");
        if (iidText === null && read("CI_EXTERNAL_PULL_REQUEST_IID") !== null) {
          return skip(
            "no merge-request comment: this pipeline is for an external pull request, which has no GitLab merge request to comment on",
          );
        }
        const iid = iidText === null ? metadata.pull_request_number : Number(iidText);
        if (iid === null || !Number.isSafeInteger(iid) || iid < 1) {
          return skip(
            'no merge-request comment: this pipeline is not for a merge request (CI_MERGE_REQUEST_IID is set in merge request pipelines: `rules: - if: $CI_PIPELINE_SOURCE == "merge_request_event"`)',
          );
        }
        const token = read("SERVICE_GITLAB_TOKEN");
        if (token === null) {
          return skip(
            "no merge-request comment: SERVICE_GITLAB_TOKEN is not set; set it to a project access token with the api scope (CI_JOB_TOKEN cannot write merge request notes)",
          );
        }
        const target = gitlabTarget(read);
        if ("problem" in target) return skip(`no merge-request comment: ${target.problem}`);
        const thread = new GitlabThread({
          token,
          apiUrl: target.apiUrl,
          projectId: target.projectId,
          mergeRequest: iid,
          ...effects,
        });
        const marker = gateMarker({
          workflow: "",
          job: read("CI_JOB_NAME") ?? "",
          agents: options.agents,
          key: options.key,
        });
        return new PullRequestComment(thread, { marker, warn: options.warn, secrets: [token] });
      }
      default:
        return skip(
          `no pull-request comment: comments are written from GitHub Actions and GitLab CI only (this build: ${metadata.provider})`,
        );
    }
  }

  /**
   * Writes the "in progress" comment (creating it, or editing this gate's earlier one), with
   * the history of earlier commits as it was. Never rejects; run.ts need not wait for it, as
   * {@linkcode finish} waits for it.
   */
  begin(progress: CommentProgress): Promise<void> {
    return this.#enqueue({
      agents: progress.runs.map((run) => run.agentId),
      body: (history) => progressComment(this.#marker, progress, { history }),
    }, false);
  }

  /** Writes the comment with the verdicts, this run added to the history. Never rejects. */
  finish(report: RunReport): Promise<void> {
    return this.#enqueue({
      agents: report.agents.map((agent) => agent.agentId),
      body: (history) =>
        finalComment(this.#marker, report, { history: recordRun(history, report) }),
    }, true);
  }

  // Runs writes one after the other, so the verdicts never land before the "in progress" text.
  #enqueue(write: _Write, last: boolean): Promise<void> {
    this.#queue = this.#queue.then(async () => {
      if (this.#givenUp) return;
      try {
        await this.#write(write);
      } catch (error) {
        this.#report(error, last);
      }
    });
    return this.#queue;
  }

  async #write(write: _Write): Promise<void> {
    if (this.#commentId !== null && this.#earlier !== null) {
      try {
        await this.#thread.update(this.#commentId, write.body(this.#earlier));
        return;
      } catch (error) {
        // Someone deleted the comment since: write a new one (the history read stays).
        if (!(error instanceof ForgeError && error.kind === "not_found")) throw error;
        this.#commentId = null;
      }
    }
    const found = await this.#thread.find(this.#marker);
    // The history comes only from the gate's own comment, which find() alone returns, and is
    // read once: the verdicts build on what the comment held before this run.
    this.#earlier ??= found === null
      ? new Map()
      : readHistory(found.body, { marker: this.#marker, agents: write.agents });
    const body = write.body(this.#earlier);
    if (found !== null) {
      await this.#thread.update(found.id, body);
      this.#commentId = found.id;
      return;
    }
    try {
      this.#commentId = await this.#thread.create(body);
    } catch (error) {
      // A create that got no answer may have worked: look again before a second one.
      if (!(error instanceof ForgeError && (error.kind === "server" || error.kind === "network"))) {
        throw error;
      }
      const again = await this.#thread.find(this.#marker);
      if (again === null) this.#commentId = await this.#thread.create(body);
      else {
        await this.#thread.update(again.id, body);
        this.#commentId = again.id;
      }
    }
  }

  #report(error: unknown, last: boolean): void {
    const what = error instanceof ForgeError
      ? error.message
      : `internal error: ${error instanceof Error ? error.message : String(error)}`;
    const transient = error instanceof ForgeError &&
      ["rate_limited", "server", "network"].includes(error.kind);
    if (!transient) this.#givenUp = true;
    const advice = error instanceof ForgeError ? this.#advice[error.kind] : undefined;
    // A passing fault of the in-progress comment says nothing yet: the verdicts try again, and
    // only if they fail too is there one line to read.
    if (transient && !last) return;
    const line = `service-ci: the ${this.#noun} was not written: ${what}.${
      advice ? ` ${advice}` : ""
    } The gate's verdict and exit code are not affected.`;
    this.#warn(maskSecrets(line, this.#secrets));
  }
}

// One write: the body, given the history the comment held before this run, and the agents
// whose history may be read.
interface _Write {
  readonly agents: readonly string[];
  readonly body: (earlier: CommentHistory) => string;
}

const _GITHUB_ADVICE: Readonly<Partial<Record<ForgeError["kind"], string>>> = {
  unauthorized: "Check GITHUB_TOKEN (set it to ${{ github.token }}).",
  forbidden:
    "Grant the job `permissions: pull-requests: write`; pull requests from forks only get a read-only token.",
  not_found:
    "The token cannot see this repository or pull request; use the workflow's own ${{ github.token }}.",
  rate_limited: "GitHub's API rate limit is used up for now.",
};

const _GITLAB_ADVICE: Readonly<Partial<Record<ForgeError["kind"], string>>> = {
  unauthorized: "Check SERVICE_GITLAB_TOKEN: a project access token with the api scope.",
  forbidden:
    "SERVICE_GITLAB_TOKEN needs the api scope and a role that may comment (Reporter or higher).",
  not_found:
    "SERVICE_GITLAB_TOKEN cannot see this project or merge request; use a token of this project.",
  rate_limited: "GitLab's API rate limit is used up for now.",
};
