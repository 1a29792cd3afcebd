/**
 * Makes printed text unable to form a CI log command on any CI the runner knows: GitHub Actions,
 * Azure Pipelines, TeamCity, Buildkite and GitLab. SECURITY.md cites the parser behind each rule.
 */

// Matching control characters is part of this module's purpose.
// deno-lint-ignore-file no-control-regex

import { removeIgnorable } from "./ignorable.ts";

// Markers that CIs find anywhere in a line (the agents search with IndexOf/indexOf or scan every
// position): Azure Pipelines `##vso[`, TeamCity `##teamcity[`, GitHub's legacy `##[` (which Azure's
// log viewer also reads as `##[group]`…), GitLab's `section_start:`/`section_end:`. Each match is
// the marker's last character; matched in any letter case, more than the parsers need.
const MARKER_END = /(?<=##(?:vso|teamcity)?)\[|(?<=section_(?:start|end)):/gi;

// Every kind of line break a runner, terminal or log viewer may start a new line at.
const LINE_BREAK = /(\r\n|[\n\r\v\f\u0085\u2028\u2029])/;

// What a reader may not see when it looks at a line's start: escape sequences (Buildkite removes
// colour codes anywhere in the line before matching a header) and controls other than blanks;
// with the default-ignorable code points, which culture-aware string comparison (.NET's
// StartsWith) ignores, removed first (removeIgnorable).
const UNSEEN =
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[ -~]?|\x9b[0-?]*[ -/]*[@-~]|[\x00-\x08\x0e-\x1f\x7f-\x9f]/g;
// Read only at a line start: GitHub `::cmd::`, Buildkite `--- `, `+++ `, `~~~ ` headers and the
// `^^^ +++` expander (Go's `\s` is tab, newline, form feed, carriage return or space).
const LINE_START_MARKER = /^\s*(?:::|(?:---|\+\+\+|~~~)[\t\n\f\r ]|\^\^\^[\t\n\f\r ]+\+\+\+)/;

/**
 * Makes one output line unable to form a CI log command, changing as little as can be seen:
 * a marker that works anywhere in a line gets a space before its last character (`##vso[` →
 * `##vso [`, `##teamcity[` → `##teamcity [`, `##[` → `## [`, `section_start:` →
 * `section_start :`), and a line whose start is a line-start marker (`::`, or Buildkite's `--- `,
 * `+++ `, `~~~ `, `^^^ +++`), after blanks, escape sequences or invisible characters, is wrapped in
 * double quotes. Idempotent. A line break inside `line` starts a new line for every CI, so such
 * input is neutralised line by line, as {@linkcode neutralizeText} does.
 *
 * @example
 * ```ts
 * neutralizeLine("x ##vso[task.complete result=Succeeded]"); // "x ##vso [task.complete result=Succeeded]"
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

/**
 * {@linkcode neutralizeLine} applied to every line of a multi-line text; the line breaks stay as
 * they were.
 *
 * @example
 * ```ts
 * neutralizeText("ok\n--- group\n"); // "ok\n\"--- group\"\n"
 * ```
 */
export function neutralizeText(text: string): string {
  return text.split(LINE_BREAK).map((part, index) =>
    // split() with a capturing group puts each break at an odd index.
    index % 2 === 1 ? part : neutralizeLine(part)
  ).join("");
}

// A JSON string literal, escapes included.
const JSON_STRING = /"(?:[^"\\]|\\.)*"/g;
// Characters that a log viewer may take as a line break, although JSON allows them raw in strings.
const RAW_BREAK = /[\u0085\u2028\u2029]/g;

/**
 * Rewrites serialized JSON so that its bytes hold no CI log-command marker while `JSON.parse`
 * gives exactly the same value: inside string literals, the last character of each marker
 * (`##vso[`, `##teamcity[`, `##[`, `section_start:`, `section_end:`) is written as a `\u` escape
 * (`\u005b` or `\u003a`), and U+0085, U+2028 and U+2029 as `\u` escapes. Line-start markers need
 * nothing: every line of JSON text, pretty-printed or not, starts with blanks and then a structural
 * character or the `"` that opens a key. Idempotent.
 *
 * @example
 * ```ts
 * escapeJsonForLogs('{"status":"##vso[task.complete]"}'); // '{"status":"##vso\\u005btask.complete]"}'
 * ```
 */
export function escapeJsonForLogs(json: string): string {
  return json.replace(
    JSON_STRING,
    (literal) => literal.replace(MARKER_END, _unicodeEscape).replace(RAW_BREAK, _unicodeEscape),
  );
}

function _unicodeEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}
