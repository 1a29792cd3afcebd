/** What a forge client offers the pull-request comment: find our comment, create it, edit it. */

import type { RequestOptions } from "../http.ts";

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
 * The comments of one pull request (GitHub) or merge request (GitLab). Each method takes how the
 * request goes (its priority, a signal that ends it).
 *
 * @example
 * ```ts
 * async function upsert(thread: CommentThread, marker: string, body: string): Promise<number> {
 *   const [found] = await thread.find(marker);
 *   if (found === undefined) return await thread.create(body);
 *   await thread.update(found.id, body);
 *   return found.id;
 * }
 * ```
 */
export interface CommentThread {
  /** The forge's name for messages: `"GitHub"`, `"GitLab"`. */
  readonly forge: string;
  /**
   * Every comment that the token's own identity wrote and whose first line is `marker`, oldest
   * first, following pagination. Comments by anyone else are never returned: their body is not
   * to be trusted (docs/pr-comment.md, "Only our own comments").
   */
  find(marker: string, options?: RequestOptions): Promise<FoundComment[]>;
  /** Creates a comment; resolves with its id. */
  create(body: string, options?: RequestOptions): Promise<number>;
  /** Replaces the body of comment `id`. */
  update(id: number, body: string, options?: RequestOptions): Promise<void>;
  /** Deletes comment `id` (one of our own, found by {@linkcode CommentThread.find}). */
  remove(id: number, options?: RequestOptions): Promise<void>;
}
