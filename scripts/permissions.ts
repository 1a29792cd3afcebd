/**
 * The program's one permission set, deno.json's `"permissions"."default"` (what `-P` grants in
 * `deno run` and `deno compile`), spelled out as `--allow-*` flags for where no config file is
 * read: running from a URL, and the documented commands, which a test checks against it.
 */

/** The kinds of permission the set may grant; anything else in it is refused. */
const KINDS = ["net", "read", "write", "run", "env", "sys", "ffi", "import"] as const;

/**
 * The `--allow-*` flags that grant exactly deno.json's default permission set, in the set's
 * order: `true` is a bare flag, a list is `--allow-<kind>=a,b`.
 *
 * @example
 * ```ts
 * permissionFlags('{"permissions": {"default": {"net": true, "run": ["git"]}}}');
 * // ["--allow-net", "--allow-run=git"]
 * ```
 *
 * @throws {TypeError} Naming the key at fault when the set is missing, grants everything
 * (`"all"`), or holds a kind or value it should not.
 */
export function permissionFlags(denoJson: string): string[] {
  const config = JSON.parse(denoJson) as { permissions?: Record<string, unknown> };
  const set = config.permissions?.default;
  if (typeof set !== "object" || set === null || Array.isArray(set)) {
    throw new TypeError('deno.json must hold a "permissions": {"default": {…}} permission set');
  }
  const flags: string[] = [];
  for (const [kind, value] of Object.entries(set)) {
    if (!(KINDS as readonly string[]).includes(kind)) {
      throw new TypeError(
        `deno.json's default permission set may grant only ${KINDS.join(", ")} (got "${kind}")`,
      );
    }
    if (value === true) {
      flags.push(`--allow-${kind}`);
    } else if (
      Array.isArray(value) && value.length > 0 &&
      value.every((item) => typeof item === "string" && item !== "" && !item.includes(","))
    ) {
      flags.push(`--allow-${kind}=${value.join(",")}`);
    } else if (value !== false) {
      throw new TypeError(
        `deno.json's default permission set: "${kind}" must be true, false or a list of names (got ${
          JSON.stringify(value)
        })`,
      );
    }
  }
  if (flags.length === 0) throw new TypeError("deno.json's default permission set grants nothing");
  return flags;
}
