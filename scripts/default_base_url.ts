/**
 * Bakes a release's built-in service address into `src/default_base_url.ts`, after checking it
 * by the `--base-url` rules, so an invalid address fails the build rather than a user's
 * pipeline. `scripts/build.ts` bakes and restores around `deno compile`; `deno task
 * bake-default` bakes in place (for `deno publish` and the image build in a throwaway checkout).
 *
 * The address comes from `--url <address>` or the `SERVICE_DEFAULT_BASE_URL` variable; empty
 * means none.
 */

import { resolve } from "node:path";
import { parseBaseUrl, UsageError } from "../src/config.ts";

/** The module a release rewrites, relative to the repository root. */
export const DEFAULT_BASE_URL_MODULE = "src/default_base_url.ts";

// The one line of the module that holds the address.
const DECLARATION = /^export const DEFAULT_BASE_URL: string \| undefined = .*;$/m;

/**
 * Checks a built-in service address by the `--base-url` rules and returns it normalised.
 *
 * @example
 * ```ts
 * checkDefaultBaseUrl("https://service.example/"); // "https://service.example/"
 * ```
 *
 * @throws {TypeError} Naming `SERVICE_DEFAULT_BASE_URL` and what would be valid.
 */
export function checkDefaultBaseUrl(url: string): string {
  try {
    return parseBaseUrl(url, "SERVICE_DEFAULT_BASE_URL (the release's built-in service address)")
      .href;
  } catch (error) {
    if (error instanceof UsageError) throw new TypeError(error.message);
    throw error;
  }
}

/**
 * The module's text with the address set (or, for `undefined`, unset).
 *
 * @example
 * ```ts
 * const text = "export const DEFAULT_BASE_URL: string | undefined = undefined;\n";
 * withDefaultBaseUrl(text, "https://service.example/");
 * // 'export const DEFAULT_BASE_URL: string | undefined = "https://service.example/";\n'
 * ```
 *
 * @throws {TypeError} When the text has no such declaration.
 */
export function withDefaultBaseUrl(moduleText: string, url: string | undefined): string {
  if (!DECLARATION.test(moduleText)) {
    throw new TypeError(`${DEFAULT_BASE_URL_MODULE} has no DEFAULT_BASE_URL declaration to set`);
  }
  const value = url === undefined ? "undefined" : JSON.stringify(checkDefaultBaseUrl(url));
  return moduleText.replace(
    DECLARATION,
    `export const DEFAULT_BASE_URL: string | undefined = ${value};`,
  );
}

/**
 * Writes the address into the module under `root` and resolves with a function that puts the
 * module back as it was.
 *
 * @example
 * ```ts
 * const restore = await bakeDefaultBaseUrl(".", "https://service.example");
 * try {
 *   // deno compile …
 * } finally {
 *   await restore();
 * }
 * ```
 */
export async function bakeDefaultBaseUrl(
  root: string,
  url: string,
): Promise<() => Promise<void>> {
  const path = resolve(root, DEFAULT_BASE_URL_MODULE);
  const original = await Deno.readTextFile(path);
  await Deno.writeTextFile(path, withDefaultBaseUrl(original, url));
  return () => Deno.writeTextFile(path, original);
}

/**
 * The address a build is asked to bake in: `--url`/`--default-base-url` if given, else the
 * `SERVICE_DEFAULT_BASE_URL` variable; `undefined` when neither holds one.
 *
 * @example
 * ```ts
 * requestedDefaultBaseUrl("https://flag.example", () => undefined); // "https://flag.example"
 * ```
 */
export function requestedDefaultBaseUrl(
  flag: string | undefined,
  env: (name: string) => string | undefined,
): string | undefined {
  const url = flag ?? env("SERVICE_DEFAULT_BASE_URL");
  return url === undefined || url === "" ? undefined : url;
}

if (import.meta.main) {
  const at = Deno.args.indexOf("--url");
  const flag = at >= 0 ? Deno.args[at + 1] : undefined;
  const url = requestedDefaultBaseUrl(flag, (name) => Deno.env.get(name));
  try {
    if (url === undefined) {
      console.error(
        "bake-default: no address given (--url or SERVICE_DEFAULT_BASE_URL); none baked",
      );
    } else {
      await bakeDefaultBaseUrl(new URL("..", import.meta.url).pathname, url);
      console.error(
        `bake-default: ${DEFAULT_BASE_URL_MODULE} now holds ${checkDefaultBaseUrl(url)}`,
      );
    }
  } catch (error) {
    console.error(`bake-default: ${error instanceof Error ? error.message : String(error)}`);
    Deno.exit(1);
  }
}
