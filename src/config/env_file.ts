/**
 * Parses a `.env` file's text and lays its values under the environment: a variable set to a
 * non-empty value wins, one unset or empty takes the file's value. Reading the file (and what
 * a missing one means) is `load_config.ts`'s.
 */

/**
 * Parses the text of a `.env` file (the `node:util` `parseEnv` dialect: `KEY=value`, quotes,
 * `#` comments, and an `export ` prefix, which is stripped).
 *
 * @example
 * ```ts
 * await parseEnvFile("SERVICE_API_KEY=sk_test\n# comment\n"); // { SERVICE_API_KEY: "sk_test" }
 * ```
 */
export async function parseEnvFile(text: string): Promise<Record<string, string>> {
  // Loaded only when there is a file to parse: any `node:` import makes Deno load its Node
  // compatibility layer, too slow for every start-up (docs/performance.md).
  const { parseEnv } = await import("node:util");
  return { ...parseEnv(text) } as Record<string, string>;
}

/**
 * Takes `names` from the environment, falling back to the `.env` values for any that is unset or
 * empty. Only the listed names are kept, so nothing else in the environment is ever read.
 *
 * @example
 * ```ts
 * mergeEnv(["A", "B"], (name) => ({ A: "from env" })[name], { A: "from file", B: "file" });
 * // { A: "from env", B: "file" }
 * ```
 */
export function mergeEnv(
  names: readonly string[],
  env: (name: string) => string | undefined,
  dotenv: Readonly<Record<string, string>>,
): Record<string, string | undefined> {
  const merged: Record<string, string | undefined> = {};
  for (const name of names) {
    const value = env(name);
    merged[name] = value !== undefined && value !== "" ? value : dotenv[name];
  }
  return merged;
}
