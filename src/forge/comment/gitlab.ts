/** The notes (comments) of a GitLab merge request, through the REST API v4. */

import { ForgeError, type ForgeHttp, type RequestOptions, tokenUser } from "../http.ts";
import { hasMarker } from "./marker.ts";
import { nextLink } from "../http.ts";
import { type CommentThread, type FoundComment, MAX_PAGES } from "./thread.ts";

/** Options of {@linkcode GitlabThread}. */
export interface GitlabThreadOptions {
  /** GitLab's client (`gitlabApi`, or the run's from `forge/clients.ts`). */
  readonly http: ForgeHttp;
  /** The project's id or URL-encoded path (`CI_PROJECT_ID`). */
  readonly projectId: string;
  /** The merge request's iid (`CI_MERGE_REQUEST_IID`). */
  readonly mergeRequest: number;
}

/**
 * One merge request's notes on GitLab.
 *
 * @example
 * ```ts
 * import { gitlabApi } from "../http.ts";
 * const http = gitlabApi({
 *   token: "glpat-example",
 *   apiUrl: "https://gitlab.com/api/v4",
 *   userAgent: "service-ci/1.0.0 (linux; x86_64)",
 * });
 * const thread = new GitlabThread({ http, projectId: "1234", mergeRequest: 7 });
 * // const found = await thread.find("<!-- service-ci gate:0123456789abcdef -->");
 * ```
 */
export class GitlabThread implements CommentThread {
  /** The forge's name for messages. */
  readonly forge = "GitLab";
  readonly #http: ForgeHttp;
  readonly #notes: string;
  // The token's user id, once known; undefined until asked, null when it cannot be read.
  #userId: number | null | undefined = undefined;

  /**
   * The merge request's thread on GitLab.
   *
   * @throws {TypeError} If `projectId` or `mergeRequest` is not usable.
   */
  constructor(options: GitlabThreadOptions) {
    if (options.projectId.trim() === "") {
      throw new TypeError("The GitLab project id must not be empty (CI_PROJECT_ID)");
    }
    if (!Number.isSafeInteger(options.mergeRequest) || options.mergeRequest < 1) {
      throw new TypeError(
        `The merge request iid must be a positive whole number (got ${options.mergeRequest})`,
      );
    }
    this.#notes = `/projects/${
      encodeURIComponent(options.projectId.trim())
    }/merge_requests/${options.mergeRequest}/notes`;
    this.#http = options.http;
  }

  /**
   * Reads the notes oldest first, page by page (`Link: rel="next"`, else `x-next-page`), and
   * returns the token's own that are not system notes and start with `marker`.
   */
  async find(marker: string, options: RequestOptions = {}): Promise<FoundComment[]> {
    // Only the token's own notes count: anyone can post the marker, and GitLab lets only a
    // note's author edit it. A token whose user cannot be read edits nothing.
    const self = await this.#self(options);
    if (self === null) return [];
    const found: FoundComment[] = [];
    const first = `${this.#notes}?per_page=100&sort=asc&order_by=created_at`;
    let target: string | null = first;
    for (let page = 1; target !== null && page <= MAX_PAGES; page++) {
      const answer = await this.#http.request("GET", target, undefined, options);
      if (!Array.isArray(answer.data)) {
        throw new ForgeError("unusable", "GitLab listed the notes without a JSON array");
      }
      for (const note of answer.data as unknown[]) {
        const { id, body, system, author } =
          (typeof note === "object" && note !== null ? note : {}) as {
            id?: unknown;
            body?: unknown;
            system?: unknown;
            author?: { id?: unknown } | null;
          };
        if (
          typeof id === "number" && Number.isSafeInteger(id) && system !== true &&
          typeof body === "string" && hasMarker(body, marker) && author?.id === self
        ) found.push({ id, body });
      }
      const nextPage = answer.headers.get("x-next-page")?.trim() ?? "";
      target = nextLink(answer.headers.get("link")) ??
        (/^\d+$/.test(nextPage) ? `${first}&page=${nextPage}` : null);
    }
    return found;
  }

  // The token's user: `GET /user` (a project or group access token has a bot user).
  async #self(options: RequestOptions): Promise<number | null> {
    if (this.#userId !== undefined) return this.#userId;
    const id = (await tokenUser(this.#http, options) as { id?: unknown } | null)?.id;
    this.#userId = typeof id === "number" && Number.isSafeInteger(id) ? id : null;
    return this.#userId;
  }

  /** Creates the note: `POST /projects/{id}/merge_requests/{iid}/notes`. */
  async create(body: string, options: RequestOptions = {}): Promise<number> {
    const answer = await this.#http.request("POST", this.#notes, { body }, options);
    const id = (answer.data as { id?: unknown } | null)?.id;
    if (typeof id !== "number" || !Number.isSafeInteger(id)) {
      throw new ForgeError("unusable", "GitLab created a note without an id");
    }
    return id;
  }

  /** Edits the note: `PUT /projects/{id}/merge_requests/{iid}/notes/{note_id}`. */
  async update(id: number, body: string, options: RequestOptions = {}): Promise<void> {
    await this.#http.request("PUT", `${this.#notes}/${id}`, { body }, options);
  }

  /** Deletes the note: `DELETE /projects/{id}/merge_requests/{iid}/notes/{note_id}`. */
  async remove(id: number, options: RequestOptions = {}): Promise<void> {
    await this.#http.request("DELETE", `${this.#notes}/${id}`, undefined, options);
  }
}
