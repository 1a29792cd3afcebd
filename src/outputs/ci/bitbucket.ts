/** Bitbucket Pipelines: a Code Insights report with an annotation per gate not passed. */

import { forgeTarget } from "../../forge/target.ts";
import { httpLink } from "../../text/markdown.ts";
import { clip } from "../../text/sanitize.ts";
import type { AgentOutcome, RunReport } from "../../report/outcome.ts";
import { outcomeReason, outcomeText } from "../../report/words.ts";
import { gateProblems, outputValues } from "../summary.ts";
import type { NativeWriter } from "./native_io.ts";
import { errorMessage } from "../../text/quote.ts";

/** A re-run replaces the report of this id instead of adding one. */
const BITBUCKET_REPORT_ID = "service-ci";

/** As `PUT …/reports/{id}` takes it. */
export interface BitbucketReport {
  readonly title: string;
  readonly details: string;
  readonly report_type: "TEST";
  readonly reporter: string;
  readonly result: "PASSED" | "FAILED" | "PENDING";
  readonly link?: string;
  readonly data: readonly (
    | { readonly title: string; readonly type: "NUMBER" | "DURATION"; readonly value: number }
    | {
      readonly title: string;
      readonly type: "LINK";
      readonly value: { readonly text: string; readonly href: string };
    }
  )[];
}

/** As `POST …/reports/{id}/annotations` takes them. */
export interface BitbucketAnnotation {
  readonly external_id: string;
  readonly annotation_type: "BUG";
  readonly result: "FAILED";
  readonly severity: "HIGH" | "MEDIUM";
  readonly summary: string;
  readonly details: string;
  readonly link?: string;
}

/**
 * Bitbucket has no log commands. Deleting the previous report deletes its annotations too. The
 * first request that fails is one line, and nothing else is sent.
 */
export function createBitbucketWriter(): NativeWriter {
  return {
    ci: "Bitbucket Pipelines",
    progressStart: () => [],
    progressEnd: () => [],
    finish: async (report, io) => {
      const target = forgeTarget(io.config, { metadata: report.ciMetadata }, "insights");
      if ("skip" in target) return io.warn(target.skip);
      const bitbucket = (await io.forgeClients()).http(target, io.requestBound);
      const url = `${target.apiUrl}/reports/${BITBUCKET_REPORT_ID}`;
      try {
        await bitbucket.request("DELETE", url);
        await bitbucket.request("PUT", url, bitbucketReport(report));
        const annotations = bitbucketAnnotations(report);
        for (let i = 0; i < annotations.length; i += 100) {
          await bitbucket.request("POST", `${url}/annotations`, annotations.slice(i, i + 100));
        }
      } catch (error) {
        io.warn(
          `Bitbucket Pipelines: the Code Insights report could not be sent through the proxy ` +
            `${target.proxy ?? ""} (${errorMessage(error)})`,
        );
      }
    },
  };
}

/** Bitbucket allows 10 data fields; texts are cut to Atlassian's limits. */
export function bitbucketReport(report: RunReport): BitbucketReport {
  const problem = gateProblems(report).length > 0;
  const pending = report.agents.some((agent) => agent.outcome === "triggered");
  const links = report.agents.flatMap((agent): BitbucketReport["data"][number][] => {
    const href = httpLink(agent.url);
    if (href === null) return [];
    return [{
      title: `Agent ${agent.agentId.slice(0, 8)}`,
      type: "LINK",
      value: { text: clip(`run ${agent.runId ?? "(no id)"}`, 100), href },
    }];
  });
  const single = report.agents.length === 1 ? httpLink(report.agents[0]!.url) : null;
  const verdict = outputValues(report).passed === "true" ? "Passed" : "Not passed";
  const head = `${verdict}; exit code ${report.exitCode}; service-ci ${report.version}.`;
  return {
    title: "service-ci quality gate",
    details: clip([head, ...report.agents.map(_agentLine)].join("\n"), 2000),
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

export function bitbucketAnnotations(report: RunReport): BitbucketAnnotation[] {
  return gateProblems(report).map(({ agent, title }) => {
    const link = httpLink(agent.url);
    const reason = outcomeReason(agent);
    return {
      external_id: `service-ci-${agent.agentId}`,
      annotation_type: "BUG",
      result: "FAILED",
      severity: agent.outcome === "failed" ? "HIGH" : "MEDIUM",
      // Bitbucket shows the summary (at most 450 characters) first: the service's reason with it.
      summary: clip(`Agent ${agent.agentId}: ${title}${reason ? `: ${reason}` : ""}`, 450),
      details: clip(_agentLine(agent), 2000),
      ...(link === null ? {} : { link }),
    };
  });
}

function _agentLine(agent: AgentOutcome): string {
  const reason = outcomeReason(agent);
  return [
    `Agent ${agent.agentId}: ${outcomeText(agent.outcome)}`,
    agent.runId === null ? "no run id" : `run ${agent.runId}`,
    ...(agent.status === null ? [] : [`status ${agent.status}`]),
    ...(reason === null ? [] : [reason]),
  ].join("; ");
}
