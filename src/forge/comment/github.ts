/** The comments of a GitHub pull request, through the REST API's issue comments. */

import { type ForgeHttp, type RequestOptions, tokenUser } from "../http.ts";
import { HttpFailure } from "../../http/policy.ts";
import { hasMarker } from "./marker.ts";
import { nextLink } from "../http.ts";
import { type CommentThread, type FoundComment, MAX_PAGES } from "./thread.ts";

export interface GithubThreadOptions {
  readonly http: ForgeHttp;
  /** `owner/name`. */
  readonly repository: string;
  readonly pullRequest: number;
}

/** To this API a pull request is an issue. */
export class GithubThread implements CommentThread {
  readonly forge = "GitHub";
  readonly #http: ForgeHttp;
  readonly #issue: string;
  readonly #repo: string;
  #login: string | null = null;

  /** @throws {TypeError} If `repository` or `pullRequest` is not usable. */
  constructor(options: GithubThreadOptions) {
    const parts = options.repository.split("/");
    if (parts.length !== 2 || !parts.every((part) => /^[A-Za-z0-9_.-]+$/.test(part))) {
      throw new TypeError(
        `The GitHub repository must be "owner/name" (got ${JSON.stringify(options.repository)})`,
      );
    }
    if (!Number.isSafeInteger(options.pullRequest) || options.pullRequest < 1) {
      throw new TypeError(
        `The pull request number must be a positive whole number (got ${options.pullRequest})`,
      );
    }
    this.#repo = `/repos/${parts.map(encodeURIComponent).join("/")}`;
    this.#issue = `${this.#repo}/issues/${options.pullRequest}`;
    this.#http = options.http;
  }

  /** Anyone can post the marker; a comment by another login is never ours. */
  async find(marker: string, options: RequestOptions = {}): Promise<FoundComment[]> {
    const self = (await this.#self(options)).toLowerCase();
    const found: FoundComment[] = [];
    let target: string | null = `${this.#issue}/comments?per_page=100`;
    for (let page = 1; target !== null && page <= MAX_PAGES; page++) {
      const answer = await this.#http.request("GET", target, undefined, options);
      if (!Array.isArray(answer.data)) {
        throw new HttpFailure("unusable", "GitHub listed the comments without a JSON array");
      }
      for (const comment of answer.data as unknown[]) {
        const id = _commentId(comment);
        const body = (comment as { body?: unknown }).body;
        if (
          id !== null && typeof body === "string" && hasMarker(body, marker) &&
          _login(comment)?.toLowerCase() === self
        ) found.push({ id, body });
      }
      target = nextLink(answer.headers.get("link"));
    }
    return found;
  }

  async create(body: string, options: RequestOptions = {}): Promise<number> {
    const answer = await this.#http.request("POST", `${this.#issue}/comments`, { body }, options);
    const id = _commentId(answer.data);
    if (id === null) throw new HttpFailure("unusable", "GitHub created a comment without an id");
    // What the forge says we write as beats the guess (a GitHub App's token is `<app>[bot]`).
    this.#login = _login(answer.data) ?? this.#login;
    return id;
  }

  // The token's login: `GET /user` for a personal token; the workflow token (and an app's)
  // cannot read it (403), and writes as `github-actions[bot]`.
  async #self(options: RequestOptions): Promise<string> {
    if (this.#login !== null) return this.#login;
    this.#login = _login({ user: await tokenUser(this.#http, options) }) ?? WORKFLOW_TOKEN_LOGIN;
    return this.#login;
  }

  async update(id: number, body: string, options: RequestOptions = {}): Promise<void> {
    await this.#http.request("PATCH", `${this.#repo}/issues/comments/${id}`, { body }, options);
  }

  async remove(id: number, options: RequestOptions = {}): Promise<void> {
    await this.#http.request("DELETE", `${this.#repo}/issues/comments/${id}`, undefined, options);
  }
}

/** The login the workflow token (`${{ github.token }}`) writes comments as. */
export const WORKFLOW_TOKEN_LOGIN = "github-actions[bot]";

function _login(comment: unknown): string | null {
  const user = typeof comment === "object" && comment !== null
    ? (comment as { user?: unknown }).user
    : undefined;
  const login = typeof user === "object" && user !== null
    ? (user as { login?: unknown }).login
    : undefined;
  return typeof login === "string" && login !== "" ? login : null;
}

function _commentId(comment: unknown): number | null {
  const id = typeof comment === "object" && comment !== null
    ? (comment as { id?: unknown }).id
    : undefined;
  return typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? id : null;
}
