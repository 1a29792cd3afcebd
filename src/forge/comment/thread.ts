/**
 * The comments of one pull request (GitHub's REST API, where a pull request is an issue) or merge
 * request (GitLab's REST API v4, where they are notes): find ours, create it, edit it.
 */

import { type ForgeHttp, nextLink, type RequestOptions, tokenUser } from "../http.ts";
import { HttpFailure } from "../../http/policy.ts";
import type { ForgeTarget } from "../target.ts";
import { hasMarker } from "./marker.ts";

// Pages of 100 comments read while looking for the marker.
const _MAX_PAGES = 50;

export class CommentThread {
  readonly forge: "GitHub" | "GitLab";
  readonly #http: ForgeHttp;
  readonly #noun: "comment" | "note";
  // Where the list is read and a comment created; where one comment is edited or deleted.
  readonly #list: string;
  readonly #one: string;
  // Who the token writes as: GitHub's login (lower-case) or GitLab's user id; undefined until
  // asked, null when GitLab's cannot be read.
  #self: string | number | null | undefined = undefined;

  /** The target of a comment: its repository is checked and its `change` set. */
  constructor(target: ForgeTarget, http: ForgeHttp) {
    this.#http = http;
    if (target.forge === "GitLab") {
      this.forge = "GitLab";
      this.#noun = "note";
      this.#list = `/projects/${
        encodeURIComponent(target.repository.trim())
      }/merge_requests/${target.change}/notes`;
      this.#one = this.#list;
    } else {
      this.forge = "GitHub";
      this.#noun = "comment";
      const repo = `/repos/${target.repository.split("/").map(encodeURIComponent).join("/")}`;
      this.#list = `${repo}/issues/${target.change}/comments`;
      this.#one = `${repo}/issues/comments`;
    }
  }

  /**
   * Only the token's own comments, oldest first: anyone can post the marker, and GitLab lets only
   * a note's author edit it. A GitLab token whose user cannot be read edits nothing.
   */
  async find(
    marker: string,
    options: RequestOptions = {},
  ): Promise<{ readonly id: number; readonly body: string }[]> {
    const self = await this.#whoAmI(options);
    if (self === null) return [];
    const found: { id: number; body: string }[] = [];
    const first = this.forge === "GitHub"
      ? `${this.#list}?per_page=100`
      : `${this.#list}?per_page=100&sort=asc&order_by=created_at`;
    let target: string | null = first;
    for (let page = 1; target !== null && page <= _MAX_PAGES; page++) {
      const answer = await this.#http.request("GET", target, undefined, options);
      if (!Array.isArray(answer.data)) {
        throw new HttpFailure(
          "unusable",
          `${this.forge} listed the ${this.#noun}s without a JSON array`,
        );
      }
      for (const comment of answer.data as unknown[]) {
        const { id, body, system } = _record(comment);
        if (
          _id(id) !== null && system !== true && typeof body === "string" &&
          hasMarker(body, marker) && _author(comment, this.forge) === self
        ) found.push({ id: id as number, body });
      }
      // GitLab may give the next page as X-Next-Page alone.
      const nextPage = answer.headers.get("x-next-page")?.trim() ?? "";
      target = nextLink(answer.headers.get("link")) ??
        (/^\d+$/.test(nextPage) ? `${first}&page=${nextPage}` : null);
    }
    return found;
  }

  async create(body: string, options: RequestOptions = {}): Promise<number> {
    const answer = await this.#http.request("POST", this.#list, { body }, options);
    const id = _id(_record(answer.data).id);
    if (id === null) {
      throw new HttpFailure("unusable", `${this.forge} created a ${this.#noun} without an id`);
    }
    // What the forge says we write as beats the guess (a GitHub App's token is `<app>[bot]`).
    if (this.forge === "GitHub") this.#self = _author(answer.data, "GitHub") ?? this.#self;
    return id;
  }

  async update(id: number, body: string, options: RequestOptions = {}): Promise<void> {
    const method = this.forge === "GitHub" ? "PATCH" : "PUT";
    await this.#http.request(method, `${this.#one}/${id}`, { body }, options);
  }

  async remove(id: number, options: RequestOptions = {}): Promise<void> {
    await this.#http.request("DELETE", `${this.#one}/${id}`, undefined, options);
  }

  // The token's user, `GET /user`: GitLab's project or group access token has a bot user; on
  // GitHub a personal token's login, while the workflow token (and an app's) cannot read it
  // (403) and writes as `github-actions[bot]`.
  async #whoAmI(options: RequestOptions): Promise<string | number | null> {
    if (this.#self !== undefined) return this.#self;
    const user = await tokenUser(this.#http, options);
    this.#self = this.forge === "GitHub"
      ? _author({ user }, "GitHub") ?? "github-actions[bot]"
      : _author({ author: user }, "GitLab");
    return this.#self;
  }
}

// GitHub names a comment's author by `user.login` (compared lower-case), GitLab by `author.id`.
function _author(comment: unknown, forge: "GitHub" | "GitLab"): string | number | null {
  const { user, author } = _record(comment);
  if (forge === "GitLab") {
    const id = _record(author).id;
    return typeof id === "number" && Number.isSafeInteger(id) ? id : null;
  }
  const login = _record(user).login;
  return typeof login === "string" && login !== "" ? login.toLowerCase() : null;
}

function _id(id: unknown): number | null {
  return typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? id : null;
}

function _record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? value as Record<string, unknown> : {};
}
