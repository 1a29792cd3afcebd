/**
 * Parses a `.env` file's text and lays its values under the environment: a variable set to a
 * non-empty value wins, one unset or empty takes the file's value.
 */

/** The `node:util` `parseEnv` dialect: `KEY=value`, quotes, `#` comments, `export ` stripped. */
export async function parseEnvFile(text: string): Promise<Record<string, string>> {
  // Only when there is a file: any `node:` import loads Deno's Node compatibility layer, too
  // slow for every start-up (docs/performance.md).
  const { parseEnv } = await import("node:util");
  return { ...parseEnv(text) } as Record<string, string>;
}

/** Only `names` are read, so nothing else in the environment ever is. */
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
