/**
 * Bitbucket Pipelines' native output: a Code Insights report on the commit, with a link per run
 * and an annotation per gate that failed or could not be checked, sent through the pipeline's
 * authenticated proxy so no credential is needed.
 */

import { FORGE_ENV_VARIABLES, forgeTarget } from "../../forge/target.ts";
import { httpLink } from "../../text/markdown.ts";
import { clip } from "../../text/sanitize.ts";
import type { AgentOutcome, RunReport } from "../../result/outcome.ts";
import { OUTCOME_LABELS, outcomeText } from "../../text/words.ts";
import { outputValues } from "../summary.ts";
import type { NativeWriter } from "./native_io.ts";

/** The report's id on the commit: a re-run replaces the report instead of adding one. */
export const BITBUCKET_REPORT_ID = "service-ci";

/** The Code Insights report, as `PUT …/reports/{id}` takes it. */
export interface BitbucketReport {
  /** The report's title in the pull request's Reports panel. */
  readonly title: string;
  /** One paragraph: the counts and what the exit code means. */
  readonly details: string;
  /** Always `TEST`: the gate is a test of the agent. */
  readonly report_type: "TEST";
  /** Who wrote the report: `service-ci`. */
  readonly reporter: string;
  /** `PASSED` only when every gate passed. */
  readonly result: "PASSED" | "FAILED" | "PENDING";
  /** The CI job's link, when known. */
  readonly link?: string;
  /** The counts, the duration and the runs' links. */
  readonly data: readonly BitbucketData[];
}

/** One data field of a report. */
export type BitbucketData =
  | { readonly title: string; readonly type: "NUMBER" | "DURATION"; readonly value: number }
  | {
    readonly title: string;
    readonly type: "LINK";
    readonly value: { readonly text: string; readonly href: string };
  };

/** One annotation, as `POST …/reports/{id}/annotations` takes them. */
export interface BitbucketAnnotation {
  /** Unique per report: `service-ci-` and the agent's UUID. */
  readonly external_id: string;
  /** Always `BUG`: a gate that did not pass. */
  readonly annotation_type: "BUG";
  /** Always `FAILED`: only gates that did not pass are annotated. */
  readonly result: "FAILED";
  /** `HIGH` for a failed gate, `MEDIUM` for one that could not be checked, timed out or was interrupted. */
  readonly severity: "HIGH" | "MEDIUM";
  /** The agent and what happened, in one line. */
  readonly summary: string;
  /** The run, its status and the reason. */
  readonly details: string;
  /** The run's dashboard link, when the service gave one. */
  readonly link?: string;
}

/**
 * The Bitbucket Pipelines writer. It prints no log commands (Bitbucket has none); `finish`
 * deletes the previous report {@linkcode BITBUCKET_REPORT_ID} of the commit (and with it its
 * annotations), puts {@linkcode bitbucketReport}, then posts {@linkcode bitbucketAnnotations}
 * (100 per request), all to `http://api.bitbucket.org/2.0/repositories/{workspace}/{repo_slug}/
 * commit/{commit}/reports/…` through the proxy. Where it writes is the one forge target
 * (`forge/target.ts`: the run's `commit_sha`, else `BITBUCKET_COMMIT`; `BITBUCKET_WORKSPACE` and
 * `BITBUCKET_REPO_SLUG`, else `BITBUCKET_REPO_FULL_NAME`; `SERVICE_BITBUCKET_PROXY`), and it
 * sends with Bitbucket's client (`forge/bitbucket.ts`), by the HTTP policy. When something is
 * missing, or a request fails, answers other than 2xx, is redirected elsewhere or gets no
 * answer within the request time bound, one line says so and nothing else is sent.
 *
 * @example
 * ```ts
 * const writer = createBitbucketWriter();
 * writer.progressStart("service-ci: waiting for 1 agent"); // []
 * ```
 */
export function createBitbucketWriter(): NativeWriter {
  return {
    ci: "Bitbucket Pipelines",
    progressStart: () => [],
    progressEnd: () => [],
    finish: async (report, io) => {
      const env = Object.fromEntries(FORGE_ENV_VARIABLES.map((name) => [name, io.env(name)]));
      const target = forgeTarget(env, { metadata: report.ciMetadata }, "insights");
      if ("skip" in target) {
        io.warn(target.skip);
        return;
      }
      const proxy = target.proxy ?? "";
      const bitbucket = (await io.forgeClients()).bitbucket(target, io.requestBound);
      const url = `${target.apiUrl}/reports/${BITBUCKET_REPORT_ID}`;
      try {
        await bitbucket.request("DELETE", url);
        await bitbucket.request("PUT", url, bitbucketReport(report));
        const annotations = bitbucketAnnotations(report);
        for (let start = 0; start < annotations.length; start += 100) {
          await bitbucket.request(
            "POST",
            `${url}/annotations`,
            annotations.slice(start, start + 100),
          );
        }
      } catch (error) {
        io.warn(
          `Bitbucket Pipelines: the Code Insights report could not be sent through the proxy ` +
            `${proxy} (${error instanceof Error ? error.message : error})`,
        );
      }
    },
  };
}

/**
 * The Code Insights report: a `TEST` report whose result is `FAILED` when any gate failed or
 * could not be checked, else `PENDING` when a run was started and not waited for, else
 * `PASSED`; the details list every agent; the data hold the exit code, the duration and a link
 * per run with an `http(s)` link (as many as fit Bitbucket's 10 data fields). Texts are cut to
 * Atlassian's limits (title 450, details 2000 characters).
 */
export function bitbucketReport(report: RunReport): BitbucketReport {
  const problem = report.agents.some((agent) => OUTCOME_LABELS[agent.outcome].problem !== null);
  const pending = report.agents.some((agent) => agent.outcome === "triggered");
  const links = report.agents.flatMap((agent): BitbucketData[] => {
    const href = httpLink(agent.url);
    if (href === null) return [];
    return [{
      title: `Agent ${agent.agentId.slice(0, 8)}`,
      type: "LINK",
      value: { text: clip(`run ${agent.runId ?? "(no id)"}`, 100), href },
    }];
  });
  const single = report.agents.length === 1 ? httpLink(report.agents[0]!.url) : null;
  return {
    title: "service-ci quality gate",
    details: clip(
      [
        `${outputValues(report).passed === "true" ? "Passed" : "Not passed"}; ` +
        `exit code ${report.exitCode}; service-ci ${report.version}.`,
        ...report.agents.map(_agentLine),
      ].join("\n"),
      2000,
    ),
    report_type: "TEST",
    reporter: "service-ci",
    result: problem ? "FAILED" : pending ? "PENDING" : "PASSED",
    ...(single === null ? {} : { link: single }),
    data: [
      { title: "Exit code", type: "NUMBER", value: report.exitCode },
      { title: "Duration", type: "DURATION", value: Math.max(0, Math.round(report.durationMs)) },
      ...links.slice(0, 8),
    ],
  };
}

/**
 * One annotation per agent whose gate failed (severity `HIGH`) or could not be checked, timed
 * out or was interrupted (`MEDIUM`): a report-level `BUG` with result `FAILED`, external id
 * `service-ci-<agent>`, the agent and problem as summary (at most 450 characters), the run,
 * status and reason as details (at most 2000), and the run's `http(s)` link.
 */
export function bitbucketAnnotations(report: RunReport): BitbucketAnnotation[] {
  return report.agents.flatMap((agent) => {
    const problem = OUTCOME_LABELS[agent.outcome].problem;
    if (problem === null) return [];
    const link = httpLink(agent.url);
    return [{
      external_id: `service-ci-${agent.agentId}`,
      annotation_type: "BUG",
      result: "FAILED",
      severity: agent.outcome === "failed" ? "HIGH" : "MEDIUM",
      summary: clip(`Agent ${agent.agentId}: ${problem}`, 450),
      details: clip(_agentLine(agent), 2000),
      ...(link === null ? {} : { link }),
    }];
  });
}

function _agentLine(agent: AgentOutcome): string {
  return [
    `Agent ${agent.agentId}: ${outcomeText(agent.outcome)}`,
    agent.runId === null ? "no run id" : `run ${agent.runId}`,
    ...(agent.status === null ? [] : [`status ${agent.status}`]),
    ...(agent.error === null ? [] : [agent.error]),
  ].join("; ");
}
