/** The comments of one pull or merge request, through its forge's {@linkcode ThreadApi}: find ours, create it, edit it. */

import { type ForgeHttp, jsonFields, nextLink, type RequestOptions } from "../http.ts";
import type { ThreadApi } from "../forge.ts";
import { lacksPermission } from "../writes.ts";
import { hasMarker } from "./history.ts";
import { HttpFailure } from "../../http/failure.ts";

// Pages of 100 comments read while looking for the marker.
const _MAX_PAGES = 50;

export interface CommentThread {
  /**
   * Only the token's own comments, oldest first: anyone can post the marker, and GitLab lets
   * only a note's author edit it. A token whose user cannot be read edits nothing.
   */
  find(marker: string, options: RequestOptions): Promise<{ id: number; body: string }[]>;
  create(body: string, options: RequestOptions): Promise<number>;
  update(id: number, body: string, options: RequestOptions): Promise<void>;
  remove(id: number, options: RequestOptions): Promise<void>;
}

export function commentThread(api: ThreadApi, http: ForgeHttp): CommentThread {
  // Who the token writes as; undefined until asked, null when it cannot be known.
  let self: string | number | null | undefined = undefined;

  // The token's user, `GET /user`: none when the token may not read it (403, 404).
  const whoAmI = async (options: RequestOptions) => {
    if (self !== undefined) return self;
    let user: unknown = null;
    try {
      user = (await http.request("GET", "/user", undefined, options)).data;
    } catch (error) {
      if (!lacksPermission(error)) throw error;
    }
    self = api.self(user);
    return self;
  };

  return {
    async find(marker, options) {
      const me = await whoAmI(options);
      if (me === null) return [];
      const found: { id: number; body: string }[] = [];
      let page: string | null = api.firstPage;
      for (let count = 1; page !== null && count <= _MAX_PAGES; count++) {
        const answer = await http.request("GET", page, undefined, options);
        if (!Array.isArray(answer.data)) {
          const what = `${http.forge} listed the ${api.noun}s without a JSON array`;
          throw new HttpFailure("unusable", what);
        }
        for (const comment of answer.data as unknown[]) {
          const { id, body, system } = jsonFields(comment);
          if (
            _id(id) !== null && system !== true && typeof body === "string" &&
            hasMarker(body, marker) && api.author(comment) === me
          ) found.push({ id: id as number, body });
        }
        // GitLab may give the next page as X-Next-Page alone.
        const nextPage = answer.headers.get("x-next-page")?.trim() ?? "";
        page = nextLink(answer.headers.get("link")) ??
          (/^\d+$/.test(nextPage) ? `${api.firstPage}&page=${nextPage}` : null);
      }
      return found;
    },
    async create(body, options) {
      const answer = await http.request("POST", api.list, { body }, options);
      const id = _id(jsonFields(answer.data).id);
      if (id === null) {
        throw new HttpFailure("unusable", `${http.forge} created a ${api.noun} without an id`);
      }
      // What the forge says we write as beats the guess (a GitHub App's token is `<app>[bot]`).
      if (api.createdBySelf) self = api.author(answer.data) ?? self;
      return id;
    },
    async update(id, body, options) {
      await http.request(api.update, `${api.one}/${id}`, { body }, options);
    },
    async remove(id, options) {
      await http.request("DELETE", `${api.one}/${id}`, undefined, options);
    },
  };
}

function _id(id: unknown): number | null {
  return typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? id : null;
}
