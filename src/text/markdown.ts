/** Markdown that shows service text as text: the one rule for every Markdown surface. */

import { removeIgnorable } from "./ignorable.ts";
import { CONTROL, XML_ENTITIES } from "./sanitize.ts";

/**
 * Any text as inert Markdown on one line. A zero-width space follows every character that starts a
 * reference or autolink (`@` `#` `!`, GitLab's `~ % $ ^ & *`, `:`, `www.`, `GH-1`), as Renovate
 * does: renderers see them once backslash escapes are gone (cmark-gfm links `user\@host\.example`).
 *
 * @example
 * ```ts
 * inertMarkdown("@octocat #1"); // "\\@&#8203;octocat \\#&#8203;1"
 * inertMarkdown("a|b <i>"); // "a\\|b &lt;i&gt;"
 * ```
 */
export function inertMarkdown(text: string): string {
  return _oneLine(text)
    .replace(/[@#!~%$^&:*]/g, "$&\u200b")
    .replace(/(www)(?=\.)/gi, "$1\u200b")
    .replace(/(gh-)(?=\d)/gi, "$1\u200b")
    .replace(/[!-%'-/:;=?@[-`{-~]/g, "\\$&")
    .replace(/[&<>\u200b]/g, (char) => XML_ENTITIES[char] ?? "&#8203;");
}

/**
 * An id as an inert code span on one line, shown as it is (in code a backslash escape shows). A
 * fence longer than any backtick run keeps it inside; nothing links in code. Not for a table cell,
 * which a `|` would split even in code.
 *
 * @example
 * ```ts
 * markdownCode("run_1"); // "`run_1`"
 * markdownCode("a`b"); // "``a`b``"
 * ```
 */
export function markdownCode(text: string): string {
  const code = _oneLine(text);
  const longest = Array.from(code.matchAll(/`+/g), ([run]) => run.length)
    .reduce((most, length) => Math.max(most, length), 0);
  const fence = "`".repeat(longest + 1);
  // A space inside each end is dropped when rendered: it keeps a backtick off the fence, and
  // an id's own blanks at its ends; an empty span would be no span.
  const padded = code === "" || /^[` ]|[` ]$/.test(code) ? ` ${code} ` : code;
  return `${fence}${padded}${fence}`;
}

/**
 * A link to an http(s) `url`, or `null`: the one way every Markdown surface links. `text` is our
 * own Markdown, never the service's. What could end the link, split a table or open a code span is
 * percent-encoded; a long one gives `null`, so one row cannot take a whole comment.
 *
 * @example
 * ```ts
 * markdownLink("dashboard", "https://dash.example/run)![x](https://evil.example/p.png)");
 * // "[dashboard](<https://dash.example/run%29![x]%28https://evil.example/p.png%29>)"
 * markdownLink("dashboard", "javascript:alert(1)"); // null
 * ```
 */
export function markdownLink(text: string, url: string | null, maxLength = 2_000): string | null {
  const href = httpLink(url);
  if (href === null) return null;
  const destination = percentEncode(href, /[A-Za-z0-9\-._~:/?#[\]@!'*+,;=%&]/)
    .replaceAll("&", "&amp;");
  return destination.length > maxLength ? null : `[${text}](<${destination}>)`;
}

/** Every character `safe` does not match, as the percent-escapes of its UTF-8 bytes. */
export function percentEncode(text: string, safe: RegExp): string {
  return Array.from(text, (char) =>
    safe.test(char) ? char : Array.from(
      _UTF8.encode(char),
      (byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`,
    ).join("")).join("");
}

/** No report links to another scheme (`javascript:`, `data:`) nor shows a user or password. */
export function httpLink(url: string | null): string | null {
  if (url === null || !URL.canParse(url)) return null;
  const parsed = new URL(url);
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return null;
  parsed.username = "";
  parsed.password = "";
  return parsed.href;
}

const _UTF8 = new TextEncoder();

function _oneLine(text: string): string {
  const visible = text
    .toWellFormed()
    .replace(/\r\n|[\r\n\u2028\u2029]/g, " ")
    .replace(CONTROL, "");
  return removeIgnorable(visible);
}
