/** Every forge service-ci writes to, found by the CI a build runs in or by its name. */

import { bitbucket } from "./bitbucket.ts";
import type { Forge, ForgeUse } from "./forge.ts";
import { github } from "./github.ts";
import { gitlab } from "./gitlab.ts";

/** In the order their CIs are named in a line. */
export const FORGES: readonly Forge[] = [github, gitlab, bitbucket];

/** The forge a build of `provider` writes `use` to, if any. */
export function forgeOf(provider: string, use: ForgeUse): Forge | undefined {
  if (use === "insights") return FORGES.find((forge) => forge.codeInsights);
  return FORGES.find((forge) =>
    forge.provider === provider && (use !== "comment" || forge.comment !== undefined)
  );
}

/** @throws {TypeError} For a name no forge has. */
export function forgeNamed(name: string): Forge {
  const forge = FORGES.find((forge) => forge.name === name);
  if (forge === undefined) throw new TypeError(`No forge is named ${name}`);
  return forge;
}
