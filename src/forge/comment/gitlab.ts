/** The notes (comments) of a GitLab merge request, through the REST API v4. */

import { type ForgeHttp, type RequestOptions, tokenUser } from "../http.ts";
import { HttpFailure } from "../../http/policy.ts";
import { hasMarker } from "./marker.ts";
import { nextLink } from "../http.ts";
import { type CommentThread, type FoundComment, MAX_PAGES } from "./thread.ts";

export interface GitlabThreadOptions {
  readonly http: ForgeHttp;
  /** The project's id or URL-encoded path (`CI_PROJECT_ID`). */
  readonly projectId: string;
  /** The iid (`CI_MERGE_REQUEST_IID`). */
  readonly mergeRequest: number;
}

export class GitlabThread implements CommentThread {
  readonly forge = "GitLab";
  readonly #http: ForgeHttp;
  readonly #notes: string;
  // Undefined until asked, null when it cannot be read.
  #userId: number | null | undefined = undefined;

  /** @throws {TypeError} If `projectId` or `mergeRequest` is not usable. */
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

  async find(marker: string, options: RequestOptions = {}): Promise<FoundComment[]> {
    // Anyone can post the marker, and GitLab lets only a note's author edit it. A token whose
    // user cannot be read edits nothing.
    const self = await this.#self(options);
    if (self === null) return [];
    const found: FoundComment[] = [];
    const first = `${this.#notes}?per_page=100&sort=asc&order_by=created_at`;
    let target: string | null = first;
    for (let page = 1; target !== null && page <= MAX_PAGES; page++) {
      const answer = await this.#http.request("GET", target, undefined, options);
      if (!Array.isArray(answer.data)) {
        throw new HttpFailure("unusable", "GitLab listed the notes without a JSON array");
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

  async create(body: string, options: RequestOptions = {}): Promise<number> {
    const answer = await this.#http.request("POST", this.#notes, { body }, options);
    const id = (answer.data as { id?: unknown } | null)?.id;
    if (typeof id !== "number" || !Number.isSafeInteger(id)) {
      throw new HttpFailure("unusable", "GitLab created a note without an id");
    }
    return id;
  }

  async update(id: number, body: string, options: RequestOptions = {}): Promise<void> {
    await this.#http.request("PUT", `${this.#notes}/${id}`, { body }, options);
  }

  async remove(id: number, options: RequestOptions = {}): Promise<void> {
    await this.#http.request("DELETE", `${this.#notes}/${id}`, undefined, options);
  }
}
