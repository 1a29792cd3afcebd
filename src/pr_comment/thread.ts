/** What a forge client offers the pull-request comment: find our comment, create it, edit it. */

/** The most pages of comments read while looking for the marker (100 comments a page). */
export const MAX_PAGES = 50;

/** A comment of the gate, as {@linkcode CommentThread.find} found it. */
export interface FoundComment {
  /** The comment's id, for {@linkcode CommentThread.update}. */
  readonly id: number;
  /** Its body as the forge holds it now (the history is read from it). */
  readonly body: string;
}

/**
 * The comments of one pull request (GitHub) or merge request (GitLab).
 *
 * @example
 * ```ts
 * async function upsert(thread: CommentThread, marker: string, body: string): Promise<number> {
 *   const found = await thread.find(marker);
 *   if (found === null) return await thread.create(body);
 *   await thread.update(found.id, body);
 *   return found.id;
 * }
 * ```
 */
export interface CommentThread {
  /** The forge's name for messages: `"GitHub"`, `"GitLab"`. */
  readonly forge: string;
  /**
   * The oldest comment that the token's own identity wrote and whose first line is `marker`,
   * following pagination; else `null`. Comments by anyone else are never returned: their body
   * is not to be trusted (docs/pr-comment.md, "Only our own comments").
   */
  find(marker: string): Promise<FoundComment | null>;
  /** Creates a comment; resolves with its id. */
  create(body: string): Promise<number>;
  /** Replaces the body of comment `id`. */
  update(id: number, body: string): Promise<void>;
}

/**
 * The `rel="next"` address of an RFC 8288 `Link` header, or `null`.
 *
 * @example
 * ```ts
 * nextLink('<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last"');
 * // "https://api.github.com/x?page=2"
 * ```
 */
export function nextLink(header: string | null): string | null {
  if (header === null) return null;
  for (const match of header.matchAll(/<([^>]*)>((?:\s*;\s*[^,;]+)*)/g)) {
    const rel = /;\s*rel\s*=\s*"?([^";]*)"?/i.exec(match[2] ?? "")?.[1] ?? "";
    if (rel.toLowerCase().split(/\s+/).includes("next")) return match[1] ?? null;
  }
  return null;
}
