/**
 * The errors a caller must catch, and the helpers every message uses to name what it got:
 * {@linkcode UsageError} (exit 2, nothing sent), {@linkcode FileRefused}, {@linkcode quoteValue} for a value in a one-line
 * reason, {@linkcode firstLine} for an error's own text.
 */

import { clip } from "../text/sanitize.ts";

/** Bad input: the message is one line naming the input and what would be valid. Exit code 2. */
export class UsageError extends Error {
  /** Names the error. */
  override name = "UsageError";
}

/**
 * A file the program will not read: not a regular file (a named pipe would block the run before
 * anything is sent), or larger than a file of its kind can be. The message is a phrase about the
 * path: "is a named pipe (FIFO), not a regular file".
 */
export class FileRefused extends Error {
  /** Names the error. */
  override name = "FileRefused";
}

/** The most characters of a value a message quotes; the rest is counted, not shown. */
export const QUOTE_MAX = 200;

/**
 * A value as a message quotes it: a JSON string, at most {@linkcode QUOTE_MAX} characters of it,
 * then how long the whole value is, so a 100 KB value never fills a one-line reason. A URL's
 * user and password are never shown ({@linkcode hideUserinfo}).
 *
 * @example
 * ```ts
 * quoteValue("soon"); // "\"soon\""
 * quoteValue("x".repeat(1000)).endsWith("…\" (1000 characters)"); // true
 * ```
 */
export function quoteValue(text: string): string {
  const shown = hideUserinfo(text);
  if (shown.length <= QUOTE_MAX) return JSON.stringify(shown);
  return `${JSON.stringify(clip(shown, QUOTE_MAX))} (${text.length} characters)`;
}

// A URL's userinfo: after its scheme and slashes (one is enough for WHATWG's parser, `https:/u:p@h`),
// or from the start of a value without a scheme (`u:p@h`), up to the authority's last `@`.
// A scheme's length is bounded (RFC 3986 sets none; real ones are short) so that a long value
// without one is read in linear time: unbounded, 100 KB took seconds.
const _USERINFO = /(^|[a-z][a-z0-9+.-]{0,31}:[\\/]+)[^\\/?#]*@/gi;

/**
 * `text` with the user and password of every URL in it replaced by `***`: they are credentials,
 * and a message, hint or report is read by more people than the one who gave them. A value's
 * start up to an `@` counts as a URL's, as `user:pass@host` does without a scheme.
 *
 * @example
 * ```ts
 * hideUserinfo("ftp://user:pass@host.example/x"); // "ftp://***@host.example/x"
 * hideUserinfo("user:pass@host.example"); // "***@host.example"
 * ```
 */
export function hideUserinfo(text: string): string {
  return text.replace(_USERINFO, "$1***@");
}

/**
 * The first line of an error's message, for one-line diagnostics.
 *
 * @example
 * ```ts
 * firstLine(new Error("no such file\nat …")); // "no such file"
 * ```
 */
export function firstLine(error: unknown): string {
  return error instanceof Error ? error.message.split("\n")[0]! : String(error).split("\n")[0]!;
}
