/**
 * The oldest Deno that runs service-ci, and the refusal of an older one. `main.ts` asks this
 * before it loads anything else, so this module imports nothing and uses no API newer than Deno
 * 1.x: an old Deno must get this one line, not a crash that exits 1 like a failed gate.
 */

/**
 * The oldest Deno release service-ci runs on from source (a URL, a mirror, JSR). Deno 2.0 reads
 * `--allow-env=SERVICE_*` as one variable named `SERVICE_*` (wildcards came in 2.1.0), so the
 * key would read as unset; Deno 1.x lacks `Deno.errors.NotCapable`.
 * `tests/e2e/deno_versions_test.ts` runs the gate on this release and refuses the one before it.
 */
export const MINIMUM_DENO_VERSION = "2.1.0";

/**
 * The one-line refusal of Deno `found` when it is older than {@linkcode MINIMUM_DENO_VERSION},
 * naming both and the two ways out; `undefined` when `found` runs service-ci. A version that is
 * not `major.minor.patch` (a canary build's suffix aside) is let through: it is not known to be
 * old.
 *
 * @example
 * ```ts
 * denoVersionRefusal("2.9.6"); // undefined
 * denoVersionRefusal("2.0.6")?.startsWith("service-ci: Deno 2.0.6 is older than 2.1.0"); // true
 * ```
 */
export function denoVersionRefusal(found: string): string | undefined {
  const have = _parts(found);
  const need = _parts(MINIMUM_DENO_VERSION)!;
  if (have === undefined) return undefined;
  for (let i = 0; i < 3; i++) {
    if (have[i]! > need[i]!) return undefined;
    if (have[i]! < need[i]!) {
      return `service-ci: Deno ${found} is older than ${MINIMUM_DENO_VERSION}, the oldest that runs service-ci: upgrade Deno (deno upgrade, or npx --yes deno@${MINIMUM_DENO_VERSION} or later) or use the release binary, which needs no Deno (docs/install.md)`;
    }
  }
  return undefined;
}

function _parts(version: string): [number, number, number] | undefined {
  const match = /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(version);
  return match === null ? undefined : [Number(match[1]), Number(match[2]), Number(match[3])];
}
