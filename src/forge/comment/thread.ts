/** What a forge client offers the pull-request comment: find our comment, create it, edit it. */

import type { RequestOptions } from "../http.ts";

/** Pages of 100 comments read while looking for the marker. */
export const MAX_PAGES = 50;

export interface FoundComment {
  readonly id: number;
  readonly body: string;
}

/** The comments of one pull request (GitHub) or merge request (GitLab). */
export interface CommentThread {
  readonly forge: string;
  /** Only the token's own comments, oldest first: anyone else's is not to be trusted. */
  find(marker: string, options?: RequestOptions): Promise<FoundComment[]>;
  create(body: string, options?: RequestOptions): Promise<number>;
  update(id: number, body: string, options?: RequestOptions): Promise<void>;
  remove(id: number, options?: RequestOptions): Promise<void>;
}
