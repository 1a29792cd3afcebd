/** Turns a git remote URL, in any of its forms, into the repository's `owner/name` slug. */

// The userinfo (where tokens live) is matched only to be dropped.
const SCHEME_URL = /^([a-z][a-z0-9+.-]*):\/\/(?:[^/?#]*@)?([^/?#@]*)([^?#]*)/i;
// scp-like; a one-letter "host" is a Windows drive (`C:/src/widgets`), as git itself reads it.
const SCP_LIKE = /^(?:[^@/]+@)?([^/:\\]{2,}):(.+)$/;
const GIT_SCHEMES = new Set(["http", "https", "ssh", "git", "git+ssh", "ssh+git", "git+https"]);
// deno-lint-ignore no-control-regex
const UNSAFE_SEGMENT = /[\s\x00-\x1f\x7f:@?#\\%]/;

/** GitLab subgroups are kept (`group/sub/name`); none for no URL. */
export function repositorySlug(url: string | null | undefined): string | null {
  const text = url?.trim() ?? "";
  const scheme = SCHEME_URL.exec(text);
  if (scheme) {
    const [, protocol = "", hostAndPort = "", path = ""] = scheme;
    if (!GIT_SCHEMES.has(protocol.toLowerCase())) return null;
    // Invalid but common `ssh://git@host:owner/name.git`: a non-numeric "port" starts the path.
    const port = /:([^:]*)$/.exec(hostAndPort)?.[1] ?? "";
    const misplaced = port !== "" && !/^\d+$/.test(port) ? `${port}/` : "";
    return _slugFromPath(misplaced + path);
  }
  const scp = SCP_LIKE.exec(text);
  return scp ? _slugFromPath(scp[2] ?? "") : null;
}

function _slugFromPath(path: string): string | null {
  const trimmed = path.replace(/\/+$/, "").replace(/\.git$/i, "");
  const segments = trimmed.split("/").filter((segment) => segment !== "");
  if (segments.length < 2) return null;
  const safe = segments.every((segment) =>
    segment !== "." && segment !== ".." && !UNSAFE_SEGMENT.test(segment)
  );
  return safe ? segments.join("/") : null;
}
