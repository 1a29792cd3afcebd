/**
 * GitHub: one check run per agent through the Checks API, or, where the token may not create
 * check runs, one commit status per agent (docs/github-actions.md, "Commit statuses").
 */

import { httpLink, inertMarkdown } from "../../text/markdown.ts";
import type { AgentOutcome, Outcome, RunReport } from "../../result/outcome.ts";
import { type ForgeHttp, nextLink, type RequestOptions } from "../http.ts";
import { HttpFailure } from "../../http/policy.ts";
import type { ForgeTarget } from "../target.ts";
import { clip } from "../../text/sanitize.ts";
import { outcomeReason } from "../../outputs/summary.ts";
import { formatDuration, outcomeLine, outcomeText } from "../../text/words.ts";
import { type StatusForge, statusName, tokenAdvice } from "./commit_status.ts";

type _Ended = Exclude<Outcome, "triggered">;

/** Unchecked is a `failure`: GitHub's required checks let `neutral` pass. */
const _CHECK_CONCLUSIONS: Readonly<Record<_Ended, string>> = {
  passed: "success",
  failed: "failure",
  unchecked: "failure",
  timed_out: "timed_out",
  interrupted: "cancelled",
};

const _COMMIT_STATES: Readonly<Record<_Ended, string>> = {
  passed: "success",
  failed: "failure",
  unchecked: "error",
  timed_out: "error",
  interrupted: "error",
};

// GitHub's limits: a check run's output summary, a commit status's description.
const _SUMMARY_MAX = 65_535;
const _DESCRIPTION_MAX = 140;
const _MAX_PAGES = 10;

/** Commit statuses once check runs are refused. */
export class GithubStatuses implements StatusForge {
  readonly forge = "GitHub";
  readonly #http: ForgeHttp;
  readonly #repo: string;
  readonly #sha: string;
  readonly #warn: (line: string) => void;
  readonly #now: () => number;
  readonly #checkRuns = new Map<string, number>();
  #existing: Promise<Map<string, number>> | null = null;
  #mode: "checks" | "statuses" = "checks";

  /** `target`: the pull request's or the merge group's head. */
  constructor(
    target: ForgeTarget,
    http: ForgeHttp,
    effects: { readonly warn: (line: string) => void; readonly now: () => number },
  ) {
    this.#repo = `/repos/${target.repository.split("/").map(encodeURIComponent).join("/")}`;
    this.#sha = target.commit.sha;
    this.#warn = effects.warn;
    this.#now = effects.now;
    this.#http = http;
  }

  /** Stops GitHub's requests waiting out a rate limit that ends after `endsAt`. */
  finishBy(endsAt: number): void {
    this.#http.limits.finishBy(endsAt);
  }

  async start(start: Parameters<StatusForge["start"]>[0], options: RequestOptions): Promise<void> {
    const summary = start.runId === null
      ? "The gate is running."
      : `Run ${inertMarkdown(start.runId)} is running; the verdict follows when the gate ends.`;
    await this.#write(start.agentId, {
      check: {
        status: "in_progress",
        started_at: new Date(this.#now()).toISOString(),
        ...(start.link === null ? {} : { details_url: start.link }),
        output: { title: "waiting for the verdict", summary },
      },
      state: "pending",
      description: "waiting for the verdict",
      link: start.link,
    }, options);
  }

  async end(
    { agent, report, link }: Parameters<StatusForge["end"]>[0],
    options: RequestOptions,
  ): Promise<void> {
    const outcome = agent.outcome as _Ended;
    await this.#write(agent.agentId, {
      check: {
        status: "completed",
        conclusion: _CHECK_CONCLUSIONS[outcome],
        completed_at: new Date(this.#now()).toISOString(),
        ...(link === null ? {} : { details_url: link }),
        output: {
          title: outcomeText(agent.outcome),
          summary: clip(agentSummary(agent, report), _SUMMARY_MAX),
        },
      },
      state: _COMMIT_STATES[outcome],
      description: outcomeLine(agent.outcome),
      link,
    }, options);
  }

  /** How to enable what failed; never a permission for a rate limit. */
  advice(error: unknown): string {
    if (!(error instanceof HttpFailure && ["forbidden", "not_found"].includes(error.kind))) {
      return tokenAdvice("GitHub", error) ?? "";
    }
    return this.#mode === "checks"
      ? "Give the job `permissions: checks: write`."
      : "Give the job `permissions: statuses: write` (`checks: write` for check runs).";
  }

  /** A refused token or a refused redirect: another attempt would only repeat it. */
  final(error: unknown): boolean {
    return error instanceof HttpFailure &&
      ["unauthorized", "forbidden", "not_found", "refused", "unusable"].includes(error.kind);
  }

  async #write(
    agentId: string,
    write: {
      readonly check: Record<string, unknown>;
      readonly state: string;
      readonly description: string;
      readonly link: string | null;
    },
    options: RequestOptions,
  ): Promise<void> {
    if (this.#mode === "checks") {
      try {
        await this.#checkRun(agentId, write.check, options);
        return;
      } catch (error) {
        if (!(error instanceof HttpFailure && ["forbidden", "not_found"].includes(error.kind))) {
          throw error;
        }
        if (this.#mode === "checks") {
          this.#mode = "statuses";
          this.#warn(
            `service-ci: GitHub did not let the token create check runs (${error.message}); commit statuses instead — give the job \`checks: write\` for check runs`,
          );
        }
      }
    }
    await this.#http.request("POST", `${this.#repo}/statuses/${this.#sha}`, {
      state: write.state,
      context: statusName(agentId),
      description: clip(write.description, _DESCRIPTION_MAX),
      ...(write.link === null ? {} : { target_url: write.link }),
    }, options);
  }

  async #checkRun(
    agentId: string,
    fields: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<void> {
    const key = agentId.toLowerCase();
    // This run's agents' check runs still in progress on the commit, read once before the first
    // create: a run killed before its final write left them, and this run completes them.
    this.#existing ??= this.#find(null, options).catch(() => new Map());
    let id = this.#checkRuns.get(key) ?? (await this.#existing).get(key);
    if (id === undefined) {
      const create = {
        name: statusName(agentId),
        head_sha: this.#sha,
        external_id: key,
        ...fields,
      };
      try {
        const answer = await this.#http.request(
          "POST",
          `${this.#repo}/check-runs`,
          create,
          options,
        );
        const created = (answer.data as { id?: unknown } | null)?.id;
        if (typeof created === "number" && Number.isSafeInteger(created)) {
          this.#checkRuns.set(key, created);
        }
        return;
      } catch (error) {
        // The create may have worked with its answer lost: find it by name before another one.
        if (!(error instanceof HttpFailure && ["server", "network"].includes(error.kind))) {
          throw error;
        }
        const lost = await this.#find(agentId, options).catch(() => new Map<string, number>());
        id = lost.get(key);
        if (id === undefined) throw error;
      }
    }
    this.#checkRuns.set(key, id);
    await this.#http.request("PATCH", `${this.#repo}/check-runs/${id}`, fields, options);
  }

  // `agentId`: only its check run, by name; `null`: every one on the commit.
  async #find(agentId: string | null, options: RequestOptions): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    const named = agentId === null ? "" : `check_name=${encodeURIComponent(statusName(agentId))}&`;
    let target: string | null =
      `${this.#repo}/commits/${this.#sha}/check-runs?${named}filter=latest&per_page=100`;
    for (let page = 1; target !== null && page <= _MAX_PAGES; page++) {
      // A look-up that fails costs one attempt: the create or the update is what matters.
      const answer = await this.#http.request("GET", target, undefined, {
        ...options,
        attempts: 1,
      });
      const runs = (answer.data as { check_runs?: unknown } | null)?.check_runs;
      if (!Array.isArray(runs)) break;
      for (const run of runs as unknown[]) {
        const { id, name, external_id: external, status } =
          (typeof run === "object" && run !== null ? run : {}) as Record<string, unknown>;
        if (
          typeof id === "number" && Number.isSafeInteger(id) && typeof external === "string" &&
          name === statusName(external) && status !== "completed" && !found.has(external)
        ) found.set(external, id);
      }
      target = nextLink(answer.headers.get("link"));
    }
    return found;
  }
}

/** That agent's verdict alone, and one line pointing to the job's summary for the others. */
export function agentSummary(agent: AgentOutcome, report: RunReport): string {
  const others = report.agents.length - 1;
  const job = httpLink(report.ciMetadata.build_url);
  const run = httpLink(agent.url);
  const why = outcomeReason(agent);
  return [
    `${outcomeLine(agent.outcome)}: agent \`${inertMarkdown(agent.agentId)}\``,
    "",
    `- Run: ${agent.runId === null ? "none" : `\`${inertMarkdown(agent.runId)}\``}${
      run === null ? "" : ` ([dashboard](${run}))`
    }`,
    ...(agent.status === null ? [] : [`- Status: \`${inertMarkdown(agent.status)}\``]),
    ...(why === null ? [] : [`- Reason: ${inertMarkdown(why)}`]),
    `- Duration: ${formatDuration(agent.durationMs)}`,
    "",
    others === 0
      ? `Exit code ${report.exitCode} · service-ci ${inertMarkdown(report.version)}`
      : `${others} other ${others === 1 ? "agent" : "agents"} in this gate: see ${
        job === null ? "the job's summary" : `[the job's summary](${job})`
      } (exit code ${report.exitCode}).`,
  ].join("\n");
}
