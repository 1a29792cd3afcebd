/**
 * The service address a release bakes in, so the service docs' invocation (`--agent` and the
 * key, nothing else) works as written. The source tree has none: we do not invent the vendor's
 * address. `scripts/build.ts` (and `deno task bake-default`) rewrite this one line from the
 * release's `SERVICE_DEFAULT_BASE_URL` setting, after checking it by the `--base-url` rules.
 */

/** The built-in service address, or `undefined` when this build has none. */
export const DEFAULT_BASE_URL: string | undefined = undefined;
