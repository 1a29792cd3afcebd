/** The notes (comments) of a GitLab merge request, through the REST API v4. */

import {
  type ForgeEffects,
  ForgeError,
  type ForgeHttp,
  gitlabApi,
  tokenUser,
} from "./forge_http.ts";
import { hasMarker } from "./marker.ts";
import { type CommentThread, type FoundComment, MAX_PAGES, nextLink } from "./thread.ts";

/** Options of {@linkcode GitlabThread}. */
export interface GitlabThreadOptions extends ForgeEffects {
  /** A project or group access token (or a personal one) with the `api` scope. */
  readonly token: string;
  /** The API root, `CI_API_V4_URL` (`https://gitlab.com/api/v4`). */
  readonly apiUrl: string;
  /** The project's id or URL-encoded path (`CI_PROJECT_ID`). */
  readonly projectId: string;
  /** The merge request's iid (`CI_MERGE_REQUEST_IID`). */
  readonly mergeRequest: number;
  /** The `User-Agent` header. */
  readonly userAgent: string;
}

/**
 * One merge request's notes on GitLab.
 *
 * @example
 * ```ts
 * const thread = new GitlabThread({
 *   token: "glpat-example",
 *   apiUrl: "https://gitlab.com/api/v4",
 *   projectId: "1234",
 *   mergeRequest: 7,
 *   userAgent: "service-ci/1.0.0 (linux; x86_64)",
 * });
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
   * @throws {TypeError} If `projectId`, `mergeRequest` or `apiUrl` is not usable.
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
    this.#http = gitlabApi(options);
  }

  /**
   * Reads the notes oldest first, page by page (`Link: rel="next"`, else `x-next-page`), until
   * a note that is not a system note starts with `marker`.
   */
  async find(marker: string): Promise<FoundComment | null> {
    // Only the token's own notes count: anyone can post the marker, and GitLab lets only a
    // note's author edit it. A token whose user cannot be read edits nothing.
    const self = await this.#self();
    if (self === null) return null;
    const first = `${this.#notes}?per_page=100&sort=asc&order_by=created_at`;
    let target: string | null = first;
    for (let page = 1; target !== null && page <= MAX_PAGES; page++) {
      const answer = await this.#http.request("GET", target);
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
        ) return { id, body };
      }
      const nextPage = answer.headers.get("x-next-page")?.trim() ?? "";
      target = nextLink(answer.headers.get("link")) ??
        (/^\d+$/.test(nextPage) ? `${first}&page=${nextPage}` : null);
    }
    return null;
  }

  // The token's user: `GET /user` (a project or group access token has a bot user).
  async #self(): Promise<number | null> {
    if (this.#userId !== undefined) return this.#userId;
    const id = (await tokenUser(this.#http) as { id?: unknown } | null)?.id;
    this.#userId = typeof id === "number" && Number.isSafeInteger(id) ? id : null;
    return this.#userId;
  }

  /** Creates the note: `POST /projects/{id}/merge_requests/{iid}/notes`. */
  async create(body: string): Promise<number> {
    const answer = await this.#http.request("POST", this.#notes, { body });
    const id = (answer.data as { id?: unknown } | null)?.id;
    if (typeof id !== "number" || !Number.isSafeInteger(id)) {
      throw new ForgeError("unusable", "GitLab created a note without an id");
    }
    return id;
  }

  /** Edits the note: `PUT /projects/{id}/merge_requests/{iid}/notes/{note_id}`. */
  async update(id: number, body: string): Promise<void> {
    await this.#http.request("PUT", `${this.#notes}/${id}`, { body });
  }
}
