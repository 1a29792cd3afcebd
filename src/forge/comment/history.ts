/**
 * A gate's last few verdicts as a hidden second line of its comment ("❌ at `abc1234` → ✅ at
 * `def5678`" without opening CI), and its marker, the first. What is read back is the forge's data:
 * anything but exactly what {@linkcode historyLine} writes is ignored as a whole.
 */

import { httpLink } from "../../text/markdown.ts";
import type { Outcome, RunReport } from "../../report/outcome.ts";
import { OUTCOME_LABELS } from "../../report/words.ts";
import { isObject } from "../../service/verdict.ts";
import { createHash } from "node:crypto";
import { AGENT_UUID } from "../../config/values.ts";

/**
 * The hidden HTML comment that tells one gate's pull-request comment apart from every other. Only
 * hex digits come from the inputs: no name can end the comment or copy another gate's.
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

export const HISTORY_LENGTH = 5;

/** In characters of base64url: older entries go first to fit. */
export const MAX_HISTORY_SIZE = 8_192;

/** A longer run link is kept as no link. */
const _MAX_URL_LENGTH = 2_000;

export interface HistoryEntry {
  /** Lower-case hex, 7 to 40 digits. */
  readonly sha: string;
  readonly outcome: Outcome;
  /** `http:` or `https:`, normalised. */
  readonly url: string | null;
}

/** Per agent (lower-case UUID), its last commits, oldest first. */
export type CommentHistory = ReadonlyMap<string, readonly HistoryEntry[]>;

/**
 * Only right below `marker`; what this module would not write (bad encoding, an unknown agent, too
 * many entries, a commit twice, an extra field, an unnormalised link) empties it. Never throws.
 */
export function readHistory(
  body: string,
  options: { readonly marker: string; readonly agents: readonly string[] },
): CommentHistory {
  try {
    if (!hasMarker(body, options.marker)) return _EMPTY;
    const line = body.split("\n", 2)[1]?.replace(/\r$/, "") ?? "";
    const encoded = _LINE.exec(line)?.[1];
    if (encoded === undefined) return _EMPTY;
    const bytes = Uint8Array.fromBase64(encoded, { alphabet: "base64url" });
    // Only the one spelling historyLine writes: no padding, no stray bits in the last digit.
    if (_base64url(bytes) !== encoded) return _EMPTY;
    const data: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    return _validHistory(data, options.agents) ?? _EMPTY;
  } catch {
    return _EMPTY;
  }
}

/** A re-run replaces its commit's entry; agents not in the report drop; no hex SHA: no change. */
export function recordRun(history: CommentHistory, report: RunReport): CommentHistory {
  const given = report.ciMetadata.commit_sha?.trim().toLowerCase() ?? "";
  const sha = _SHA.test(given) ? given : null;
  const next = new Map<string, readonly HistoryEntry[]>();
  for (const agent of report.agents) {
    const id = agent.agentId.trim().toLowerCase();
    if (!AGENT_UUID.test(id)) continue;
    const earlier = history.get(id) ?? [];
    if (sha === null) {
      if (earlier.length > 0) next.set(id, earlier);
      continue;
    }
    const link = httpLink(agent.url);
    const url = link !== null && link.length <= _MAX_URL_LENGTH ? link : null;
    const entry = { sha, outcome: agent.outcome, url };
    next.set(id, [...earlier.filter((old) => old.sha !== sha), entry].slice(-HISTORY_LENGTH));
  }
  return next;
}

/** `<!-- service-ci history:<base64url of JSON> -->`; base64url holds no `-->` nor line break. */
export function historyLine(history: CommentHistory): string | null {
  const agents = [...history.entries()].filter(([, entries]) => entries.length > 0);
  // Oldest first, across agents; among entries of one age, later agents' first.
  const order = agents
    .flatMap(([, entries], agent) =>
      entries.map((_, index) => ({ agent, index, age: entries.length - 1 - index }))
    )
    .sort((a, b) => b.age - a.age || b.agent - a.agent);
  const encode = (dropped: number) => {
    const gone = new Set(order.slice(0, dropped).map(({ agent, index }) => `${agent}/${index}`));
    const kept = agents.flatMap(([id, entries], agent) => {
      const left = entries.flatMap(({ sha, outcome, url }, index) =>
        gone.has(`${agent}/${index}`) ? [] : [{ sha, outcome, url }]
      );
      return left.length === 0 ? [] : [[id, left] as const];
    });
    if (kept.length === 0) return null;
    const data = { v: _VERSION, agents: Object.fromEntries(kept) };
    return _base64url(new TextEncoder().encode(JSON.stringify(data)));
  };
  // Fewer entries never encode longer: find the fewest to drop.
  let [low, high] = [0, order.length];
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if ((encode(middle)?.length ?? 0) <= MAX_HISTORY_SIZE) high = middle;
    else low = middle + 1;
  }
  const encoded = encode(low);
  return encoded === null ? null : `${_PREFIX}${encoded}${_SUFFIX}`;
}

const _VERSION = 1;
const _PREFIX = "<!-- service-ci history:";
const _SUFFIX = " -->";
const _LINE = new RegExp(`^${_PREFIX}([A-Za-z0-9_-]{1,${MAX_HISTORY_SIZE}})${_SUFFIX}$`);
const _EMPTY: CommentHistory = new Map();
const _SHA = /^[0-9a-f]{7,40}$/;

function _base64url(bytes: Uint8Array): string {
  return bytes.toBase64({ alphabet: "base64url", omitPadding: true });
}

function _validHistory(data: unknown, agents: readonly string[]): CommentHistory | null {
  if (!isObject(data) || !_hasKeys(data, ["v", "agents"]) || data.v !== _VERSION) return null;
  if (!isObject(data.agents)) return null;
  const known = new Set(agents.map((agent) => agent.trim().toLowerCase()));
  const history = new Map<string, readonly HistoryEntry[]>();
  for (const [id, entries] of Object.entries(data.agents)) {
    // Stored lower-case, as recordRun writes them; `known` is lower-case too.
    if (!AGENT_UUID.test(id) || !known.has(id)) return null;
    if (!Array.isArray(entries) || entries.length < 1 || entries.length > HISTORY_LENGTH) {
      return null;
    }
    const kept = entries.map(_validEntry);
    if (new Set(kept.map((entry) => entry?.sha)).size !== kept.length) return null;
    if (kept.includes(null)) return null;
    history.set(id, kept as HistoryEntry[]);
  }
  return history;
}

function _validEntry(entry: unknown): HistoryEntry | null {
  if (!isObject(entry) || !_hasKeys(entry, ["sha", "outcome", "url"])) return null;
  const { sha, outcome, url } = entry;
  if (typeof sha !== "string" || !_SHA.test(sha)) return null;
  if (typeof outcome !== "string" || !Object.hasOwn(OUTCOME_LABELS, outcome)) return null;
  // Only a link as recordRun stores it: an http(s) URL in its normalised form.
  if (url !== null) {
    if (typeof url !== "string" || url.length > _MAX_URL_LENGTH) return null;
    if (!/^https?:\/\//.test(url) || httpLink(url) !== url) return null;
  }
  return { sha, outcome: outcome as Outcome, url };
}

function _hasKeys(value: Record<string, unknown>, keys: readonly string[]): boolean {
  const own = Object.keys(value);
  return own.length === keys.length && keys.every((key) => Object.hasOwn(value, key));
}
