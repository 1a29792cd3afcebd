/** The program's version, read from deno.json so that file stays its single source. */

import denoConfig from "../../deno.json" with { type: "json" };

/** service-ci's version, e.g. `1.0.0`. */
export const VERSION: string = denoConfig.version;

/**
 * Where service-ci's source, releases and docs live; `--help` links to the docs of this
 * version under it.
 */
export const REPOSITORY_URL = "https://github.com/service-ci/service-ci";

/**
 * The `User-Agent` header value: `service-ci/<version> (<os>; <arch>)`.
 *
 * @example
 * ```ts
 * userAgent(); // "service-ci/1.0.0 (linux; x86_64)"
 * ```
 */
export function userAgent(): string {
  return `service-ci/${VERSION} (${Deno.build.os}; ${Deno.build.arch})`;
}
