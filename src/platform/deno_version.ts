/**
 * The oldest Deno that runs service-ci. `main.ts` asks before loading anything else, so this module
 * imports nothing and uses no API past Deno 1.x: an old Deno gets one line, not a failed gate's 1.
 */

// Deno 2.0 reads `--allow-env=SERVICE_*` as one variable (wildcards came in 2.1.0), so the key
// would read as unset; Deno 1.x lacks `Deno.errors.NotCapable`.
export const MINIMUM_DENO_VERSION = "2.1.0";

/** A version that is not `major.minor.patch` (suffix aside) is let through: not known as old. */
export function denoVersionRefusal(found: string): string | undefined {
  const need = _parts(MINIMUM_DENO_VERSION)!;
  const have = _parts(found) ?? need;
  const first = have.findIndex((part, i) => part !== need[i]);
  if (first === -1 || have[first]! > need[first]!) return undefined;
  return `service-ci: Deno ${found} is older than ${MINIMUM_DENO_VERSION}, the oldest that runs service-ci: upgrade Deno (deno upgrade, or npx --yes deno@${MINIMUM_DENO_VERSION} or later) or use the release binary, which needs no Deno (docs/install.md)`;
}

function _parts(version: string): number[] | undefined {
  return /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(version)?.slice(1).map(Number);
}
