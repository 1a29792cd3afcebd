/**
 * One comment per gate on the pull or merge request: "in progress" once every agent has its run (or
 * ended without one), then the verdicts. A failed write is one line, never a throw or the verdict.
 */

import type { RunReport } from "../report/outcome.ts";
import { maskSecrets, sanitize } from "../text/sanitize.ts";
import {
  type CommentProgress,
  finalComment,
  progressComment,
  type TriggeredRun,
} from "../forge/comment/content.ts";
import type { ForgeHttp, RequestOptions } from "../forge/http.ts";
import type { ForgeTarget } from "../forge/forge.ts";
import type { FinishWindow, RunOutput, RunPlan } from "./output.ts";
import { mayHaveCreated, tokenAdvice, writeQueue } from "../forge/writes.ts";
import { forgeNamed } from "../forge/registry.ts";
import {
  type CommentHistory,
  gateMarker,
  readHistory,
  recordRun,
} from "../forge/comment/history.ts";
import { commentThread } from "../forge/comment/thread.ts";
import { errorMessage } from "../text/quote.ts";
import { HttpFailure } from "../http/failure.ts";

/** Masked before rendering: Markdown escaping would otherwise hide a secret from the last mask. */
export function commentOutput(comment: PullRequestComment, secrets: readonly string[]): RunOutput {
  let plan: RunPlan | undefined;
  const triggered = new Map<string, TriggeredRun>();
  const clean = (text: string | null) => text === null ? null : sanitize(text, { secrets });
  // The first word on each agent's run counts: a run id from the trigger, or why there is none.
  const settle = (run: TriggeredRun) => {
    if (plan === undefined || triggered.has(run.agentId)) return;
    triggered.set(run.agentId, {
      ...run,
      runId: clean(run.runId),
      url: clean(run.url),
      refused: clean(run.refused ?? null),
    });
    if (triggered.size === plan.agents.length) {
      void comment.begin({
        commitSha: plan.metadata.commit_sha,
        buildUrl: plan.metadata.build_url,
        runs: plan.agents.map((agentId) => triggered.get(agentId)!),
      });
    }
  };
  return {
    kind: "courtesy",
    name: "the pull-request comment",
    start: (started) => plan = started,
    event(agentId, event) {
      if (event.type === "triggered") settle({ agentId, runId: event.runId, url: event.url });
      if (event.type === "attached") settle({ agentId, runId: event.runId, url: null });
    },
    // A gate ended without a run says why, not "running". The outcome's text is masked already.
    agentDone(outcome) {
      settle({
        agentId: outcome.agentId,
        runId: outcome.runId,
        url: outcome.url,
        refused: outcome.runId === null ? outcome.error ?? outcome.outcome : null,
      });
    },
    finish: (report, window) => comment.finish(report, window),
  };
}

export interface PullRequestComment {
  /** Never rejects; nobody need wait for it, as {@linkcode PullRequestComment.finish} does. */
  begin(progress: CommentProgress): Promise<void>;
  /** Looks again first: overlapping runs may each have written one; the oldest stays. */
  finish(report: RunReport, window?: FinishWindow): Promise<void>;
}

export function pullRequestComment(
  target: ForgeTarget,
  http: ForgeHttp,
  options: {
    readonly agents: readonly string[];
    /** `--pr-comment-key`. */
    readonly key?: string | undefined;
    /** One line, without its newline. */
    readonly warn: (line: string) => void;
  },
): PullRequestComment {
  const forge = forgeNamed(target.forge);
  const side = forge.comment!;
  const thread = commentThread(side.thread(target), http);
  const marker = gateMarker({ ...target.gate, agents: options.agents, key: options.key });
  const queue = writeQueue({
    subject: `the ${side.noun.replace(" ", "-")} comment was`,
    // A refused or read-only token, or a fault of this program: another attempt would repeat it.
    final: (error) => !(error instanceof HttpFailure && error.retryable),
    advice: (error) =>
      tokenAdvice(forge, error) ??
        (error instanceof HttpFailure ? side.advice[error.kind] ?? "" : ""),
  }, (line) => options.warn(maskSecrets(line, [target.token?.value ?? ""])));
  let commentId: number | null = null;
  let earlier: CommentHistory | null = null;

  // `agents`: those whose history may be read.
  const write = async (
    agents: readonly string[],
    render: (earlier: CommentHistory) => string,
    last: boolean,
    options: RequestOptions,
  ): Promise<void> => {
    if (commentId !== null && earlier !== null && !last) {
      try {
        await thread.update(commentId, render(earlier), options);
        return;
      } catch (error) {
        // Someone deleted the comment since: write a new one (the history read stays).
        if (!(error instanceof HttpFailure && error.kind === "not_found")) throw error;
        commentId = null;
      }
    }
    const [found, ...extra] = await thread.find(marker, options);
    // The history comes only from the gate's own comment, which find() alone returns, and is
    // read once: the verdicts build on what the comment held before this run.
    earlier ??= found === undefined ? new Map() : readHistory(found.body, { marker, agents });
    const body = render(earlier);
    if (found !== undefined) {
      await thread.update(found.id, body, options);
      commentId = found.id;
      for (const copy of extra) {
        await thread.remove(copy.id, options).catch((error) => {
          if (!(error instanceof HttpFailure && error.kind === "not_found")) throw error;
        });
      }
      return;
    }
    try {
      commentId = await thread.create(body, options);
    } catch (error) {
      if (!mayHaveCreated(error)) throw error;
      const [again] = await thread.find(marker, options);
      if (again === undefined) commentId = await thread.create(body, options);
      else {
        await thread.update(again.id, body, options);
        commentId = again.id;
      }
    }
  };

  // Runs writes one after the other, so the verdicts never land before the "in progress" text.
  const enqueue = (
    agents: readonly string[],
    body: (earlier: CommentHistory) => string,
    last: boolean,
    options: RequestOptions = {},
  ): Promise<void> =>
    queue("comment", () =>
      write(agents, body, last, options).catch((error) => {
        if (error instanceof HttpFailure) throw error;
        throw new Error(`internal error: ${errorMessage(error)}`);
      }), last);

  return {
    begin: (progress) =>
      enqueue(
        progress.runs.map((run) => run.agentId),
        (history) => progressComment(marker, progress, { history, key: options.key }),
        false,
      ),
    finish(report, window) {
      // Stops the forge's requests waiting out a rate limit that ends after the window.
      if (window !== undefined) http.limits.finishBy(window.endsAt);
      return enqueue(
        report.agents.map((agent) => agent.agentId),
        (history) =>
          finalComment(marker, report, { history: recordRun(history, report), key: options.key }),
        true,
        { priority: "background", signal: window?.signal },
      );
    },
  };
}
