/** The hidden HTML comment that tells one gate's pull-request comment apart from every other. */

import { createHash } from "node:crypto";

/**
 * Only hex digits come from the inputs: no name can end the comment or copy another gate's.
 * `key`: `--pr-comment-key`, one comment per matrix leg; none gives the marker of 1.1.
 */
export function gateMarker(identity: {
  readonly workflow: string;
  readonly job: string;
  readonly agents: readonly string[];
  readonly key?: string | undefined;
}): string {
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

/** Only the first line counts: a reply quoting our comment is not ours. */
export function hasMarker(body: string, marker: string): boolean {
  const firstLine = body.split(/\r?\n/, 1)[0] ?? "";
  return firstLine.trim() === marker;
}
