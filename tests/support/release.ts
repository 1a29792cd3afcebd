/**
 * A fake GitHub release of service-ci for the tests of install.sh and the action: the target
 * install.sh picks on this machine, checksums, and a server on 127.0.0.1 that serves release
 * files where GitHub does.
 */

import type { Target } from "../../scripts/build.ts";

/** The target install.sh picks on this machine (it reads uname; Deno knows the same). */
export const HOST_TARGET = `${Deno.build.arch}-${
  Deno.build.os === "darwin" ? "apple-darwin" : "unknown-linux-gnu"
}` as Target;

/**
 * The SHA-256 of `bytes`, in lowercase hex as SHA256SUMS writes it.
 *
 * @example
 * ```ts
 * const hex = await sha256Hex(new TextEncoder().encode("archive bytes"));
 * hex.length; // 64
 * ```
 */
export async function sha256Hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** A running {@linkcode serveRelease} server. */
export interface ReleaseServer extends AsyncDisposable {
  /** The base URL to give as SERVICE_CI_DOWNLOAD_URL. */
  readonly url: string;
  /** The paths requested, in order. */
  readonly requested: readonly string[];
  /** The User-Agent of each request, in order. */
  readonly userAgents: readonly string[];
}

/** Options of {@linkcode serveRelease}. */
export interface ReleaseOptions {
  /** The only version served under /releases/download/v<version>/; default any version. */
  readonly version?: string;
}

/**
 * Serves `files` (by name) under /releases/download/v<version>/ and /releases/latest/download/,
 * as GitHub serves a release that is also the latest; anything else is a 404.
 *
 * @example
 * ```ts
 * const archive = "service-ci-1.2.3-x86_64-unknown-linux-gnu.tar.gz";
 * const bytes = new TextEncoder().encode("archive bytes");
 * const sums = new TextEncoder().encode(`${await sha256Hex(bytes)}  ${archive}\n`);
 * await using server = serveRelease({ SHA256SUMS: sums, [archive]: bytes }, { version: "1.2.3" });
 * ```
 */
export function serveRelease(
  files: Readonly<Record<string, Uint8Array<ArrayBuffer>>>,
  options: ReleaseOptions = {},
): ReleaseServer {
  const tag = options.version === undefined
    ? "v[^/]+"
    : `v${options.version.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`;
  const release = new RegExp(`^/releases/(?:download/${tag}|latest/download)/([^/]+)$`);
  const requested: string[] = [];
  const userAgents: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) => {
      const path = new URL(request.url).pathname;
      requested.push(path);
      userAgents.push(request.headers.get("user-agent") ?? "");
      const name = release.exec(path)?.[1];
      const body = name === undefined ? undefined : files[name];
      return body === undefined
        ? new Response("not found", { status: 404 })
        : new Response(body, { headers: { "content-type": "application/octet-stream" } });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/releases`,
    requested,
    userAgents,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}
