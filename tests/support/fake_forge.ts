/**
 * Fake GitHub and GitLab comment APIs on loopback: the endpoints the pull-request comment uses,
 * with real authentication checks, pagination, a request log, and scripted faults.
 *
 * ```ts
 * await using github = await startFakeGithub({ comments: 250 });
 * ```
 */

/** Tokens the fakes accept by default. */
export const FORGE_TOKENS = {
  github: "ghs_fakeGithubToken0123456789",
  gitlab: "glpat-fakeGitlabToken0123456789",
} as const;

/** The pull request / merge request the fakes hold, and where. */
export const FORGE_TARGET = {
  repository: "acme/widgets",
  pullRequest: 42,
  projectId: "1234",
  mergeRequest: 7,
} as const;

/** The commits of the pull request the fake forges' runs are about: its head, GitHub's merge commit. */
export const FORGE_COMMITS = {
  head: "4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c",
  merge: "0000000000000000000000000000000000000001",
  /** Where the runs' event payload is read (the tests answer that path themselves). */
  eventPath: "/github/event.json",
} as const;

/**
 * A GitLab CI merge-request pipeline, with `--commit-status` on and the CI's own channels off:
 * `CI_COMMIT_SHA` is the merge commit, the merge request's head is `FORGE_COMMITS.head`, the
 * token is `FORGE_TOKENS.gitlab` and the API is at `apiUrl`.
 *
 * @example
 * ```ts
 * const env = gitlabMergeRequestEnv("http://127.0.0.1:8080/api/v4", { CI_PIPELINE_ID: "4242" });
 * ```
 */
export function gitlabMergeRequestEnv(
  apiUrl: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    SERVICE_COMMIT_STATUS: "true",
    SERVICE_CI_NATIVE: "false",
    GITLAB_CI: "true",
    CI: "true",
    CI_PROJECT_ID: FORGE_TARGET.projectId,
    CI_PROJECT_PATH: FORGE_TARGET.repository,
    CI_MERGE_REQUEST_IID: String(FORGE_TARGET.mergeRequest),
    CI_MERGE_REQUEST_SOURCE_BRANCH_SHA: FORGE_COMMITS.head,
    CI_COMMIT_SHA: FORGE_COMMITS.merge,
    CI_API_V4_URL: apiUrl,
    CI_JOB_URL: "https://gitlab.example/acme/widgets/-/jobs/7",
    SERVICE_GITLAB_TOKEN: FORGE_TOKENS.gitlab,
    ...extra,
  };
}

/**
 * A GitHub Actions job on a `pull_request` event, with `--commit-status` on and the CI's own
 * channels off: `GITHUB_SHA` is the merge commit, the event at `FORGE_COMMITS.eventPath` holds
 * the head, the token is `FORGE_TOKENS.github` and the API is at `apiUrl`.
 *
 * @example
 * ```ts
 * const env = githubPullRequestEnv("http://127.0.0.1:8080", { GITHUB_EVENT_NAME: "merge_group" });
 * ```
 */
export function githubPullRequestEnv(
  apiUrl: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    SERVICE_COMMIT_STATUS: "true",
    SERVICE_CI_NATIVE: "false",
    ...githubPullRequestJob({
      apiUrl,
      eventPath: FORGE_COMMITS.eventPath,
      sha: FORGE_COMMITS.merge,
      pullRequest: FORGE_TARGET.pullRequest,
      repository: FORGE_TARGET.repository,
      token: FORGE_TOKENS.github,
    }),
    GITHUB_WORKFLOW: "ci",
    GITHUB_JOB: "gate",
    ...extra,
  };
}

/**
 * The variables GitHub Actions sets for a job on a `pull_request` event (run 1001 on github.com):
 * `sha` is the merge commit, the event file at `eventPath` holds the head.
 *
 * @example
 * ```ts
 * const env = githubPullRequestJob({
 *   apiUrl: "http://127.0.0.1:8080",
 *   eventPath: "/tmp/event.json",
 *   sha: "0000000000000000000000000000000000000001",
 *   pullRequest: 42,
 *   repository: "acme/app",
 *   token: "ghs_test",
 * });
 * ```
 */
export function githubPullRequestJob(job: {
  readonly apiUrl: string;
  readonly eventPath: string;
  readonly sha: string;
  readonly pullRequest: number;
  readonly repository: string;
  readonly token: string;
}): Record<string, string> {
  return {
    GITHUB_ACTIONS: "true",
    GITHUB_EVENT_NAME: "pull_request",
    GITHUB_EVENT_PATH: job.eventPath,
    GITHUB_SHA: job.sha,
    GITHUB_REF: `refs/pull/${job.pullRequest}/merge`,
    GITHUB_REPOSITORY: job.repository,
    GITHUB_TOKEN: job.token,
    GITHUB_API_URL: job.apiUrl,
    GITHUB_SERVER_URL: "https://github.com",
    GITHUB_RUN_ID: "1001",
  };
}

/** Who wrote comments: the workflow token's bot on GitHub, the token's user on GitLab. */
export const FORGE_IDENTITIES = {
  /** GitHub's workflow token (`GET /user` answers 403) writes as this bot. */
  githubBot: "github-actions[bot]",
  /** The GitLab token's user (`GET /user`). */
  gitlabUser: { id: 77, username: "project_1234_bot" },
  /** Somebody else: a pull request's author, say. */
  stranger: { login: "mallory", id: 666 },
} as const;

/** A comment (GitHub) or note (GitLab) the fake holds. */
export interface FakeComment {
  readonly id: number;
  body: string;
  /** GitLab system notes ("added 1 commit"). */
  readonly system?: boolean;
  /**
   * Who wrote it: a GitHub login or a GitLab user id; default the token's own identity (so a
   * comment written by an earlier run of the gate).
   */
  readonly author?: string | number;
}

/** A request the fake received, as received. */
export interface ForgeRequest {
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** A scripted answer for the next `times` requests it matches (default 1). */
export interface ForgeScriptRule {
  readonly method?: string;
  /** Matches the path and query (a string is a substring). */
  readonly path?: string | RegExp;
  readonly times?: number;
  /** Makes the answer; `next()` is what the fake would have answered. */
  readonly answer: (
    request: Request,
    next: () => Promise<Response>,
  ) => Response | Promise<Response>;
}

/** Options of {@linkcode startFakeGithub} and {@linkcode startFakeGitlab}. */
export interface FakeForgeOptions {
  /** The token accepted; default the forge's entry of {@linkcode FORGE_TOKENS}. */
  readonly token?: string;
  /** Comments already there: a list, or a count of unrelated ones to make. */
  readonly comments?: readonly FakeComment[] | number;
  /** The token may read but not write (403), like a fork's pull request token. */
  readonly readOnly?: boolean;
  /** GitLab: paginate with `Link` as well as `x-next-page` (default only `x-next-page`). */
  readonly linkHeader?: boolean;
  /**
   * GitHub: the token is a personal token of this login (`GET /user` answers it); default the
   * workflow token, whose `GET /user` answers 403 and whose comments are by `github-actions[bot]`.
   */
  readonly user?: string;
}

/** A running fake forge. Use with `await using`. */
export class FakeForge implements AsyncDisposable {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** The API root to configure: the origin (GitHub) or `<origin>/api/v4` (GitLab). */
  readonly apiUrl: string;
  /** Every request received, in order. */
  readonly requests: ForgeRequest[] = [];
  /** The comments, oldest first. */
  readonly comments: FakeComment[];
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #rules: { rule: ForgeScriptRule; left: number }[] = [];

  /** Use {@linkcode startFakeGithub} or {@linkcode startFakeGitlab}. */
  constructor(
    server: Deno.HttpServer<Deno.NetAddr>,
    apiPath: string,
    comments: FakeComment[],
  ) {
    this.#server = server;
    this.origin = `http://127.0.0.1:${server.addr.port}`;
    this.apiUrl = `${this.origin}${apiPath}`;
    this.comments = comments;
  }

  /** Adds a scripted answer; rules are tried in the order added. */
  script(rule: ForgeScriptRule): void {
    this.#rules.push({ rule, left: rule.times ?? 1 });
  }

  /** @internal The first rule matching `request`, used up by one. */
  takeRule(request: Request, path: string): ForgeScriptRule | undefined {
    // A rule without a path is about comments: the identity look-up needs a rule naming it.
    const identity = /^(?:\/api\/v4)?\/user$/.test(path);
    const entry = this.#rules.find(({ rule, left }) =>
      left > 0 && (rule.method === undefined || rule.method === request.method) &&
      (rule.path === undefined
        ? !identity
        : typeof rule.path === "string"
        ? path.includes(rule.path)
        : rule.path.test(path))
    );
    if (entry) entry.left--;
    return entry?.rule;
  }

  /** The requests about comments: all but the look-up of the token's identity (`GET /user`). */
  get commentRequests(): ForgeRequest[] {
    return this.requests.filter((request) => !/^(?:\/api\/v4)?\/user$/.test(request.path));
  }

  /** The look-ups of the token's identity (`GET /user`). */
  get identityRequests(): ForgeRequest[] {
    return this.requests.filter((request) => /^(?:\/api\/v4)?\/user$/.test(request.path));
  }

  /** The requests that changed something (POST, PATCH, PUT). */
  get writes(): ForgeRequest[] {
    return this.requests.filter((request) => request.method !== "GET");
  }

  /** Stops the server. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#server.shutdown();
  }
}

/**
 * Starts a fake GitHub REST API with one pull request (#42 of acme/widgets): list its issue
 * comments (`per_page`, `page`, `Link` with `rel="next"`), create one, edit one.
 */
export function startFakeGithub(options: FakeForgeOptions = {}): Promise<FakeForge> {
  const token = options.token ?? FORGE_TOKENS.github;
  const repo = `/repos/${FORGE_TARGET.repository}`;
  const list = `${repo}/issues/${FORGE_TARGET.pullRequest}/comments`;
  return _start(options, "", (forge, request, url, body) => {
    if (request.headers.get("authorization") !== `Bearer ${token}`) {
      return _json(401, { message: "Bad credentials" });
    }
    if (!request.headers.get("user-agent")) {
      return _json(403, { message: "Request forbidden by administrative rules." });
    }
    const self = options.user ?? FORGE_IDENTITIES.githubBot;
    if (url.pathname === "/user" && request.method === "GET") {
      return options.user === undefined
        ? _json(403, { message: "Resource not accessible by integration" })
        : _json(200, { login: options.user, type: "User" });
    }
    const shown = (comment: FakeComment) => {
      const login = typeof comment.author === "string" ? comment.author : self;
      return { ...comment, user: { login, type: login.endsWith("[bot]") ? "Bot" : "User" } };
    };
    if (url.pathname === list && request.method === "GET") {
      return _page(forge, url, "per_page", true, shown);
    }
    if (url.pathname === list && request.method === "POST") {
      return _write(options, body, (text) => {
        const comment = { id: _nextId(forge), body: text, author: self };
        forge.comments.push(comment);
        return _json(201, shown(comment));
      });
    }
    const edit = new RegExp(`^${repo}/issues/comments/(\\d+)$`).exec(url.pathname);
    if (edit && request.method === "PATCH") {
      return _write(options, body, (text) => {
        const comment = forge.comments.find((each) => each.id === Number(edit[1]));
        if (!comment) return _json(404, { message: "Not Found" });
        // As on GitHub, a token that may write to the repository may edit anyone's comment:
        // only the gate's own rule keeps it from doing so.
        comment.body = text;
        return _json(200, shown(comment));
      });
    }
    if (edit && request.method === "DELETE") {
      if (options.readOnly) {
        return _json(403, { message: "Resource not accessible by integration" });
      }
      const index = forge.comments.findIndex((each) => each.id === Number(edit[1]));
      if (index < 0) return _json(404, { message: "Not Found" });
      forge.comments.splice(index, 1);
      return new Response(null, { status: 204 });
    }
    return _json(404, { message: "Not Found" });
  });
}

/**
 * Starts a fake GitLab REST API v4 with one merge request (!7 of project 1234): list its notes
 * (`per_page`, `page`, `x-next-page`), create one, edit one.
 */
export function startFakeGitlab(options: FakeForgeOptions = {}): Promise<FakeForge> {
  const token = options.token ?? FORGE_TOKENS.gitlab;
  const notes =
    `/api/v4/projects/${FORGE_TARGET.projectId}/merge_requests/${FORGE_TARGET.mergeRequest}/notes`;
  return _start(options, "/api/v4", (forge, request, url, body) => {
    if (request.headers.get("private-token") !== token) {
      return _json(401, { message: "401 Unauthorized" });
    }
    const self = FORGE_IDENTITIES.gitlabUser;
    if (url.pathname === "/api/v4/user" && request.method === "GET") return _json(200, self);
    const shown = (note: FakeComment) => {
      const id = typeof note.author === "number" ? note.author : self.id;
      return { ...note, author: { id, username: id === self.id ? self.username : `user${id}` } };
    };
    if (url.pathname === notes && request.method === "GET") {
      return _page(forge, url, "per_page", options.linkHeader ?? false, shown);
    }
    if (url.pathname === notes && request.method === "POST") {
      return _write(options, body, (text) => {
        const note = { id: _nextId(forge), body: text, system: false, author: self.id };
        forge.comments.push(note);
        return _json(201, shown(note));
      });
    }
    const edit = new RegExp(`^${notes}/(\\d+)$`).exec(url.pathname);
    if (edit && request.method === "PUT") {
      return _write(options, body, (text) => {
        const note = forge.comments.find((each) => each.id === Number(edit[1]));
        if (!note) return _json(404, { message: "404 Not found" });
        // GitLab lets only a note's author edit it.
        if ((typeof note.author === "number" ? note.author : self.id) !== self.id) {
          return _json(403, { message: "403 Forbidden" });
        }
        note.body = text;
        return _json(200, shown(note));
      });
    }
    if (edit && request.method === "DELETE") {
      const index = forge.comments.findIndex((each) => each.id === Number(edit[1]));
      if (index < 0) return _json(404, { message: "404 Not found" });
      const note = forge.comments[index]!;
      if ((typeof note.author === "number" ? note.author : self.id) !== self.id) {
        return _json(403, { message: "403 Forbidden" });
      }
      forge.comments.splice(index, 1);
      return new Response(null, { status: 204 });
    }
    return _json(404, { message: "404 Not Found" });
  });
}

type _Handler = (forge: FakeForge, request: Request, url: URL, body: string) => Response;

async function _start(
  options: FakeForgeOptions,
  apiPath: string,
  handle: _Handler,
): Promise<FakeForge> {
  const comments: FakeComment[] = typeof options.comments === "number"
    ? Array.from({ length: options.comments }, (_, index) => ({
      id: 1000 + index,
      body: `unrelated comment ${index + 1}`,
    }))
    : (options.comments ?? []).map((comment) => ({ ...comment }));
  // The handler runs only after the server is listening and the fake exists.
  const holder: { forge?: FakeForge } = {};
  const { promise: listening, resolve } = Promise.withResolvers<void>();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: () => resolve(),
  }, async (request) => {
    const url = new URL(request.url);
    const path = `${url.pathname}${url.search}`;
    const body = await request.text();
    holder.forge!.requests.push({
      method: request.method,
      path,
      headers: Object.fromEntries(request.headers),
      body,
    });
    const next = () =>
      Promise.resolve(
        url.pathname.startsWith(`${apiPath}/`)
          ? handle(holder.forge!, request, url, body)
          : _json(404, { message: "Not Found" }),
      );
    const rule = holder.forge!.takeRule(request, path);
    return rule ? await rule.answer(request, next) : await next();
  });
  await listening;
  holder.forge = new FakeForge(server, apiPath, comments);
  return holder.forge;
}

function _page(
  forge: FakeForge,
  url: URL,
  sizeParameter: string,
  link: boolean,
  shown: (comment: FakeComment) => unknown,
): Response {
  const size = Math.min(100, Math.max(1, Number(url.searchParams.get(sizeParameter) ?? 30)));
  const page = Math.max(1, Number(url.searchParams.get("page") ?? 1));
  const items = forge.comments.slice((page - 1) * size, page * size);
  const more = page * size < forge.comments.length;
  const headers: Record<string, string> = { "x-next-page": more ? String(page + 1) : "" };
  if (more && link) {
    const next = new URL(url);
    next.searchParams.set("page", String(page + 1));
    headers.link = `<${next.href}>; rel="next", <${url.origin}${url.pathname}?page=99>; rel="last"`;
  }
  return _json(200, items.map(shown), headers);
}

function _write(
  options: FakeForgeOptions,
  body: string,
  apply: (text: string) => Response,
): Response {
  if (options.readOnly) return _json(403, { message: "Resource not accessible by integration" });
  let text: unknown;
  try {
    text = (JSON.parse(body) as { body?: unknown }).body;
  } catch {
    return _json(400, { message: "Problems parsing JSON" });
  }
  if (typeof text !== "string" || text === "") {
    return _json(422, { message: "body is missing" });
  }
  if (text.length > 65_536) return _json(422, { message: "Body is too long (maximum is 65536)" });
  return apply(text);
}

function _nextId(forge: FakeForge): number {
  return Math.max(5000, ...forge.comments.map((comment) => comment.id)) + 1;
}

function _json(status: number, data: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(data), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
