/** How every message quotes what it got: one line, cut, credentials hidden. */

import { clip } from "./sanitize.ts";

/** The most characters of a value a message quotes; the rest is counted, not shown. */
export const QUOTE_MAX = 200;

/** As JSON, cut with its length after it so a 100 KB value never fills a one-line reason. */
export function quoteValue(text: string): string {
  const shown = hideUserinfo(text);
  if (shown.length <= QUOTE_MAX) return JSON.stringify(shown);
  return `${JSON.stringify(clip(shown, QUOTE_MAX))} (${text.length} characters)`;
}

// After a scheme and slashes (one is enough for WHATWG's parser, `https:/u:p@h`), or from the
// start after any slashes (`u:p@h`, the scheme-relative `//u:p@h`), up to the authority's last
// `@`. A scheme's length is bounded (RFC 3986 sets none; real ones are short) so that a long value
// is read in linear time: unbounded, 100 KB took seconds.
const _USERINFO = /(^[\\/]*|[a-z][a-z0-9+.-]{0,31}:[\\/]+)[^\\/?#]*@/gi;

/** A message, hint or report is read by more people than the one who gave the credentials. */
export function hideUserinfo(text: string): string {
  return text.replace(_USERINFO, "$1***@");
}

/** "A", "A and B", "A, B and C": names in a sentence. */
export function andList(names: readonly string[]): string {
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function firstLine(error: unknown): string {
  return errorMessage(error).split("\n")[0]!;
}
