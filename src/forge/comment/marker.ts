/** The hidden HTML comment that tells one gate's pull-request comment apart from every other. */

import { createHash } from "node:crypto";

/** What makes two gates different: where they run and which agents they check. */
export interface GateIdentity {
  /** The workflow or pipeline name (`GITHUB_WORKFLOW`); empty where the CI has none. */
  readonly workflow: string;
  /** The job (`GITHUB_JOB`, `CI_JOB_NAME`). */
  readonly job: string;
  /** The agent UUIDs; order, case and repeats do not matter. */
  readonly agents: readonly string[];
  /** `--pr-comment-key`: one comment per matrix leg; none gives the marker of 1.1. */
  readonly key?: string | undefined;
}

/**
 * The marker for a gate: `<!-- service-ci gate:<16 hex digits> -->`, the digits being a SHA-256
 * of the workflow, the job, the sorted set of agents and the key when one is given. Only hex digits come from the inputs,
 * so no workflow or job name can close the comment early or make another gate's marker.
 *
 * @example
 * ```ts
 * const a = gateMarker({ workflow: "ci", job: "gate", agents: ["B", "a"] });
 * const b = gateMarker({ workflow: "ci", job: "gate", agents: ["a", "b", "a"] });
 * a === b; // true: the same set of agents
 * ```
 */
export function gateMarker(identity: GateIdentity): string {
  const agents = [...new Set(identity.agents.map((agent) => agent.trim().toLowerCase()))].sort();
  // JSON keeps the three parts apart: no workflow name can shift text into the job's place.
  const digest = createHash("sha256")
    .update(JSON.stringify([
      identity.workflow,
      identity.job,
      agents,
      ...(identity.key === undefined ? [] : [identity.key]),
    ]))
    .digest("hex");
  return `<!-- service-ci gate:${digest.slice(0, 16)} -->`;
}

/**
 * Whether a comment body is this gate's comment: its first line is exactly the marker. A marker
 * quoted further down (a reply quoting our comment) does not count.
 *
 * @example
 * ```ts
 * const marker = gateMarker({ workflow: "ci", job: "gate", agents: ["a"] });
 * hasMarker(`${marker}\n### result`, marker); // true
 * hasMarker(`> ${marker}`, marker); // false
 * ```
 */
export function hasMarker(body: string, marker: string): boolean {
  const firstLine = body.split(/\r?\n/, 1)[0] ?? "";
  return firstLine.trim() === marker;
}
