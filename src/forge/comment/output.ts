/**
 * The pull-request comment as a courtesy output: written "in progress" once every agent has its
 * run (or has ended without one), then with the verdicts.
 */

import type { RunOutput, RunPlan } from "../../outputs/output.ts";
import { sanitize } from "../../text/sanitize.ts";
import type { TriggeredRun } from "./content.ts";
import type { PullRequestComment } from "./pr_comment.ts";

/**
 * Service text is masked before the comment renders it: escaping for Markdown would otherwise
 * hide a secret from the mask the outputs apply last.
 */
export function commentOutput(
  comment: PullRequestComment,
  secrets: readonly string[],
): RunOutput {
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
    // A gate that ended without a run says why in the comment, not "running". The outcome's
    // text is masked already.
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
