/** The Markdown files a user reads: README.md, SECURITY.md, CHANGELOG.md and all of docs/. */

import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root, with a trailing separator. */
export const ROOT: string = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Every Markdown file a user reads, as paths relative to the repository root.
 *
 * @example
 * ```ts
 * userDocs().includes("README.md"); // true
 * ```
 */
export function userDocs(): string[] {
  const files = ["README.md", "SECURITY.md", "CHANGELOG.md"];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(join(ROOT, dir))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) walk(path);
      else if (entry.name.endsWith(".md")) files.push(path);
    }
  };
  walk("docs");
  return files;
}
