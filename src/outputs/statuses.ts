/** Commit statuses, a courtesy: in progress per triggered run, completed after the reports. */

import type { Config } from "../config/load.ts";
import type { ForgeClients } from "../forge/clients.ts";
import { forgeTarget } from "../forge/target.ts";
import { httpLink } from "../text/markdown.ts";
import { optionName, OPTIONS } from "../config/options.ts";
import type { OutputsContext, RunOutput, RunPlan } from "./output.ts";
import { maskSecrets, sanitize } from "../text/sanitize.ts";
import { writeQueue } from "../forge/writes.ts";
import { forgeNamed } from "../forge/registry.ts";

/** In a merge queue, on the merge group's head, which branch protection requires them on. */
export function commitStatusOutputs(context: OutputsContext, clients: ForgeClients): RunOutput[] {
  const { config, metadata, output } = context;
  const skipped = statusesSkipped(config);
  const target = skipped === null
    ? forgeTarget(config, { metadata, context: context.context }, "statuses")
    : { skip: skipped };
  if ("skip" in target) {
    output.stderr(`${target.skip}\n`);
    return [];
  }
  const http = clients.http(target);
  const forge = forgeNamed(target.forge).statuses(target, http, {
    warn: (line) => output.stderr(`${maskSecrets(line, [target.token?.value ?? ""])}\n`),
    now: clients.options.clock.now,
    buildUrl: metadata.build_url,
  });
  let plan: RunPlan | undefined;
  const started = new Set<string>();
  // Agents whose final write is queued: an in-progress write not yet sent is skipped.
  const ending = new Set<string>();
  const enqueue = writeQueue(
    { ...forge, subject: `the ${forge.forge} commit statuses were` },
    (line) => output.stderr(`${maskSecrets(line, output.secrets)}\n`),
  );
  const clean = (text: string | null) =>
    text === null ? null : sanitize(text, { secrets: output.secrets });
  const begin = (agentId: string, runId: string | null, url: string | null) => {
    if (plan === undefined || started.has(agentId)) return;
    started.add(agentId);
    const link = httpLink(clean(url)) ?? httpLink(plan.metadata.build_url);
    const status = { runId: clean(runId), link };
    void enqueue(agentId, async () => {
      if (!ending.has(agentId)) await forge.write(agentId, status, { priority: "progress" });
    }, false);
  };
  return [{
    kind: "courtesy",
    name: `the ${forge.forge} commit statuses`,
    decidesMerges: true,
    start: (given) => plan = given,
    event(agentId, event) {
      if (event.type === "triggered") begin(agentId, event.runId, event.url);
      if (event.type === "attached") begin(agentId, event.runId, null);
    },
    finish: async (report, window) => {
      if (window !== undefined) http.limits.finishBy(window.endsAt);
      const request = { priority: "final" as const, signal: window?.signal };
      await Promise.all(report.agents.map((agent) => {
        // Still running: only its in-progress write is waited for.
        if (agent.outcome === "triggered") return enqueue(agent.agentId, async () => {}, true);
        ending.add(agent.agentId);
        const link = httpLink(agent.url) ?? httpLink(report.ciMetadata.build_url);
        const status = { runId: agent.runId, link, ended: { agent, report } };
        return enqueue(agent.agentId, () => forge.write(agent.agentId, status, request), true);
      }));
    },
  }];
}

export function statusesSkipped(config: Pick<Config, "noWait">): string | null {
  if (!config.noWait) return null;
  const flag = optionName(OPTIONS.noWait);
  return `service-ci: no commit statuses: ${flag} leaves each run without a verdict, and a status completed without one could let a required check pass`;
}
