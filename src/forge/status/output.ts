/**
 * The commit statuses as a courtesy output: one per agent, in progress once its run is triggered,
 * completed once the reports are written. A failed write is one line, never the verdict.
 */

import type { Config } from "../../config/resolve.ts";
import type { ForgeClients } from "../clients.ts";
import { HttpFailure } from "../../http/policy.ts";
import { type ForgeSkip, forgeTarget } from "../target.ts";
import { httpLink } from "../../text/markdown.ts";
import { optionName, OPTIONS } from "../../config/options.ts";
import type { OutputsContext, RunOutput, RunPlan } from "../../outputs/output.ts";
import { maskSecrets, sanitize } from "../../text/sanitize.ts";
import { BitbucketStatuses } from "./bitbucket.ts";
import type { StatusForge } from "./commit_status.ts";
import { GithubStatuses } from "./github.ts";
import { GitlabStatuses } from "./gitlab.ts";

/**
 * A merge queue's `merge_group` run gets them on the merge group's head, which branch protection
 * requires them on.
 */
export function commitStatusOutputs(context: OutputsContext, clients: ForgeClients): RunOutput[] {
  const { output } = context;
  const made = statusForge(context, clients);
  if ("skip" in made) {
    output.stderr(`${made.skip}\n`);
    return [];
  }
  return [statusOutput(made, {
    secrets: output.secrets,
    warn: (line) => output.stderr(`${line}\n`),
  })];
}

export function statusForge(
  context: OutputsContext,
  clients: ForgeClients,
): StatusForge | ForgeSkip {
  const { config, metadata, output } = context;
  const skipped = statusesSkipped(config);
  if (skipped !== null) return { skip: skipped };
  const target = forgeTarget(config, { metadata, context: context.context }, "statuses");
  if ("skip" in target) return target;
  switch (target.forge) {
    case "GitHub": {
      const token = target.token?.value ?? "";
      return new GithubStatuses({
        target,
        http: clients.api(target),
        warn: (line) => output.stderr(`${maskSecrets(line, [token])}\n`),
        now: clients.clock.now,
      });
    }
    case "GitLab":
      return new GitlabStatuses({ target, http: clients.api(target) });
    case "Bitbucket":
      return new BitbucketStatuses({
        target,
        bitbucket: clients.bitbucket(target),
        fallbackLink: httpLink(metadata.build_url) ?? target.web ?? "",
      });
  }
}

export function statusesSkipped(config: Pick<Config, "noWait">): string | null {
  if (!config.noWait) return null;
  return `service-ci: no commit statuses: ${
    optionName(OPTIONS.noWait)
  } leaves each run without a verdict, and a status completed without one could let a required check pass`;
}

export interface StatusOutputOptions {
  readonly secrets: readonly string[];
  /** One line, without its newline. */
  readonly warn: (line: string) => void;
}

/**
 * Writes for one agent go one after the other; only the first failure is shown, and one that
 * another attempt would only repeat stops every further write.
 */
export function statusOutput(forge: StatusForge, options: StatusOutputOptions): RunOutput {
  let plan: RunPlan | undefined;
  const chains = new Map<string, Promise<void>>();
  const started = new Set<string>();
  // Agents whose final write is queued: an in-progress write not yet sent is skipped.
  const ending = new Set<string>();
  let givenUp = false;
  let warned = false;
  const clean = (text: string | null) =>
    text === null ? null : sanitize(text, { secrets: options.secrets });
  const fail = (error: unknown, last: boolean) => {
    // A rate limit that outlasts the time left: the forge's one line says how many were given up.
    if (error instanceof HttpFailure && error.givenUp) return;
    const final = forge.final(error);
    if (final) givenUp = true;
    // A passing fault of the in-progress status says nothing yet: the final write tries again.
    if ((!final && !last) || warned) return;
    warned = true;
    const what = error instanceof Error ? error.message : String(error);
    const advice = forge.advice(error);
    options.warn(maskSecrets(
      `service-ci: the ${forge.forge} commit statuses were not written: ${what}.${
        advice === "" ? "" : ` ${advice}`
      } The gate's verdict and exit code are not affected.`,
      options.secrets,
    ));
  };
  const enqueue = (agentId: string, write: () => Promise<void>, last: boolean) => {
    const chain = (chains.get(agentId) ?? Promise.resolve()).then(async () => {
      if (givenUp || (!last && ending.has(agentId))) return;
      try {
        await write();
      } catch (error) {
        fail(error, last);
      }
    });
    chains.set(agentId, chain);
    return chain;
  };
  const begin = (agentId: string, runId: string | null, url: string | null) => {
    if (plan === undefined || started.has(agentId)) return;
    started.add(agentId);
    const link = httpLink(clean(url)) ?? httpLink(plan.metadata.build_url);
    void enqueue(
      agentId,
      () => forge.start({ agentId, runId: clean(runId), link }, { priority: "progress" }),
      false,
    );
  };
  return {
    kind: "courtesy",
    name: `the ${forge.forge} commit statuses`,
    decidesMerges: true,
    start: (given) => plan = given,
    event(agentId, event) {
      if (event.type === "triggered") begin(agentId, event.runId, event.url);
      if (event.type === "attached") begin(agentId, event.runId, null);
    },
    finish: async (report, window) => {
      if (window !== undefined) forge.finishBy(window.endsAt);
      const request = { priority: "final" as const, signal: window?.signal };
      await Promise.all(report.agents.map((agent) => {
        if (agent.outcome === "triggered") return chains.get(agent.agentId);
        ending.add(agent.agentId);
        const link = httpLink(agent.url) ?? httpLink(report.ciMetadata.build_url);
        return enqueue(agent.agentId, () => forge.end({ agent, report, link }, request), true);
      }));
    },
  };
}
