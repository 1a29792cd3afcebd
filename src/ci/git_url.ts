/** Turns a git remote URL, in any of its forms, into the repository's `owner/name` slug. */

// `scheme://[userinfo@]host[:port]/path`; the userinfo (where tokens live) is matched only to be dropped.
const SCHEME_URL = /^([a-z][a-z0-9+.-]*):\/\/(?:[^/?#]*@)?([^/?#@]*)([^?#]*)/i;
// scp-like `[user@]host:path`; a host never holds `/` or `:`, and a one-letter "host" is a
// Windows drive (`C:/src/widgets`), as git itself reads it.
const SCP_LIKE = /^(?:[^@/]+@)?([^/:\\]{2,}):(.+)$/;
// Remotes that name a repository on a host; `file://`, `s3://`, `arn:…` and the like do not.
const GIT_SCHEMES = new Set(["http", "https", "ssh", "git", "git+ssh", "ssh+git", "git+https"]);
// A segment that could be an owner, group or repository name, and could not smuggle anything else in.
// deno-lint-ignore no-control-regex
const UNSAFE_SEGMENT = /[\s\x00-\x1f\x7f:@?#\\%]/;

/**
 * The `owner/name` slug of a git remote URL: the repository's path on its host, without a
 * trailing `.git`. GitLab subgroups are kept (`group/sub/name`). Credentials in the URL
 * (`https://user:token@host/…`) are dropped and never part of the result.
 *
 * Accepts `https://host/owner/name(.git)`, `ssh://git@host[:port]/owner/name.git`,
 * `git://…` and the scp-like `git@host:owner/name.git`. Anything else (a local path, a
 * `file://` URL, fewer than two path segments) gives `null`.
 *
 * @example
 * ```ts
 * repositorySlug("https://gitlab-ci-token:secret@gitlab.com/group/sub/name.git"); // "group/sub/name"
 * repositorySlug("git@github.com:acme/widgets.git"); // "acme/widgets"
 * repositorySlug("/srv/git/widgets.git"); // null
 * ```
 */
export function repositorySlug(url: string): string | null {
  const text = url.trim();
  const scheme = SCHEME_URL.exec(text);
  if (scheme) {
    const [, protocol = "", hostAndPort = "", path = ""] = scheme;
    if (!GIT_SCHEMES.has(protocol.toLowerCase())) return null;
    // `ssh://git@host:owner/name.git` is not a valid URL but is common: a "port" that is not
    // a number is the first path segment.
    const port = /:([^:]*)$/.exec(hostAndPort)?.[1] ?? "";
    const misplaced = port !== "" && !/^\d+$/.test(port) ? `${port}/` : "";
    return _slugFromPath(misplaced + path);
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return null;
  const scp = SCP_LIKE.exec(text);
  return scp ? _slugFromPath(scp[2] ?? "") : null;
}

function _slugFromPath(path: string): string | null {
  const segments = path.replace(/\/+$/, "").replace(/\.git$/i, "").split("/").filter((s) =>
    s !== ""
  );
  if (segments.length < 2) return null;
  const safe = segments.every((segment) =>
    segment !== "." && segment !== ".." && !UNSAFE_SEGMENT.test(segment)
  );
  return safe ? segments.join("/") : null;
}
