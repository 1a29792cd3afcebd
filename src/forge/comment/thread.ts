/**
 * The comments of one pull request (GitHub's REST API, where a pull request is an issue) or merge
 * request (GitLab's REST API v4, where they are notes): find ours, create it, edit it.
 */

import { type ForgeHttp, nextLink, type RequestOptions } from "../http.ts";
import { lacksPermission } from "../status/commit_status.ts";
import type { ForgeTarget } from "../target.ts";
import { hasMarker } from "./history.ts";
import { HttpFailure } from "../../http/failure.ts";

// Pages of 100 comments read while looking for the marker.
const _MAX_PAGES = 50;

export interface CommentThread {
  readonly forge: "GitHub" | "GitLab";
  /**
   * Only the token's own comments, oldest first: anyone can post the marker, and GitLab lets
   * only a note's author edit it. A GitLab token whose user cannot be read edits nothing.
   */
  find(marker: string, options: RequestOptions): Promise<{ id: number; body: string }[]>;
  create(body: string, options: RequestOptions): Promise<number>;
  update(id: number, body: string, options: RequestOptions): Promise<void>;
  remove(id: number, options: RequestOptions): Promise<void>;
}

/** The target of a comment: its repository is checked and its `change` set. */
export function commentThread(target: ForgeTarget, http: ForgeHttp): CommentThread {
  const forge: "GitHub" | "GitLab" = target.forge === "GitLab" ? "GitLab" : "GitHub";
  const noun = forge === "GitLab" ? "note" : "comment";
  const repo = `/repos/${target.repository.split("/").map(encodeURIComponent).join("/")}`;
  // Where the list is read and a comment created; where one comment is edited or deleted.
  const project = `/projects/${encodeURIComponent(target.repository.trim())}`;
  const list = forge === "GitLab"
    ? `${project}/merge_requests/${target.change}/notes`
    : `${repo}/issues/${target.change}/comments`;
  const one = forge === "GitLab" ? list : `${repo}/issues/comments`;
  // Who the token writes as: GitHub's login (lower-case) or GitLab's user id; undefined until
  // asked, null when GitLab's cannot be read.
  let self: string | number | null | undefined = undefined;

  // The token's user, `GET /user`: GitLab's project or group access token has a bot user; on
  // GitHub a personal token's login, while the workflow token (and an app's) cannot read it
  // (403) and writes as `github-actions[bot]`.
  const whoAmI = async (options: RequestOptions) => {
    if (self !== undefined) return self;
    let user: unknown = null;
    try {
      user = (await http.request("GET", "/user", undefined, options)).data;
    } catch (error) {
      // None when the token may not read it (403, 404: GitHub's workflow token).
      if (!lacksPermission(error)) throw error;
    }
    self = forge === "GitHub"
      ? _author({ user }, "GitHub") ?? "github-actions[bot]"
      : _author({ author: user }, "GitLab");
    return self;
  };

  return {
    forge,
    async find(marker, options) {
      const me = await whoAmI(options);
      if (me === null) return [];
      const found: { id: number; body: string }[] = [];
      const first = forge === "GitHub"
        ? `${list}?per_page=100`
        : `${list}?per_page=100&sort=asc&order_by=created_at`;
      let page: string | null = first;
      for (let count = 1; page !== null && count <= _MAX_PAGES; count++) {
        const answer = await http.request("GET", page, undefined, options);
        if (!Array.isArray(answer.data)) {
          throw new HttpFailure("unusable", `${forge} listed the ${noun}s without a JSON array`);
        }
        for (const comment of answer.data as unknown[]) {
          const { id, body, system } = _record(comment);
          if (
            _id(id) !== null && system !== true && typeof body === "string" &&
            hasMarker(body, marker) && _author(comment, forge) === me
          ) found.push({ id: id as number, body });
        }
        // GitLab may give the next page as X-Next-Page alone.
        const nextPage = answer.headers.get("x-next-page")?.trim() ?? "";
        page = nextLink(answer.headers.get("link")) ??
          (/^\d+$/.test(nextPage) ? `${first}&page=${nextPage}` : null);
      }
      return found;
    },
    async create(body, options) {
      const answer = await http.request("POST", list, { body }, options);
      const id = _id(_record(answer.data).id);
      if (id === null) {
        throw new HttpFailure("unusable", `${forge} created a ${noun} without an id`);
      }
      // What the forge says we write as beats the guess (a GitHub App's token is `<app>[bot]`).
      if (forge === "GitHub") self = _author(answer.data, "GitHub") ?? self;
      return id;
    },
    async update(id, body, options) {
      await http.request(forge === "GitHub" ? "PATCH" : "PUT", `${one}/${id}`, { body }, options);
    },
    async remove(id, options) {
      await http.request("DELETE", `${one}/${id}`, undefined, options);
    },
  };
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
