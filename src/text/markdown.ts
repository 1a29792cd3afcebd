/**
 * Markdown that shows service text as text, the one rule for every Markdown surface: GitHub's
 * step summary, Azure's uploaded summary, Buildkite's annotation and the pull/merge request
 * comment. Tested through cmark-gfm (GitHub's renderer) and markdown-it.
 */

import { removeIgnorable } from "./ignorable.ts";

/**
 * Makes any text inert Markdown on one line, for GitHub, GitLab, Azure DevOps and Buildkite:
 *
 * - line breaks become spaces; control characters, and every default-ignorable code point (the
 *   invisible and bidirectional format characters, tag characters…) that could hide or reorder
 *   text, are dropped;
 * - ASCII punctuation is backslash-escaped and `&`, `<`, `>` are written as entities, so nothing
 *   can start markup, a table cell, a link, an image, a code span, math or HTML;
 * - a zero-width space (`&#8203;`) follows every character that starts a reference or autolink
 *   once the Markdown is rendered: `@` (mentions, e-mail links), `#` (issues), `!` (merge
 *   requests), `~` `%` `$` `^` `&` `*` (GitLab's labels, milestones, snippets, alerts, epics,
 *   iterations), `:` (`https://…`, `mailto:…`), `www` before a dot and `GH-` before a digit.
 *
 * A backslash escape alone is not enough: renderers find autolinks and references in the
 * rendered text, where the escape is gone (cmark-gfm links `user\@host\.example`); the
 * zero-width space is still there, as in Renovate's comments on both forges.
 *
 * @example
 * ```ts
 * inertMarkdown("@octocat #1"); // "\\@&#8203;octocat \\#&#8203;1"
 * inertMarkdown("a|b <i>"); // "a\\|b &lt;i&gt;"
 * ```
 */
export function inertMarkdown(text: string): string {
  const visible = text
    .toWellFormed()
    .replace(/\r\n|[\r\n\u2028\u2029]/g, " ")
    // deno-lint-ignore no-control-regex
    .replace(/[\x00-\x1f\x7f-\x9f]/g, "");
  const broken = removeIgnorable(visible)
    .replace(/[@#!~%$^&:*]/g, "$&\u200b")
    .replace(/(www)(?=\.)/gi, "$1\u200b")
    .replace(/(gh-)(?=\d)/gi, "$1\u200b");
  return broken
    .replace(/[!-%'-/:;=?@[-`{-~]/g, "\\$&")
    .replace(/[&<>\u200b]/g, (char) => _ENTITIES[char] ?? "");
}

/**
 * A link's destination for Markdown, or `null`: only an `http:` or `https:` URL, in its
 * normalised WHATWG form, to be written as `[text](<destination>)`. Every character that could
 * end the destination, split a table, open a code span or math, or read as an entity is
 * percent-encoded (`&` becomes `&amp;`, which Markdown decodes back). A destination longer than
 * `maxLength` gives `null`: one row must not take a whole comment.
 *
 * @example
 * ```ts
 * markdownDestination("https://service.example/runs/a|b"); // "https://service.example/runs/a%7Cb"
 * markdownDestination("javascript:alert(1)"); // null
 * ```
 */
export function markdownDestination(url: string | null, maxLength = 2_000): string | null {
  const href = httpLink(url);
  if (href === null) return null;
  const destination = Array.from(href, (char) => {
    if (/[A-Za-z0-9\-._~:/?#[\]@!'*+,;=%]/.test(char)) return char;
    if (char === "&") return "&amp;";
    return Array.from(
      _UTF8.encode(char),
      (byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`,
    ).join("");
  }).join("");
  return destination.length > maxLength ? null : destination;
}

/**
 * A run's link in its normalised WHATWG form when it is an `http:` or `https:` URL, else `null`:
 * no report ever links to another scheme (`javascript:`, `data:`, …), nor shows a user or
 * password in a link (they are dropped).
 *
 * @example
 * ```ts
 * httpLink("https://service.example/runs/a b"); // "https://service.example/runs/a%20b"
 * httpLink("https://user:pass@service.example/runs/1"); // "https://service.example/runs/1"
 * httpLink("javascript:alert(1)"); // null
 * ```
 */
export function httpLink(url: string | null): string | null {
  if (url === null || !URL.canParse(url)) return null;
  const parsed = new URL(url);
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return null;
  parsed.username = "";
  parsed.password = "";
  return parsed.href;
}

const _ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  "\u200b": "&#8203;",
};

const _UTF8 = new TextEncoder();
