/** The program's version, read from deno.json so that file stays its single source. */

import denoConfig from "../../deno.json" with { type: "json" };

export const VERSION: string = denoConfig.version;

export const REPOSITORY_URL = "https://github.com/service-ci/service-ci";

export function userAgent(): string {
  return `service-ci/${VERSION} (${Deno.build.os}; ${Deno.build.arch})`;
}
