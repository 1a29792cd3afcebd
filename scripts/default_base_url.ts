/**
 * Bakes a release's built-in service address into `src/config/default_base_url.ts`, after checking it
 * by the `--base-url` rules, so an invalid address fails the build rather than a user's
 * pipeline. `scripts/build.ts` bakes and restores around `deno compile`; `deno task
 * bake-default` bakes in place (for `deno publish` and the image build in a throwaway checkout).
 *
 * The address comes from `--url <address>` or the `SERVICE_DEFAULT_BASE_URL` variable; empty
 * means none.
 */

import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { UsageError } from "../src/config/errors.ts";
import { parseBaseUrl } from "../src/config/values.ts";
import { OPTIONS } from "../src/config/options.ts";

/** The module a release rewrites, relative to the repository root. */
export const DEFAULT_BASE_URL_MODULE = "src/config/default_base_url.ts";

// The one line of the module that holds the address.
const DECLARATION = /^export const DEFAULT_BASE_URL: string \| undefined = .*;$/m;

/**
 * Checks a built-in service address by the `--base-url` rules and returns it normalised.
 * `source` is the flag or variable it came from, which the message names.
 *
 * @example
 * ```ts
 * checkDefaultBaseUrl("https://service.example/"); // "https://service.example/"
 * ```
 *
 * @throws {TypeError} Naming `source` (default `SERVICE_DEFAULT_BASE_URL`) and what would be
 * valid.
 */
export function checkDefaultBaseUrl(url: string, source = "SERVICE_DEFAULT_BASE_URL"): string {
  try {
    return parseBaseUrl(
      url,
      `${source} (the release's built-in service address)`,
      OPTIONS.apiKey.variable,
    )
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

/** An address a build is asked to bake in, and the flag or variable that gave it. */
export interface RequestedDefaultBaseUrl {
  /** The address, not yet checked. */
  readonly url: string;
  /** Where it came from: the flag's name (e.g. `--url`) or `SERVICE_DEFAULT_BASE_URL`. */
  readonly source: string;
}

/**
 * The address a build is asked to bake in: the flag's if given (`--url` for `deno task
 * bake-default`, `--default-base-url` for the compile step), else the `SERVICE_DEFAULT_BASE_URL`
 * variable; `undefined` when neither holds one.
 *
 * @example
 * ```ts
 * requestedDefaultBaseUrl({ name: "--url", value: "https://flag.example" }, () => undefined);
 * // { url: "https://flag.example", source: "--url" }
 * ```
 */
export function requestedDefaultBaseUrl(
  flag: { readonly name: string; readonly value: string | undefined },
  env: (name: string) => string | undefined,
): RequestedDefaultBaseUrl | undefined {
  const [url, source] = flag.value !== undefined
    ? [flag.value, flag.name]
    : [env("SERVICE_DEFAULT_BASE_URL"), "SERVICE_DEFAULT_BASE_URL"];
  return url === undefined || url === "" ? undefined : { url, source };
}

/**
 * `deno task bake-default [--url <address>]`: checks the address, then writes it into
 * {@linkcode DEFAULT_BASE_URL_MODULE} under `root`. Returns the exit code: 0 baked (or nothing
 * asked for), 1 an invalid address or module, 2 a usage error.
 *
 * @example
 * ```ts
 * const code = await main(["--url", "https://service.example"], { root: "." });
 * ```
 */
export async function main(
  args: readonly string[],
  options: { readonly root: string; readonly env?: (name: string) => string | undefined },
): Promise<number> {
  let flag: string | undefined;
  try {
    flag = parseArgs({ args: [...args], options: { url: { type: "string" } }, strict: true })
      .values.url;
  } catch (error) {
    console.error(`bake-default: ${error instanceof Error ? error.message : String(error)}`);
    console.error("usage: deno task bake-default [--url <address>]");
    return 2;
  }
  const requested = requestedDefaultBaseUrl(
    { name: "--url", value: flag },
    options.env ?? ((name) => Deno.env.get(name)),
  );
  if (requested === undefined) {
    console.error("bake-default: no address given (--url or SERVICE_DEFAULT_BASE_URL); none baked");
    return 0;
  }
  try {
    const url = checkDefaultBaseUrl(requested.url, requested.source);
    await bakeDefaultBaseUrl(options.root, url);
    console.error(
      `bake-default: ${DEFAULT_BASE_URL_MODULE} now holds ${url} (from ${requested.source})`,
    );
    return 0;
  } catch (error) {
    console.error(`bake-default: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args, { root: fileURLToPath(new URL("..", import.meta.url)) }));
}
