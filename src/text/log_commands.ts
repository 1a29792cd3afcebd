/**
 * Makes printed text unable to form a CI log command on any CI the runner knows: GitHub Actions,
 * Azure Pipelines, TeamCity, Buildkite and GitLab. SECURITY.md cites the parser behind each rule.
 */

// Matching control characters is this module's purpose.
// deno-lint-ignore-file no-control-regex

import { removeIgnorable } from "./ignorable.ts";

// Markers CIs find anywhere in a line (the agents search with IndexOf or scan every position);
// GitHub's legacy `##[` is also Azure's log viewer's `##[group]`. Each match is the marker's last
// character, in any letter case, more than the parsers need.
const MARKER_END = /(?<=##(?:vso|teamcity)?)\[|(?<=section_(?:start|end)):/gi;

// Every break a runner, terminal or log viewer may start a new line at.
const LINE_BREAK = /(\r\n|[\n\r\v\f\u0085\u2028\u2029])/;

// What a reader skips at a line's start: escape sequences (Buildkite strips colour codes before
// matching a header) and controls; ignorable code points (.NET's StartsWith skips them) go first.
const UNSEEN =
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[ -~]?|\x9b[0-?]*[ -/]*[@-~]|[\x00-\x08\x0e-\x1f\x7f-\x9f]/g;
// Read only at a line start: GitHub `::cmd::`, Buildkite `--- `, `+++ `, `~~~ ` headers and the
// `^^^ +++` expander (Go's `\s` is tab, newline, form feed, carriage return or space).
const LINE_START_MARKER = /^\s*(?:::|(?:---|\+\+\+|~~~)[\t\n\f\r ]|\^\^\^[\t\n\f\r ]+\+\+\+)/;

/**
 * Changes as little as can be seen: a marker that works anywhere gets a space before its last
 * character; a line starting with a line-start marker is wrapped in double quotes. Idempotent.
 *
 * @example
 * ```ts
 * neutralizeLine("x ##vso[task.complete]"); // "x ##vso [task.complete]"
 * neutralizeLine("::error::boom"); // "\"::error::boom\""
 * ```
 */
export function neutralizeLine(line: string): string {
  if (LINE_BREAK.test(line)) return neutralizeText(line);
  const broken = line.replace(MARKER_END, " $&");
  // Blanks before the marker count too: GitHub's runner trims them (.NET's TrimStart).
  return LINE_START_MARKER.test(removeIgnorable(broken).replace(UNSEEN, ""))
    ? `"${broken}"`
    : broken;
}

/** {@linkcode neutralizeLine} on every line; the line breaks stay as they were. */
export function neutralizeText(text: string): string {
  return text.split(LINE_BREAK).map((part, index) =>
    // split() with a capturing group puts each break at an odd index.
    index % 2 === 1 ? part : neutralizeLine(part)
  ).join("");
}

const JSON_STRING = /"(?:[^"\\]|\\.)*"/g;
// A log viewer may take these as a line break, although JSON allows them raw in strings.
const RAW_BREAK = /[\u0085\u2028\u2029]/g;

/**
 * Serialized JSON whose bytes hold no CI log-command marker while `JSON.parse` gives the same
 * value: markers' last characters and raw breaks in strings become `\u` escapes. Line-start
 * markers need nothing: every line of JSON starts with blanks, then a structural character or `"`.
 */
export function escapeJsonForLogs(json: string): string {
  return json.replace(
    JSON_STRING,
    (literal) => literal.replace(MARKER_END, unicodeEscape).replace(RAW_BREAK, unicodeEscape),
  );
}

export function unicodeEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}
