/**
 * The service address a release bakes in, so the docs' invocation works as written. The source
 * tree has none (we do not invent the vendor's); `scripts/default_base_url.ts` rewrites it.
 */

export const DEFAULT_BASE_URL: string | undefined = undefined;
