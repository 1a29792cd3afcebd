/** Every environment variable the program reads: the only ones `main.ts` asks the system for. */

import { CI_ENV_VARIABLES } from "../ci/detect.ts";
import { CONFIG_ENV_VARIABLES, NEAR_MISS_VARIABLES } from "./options.ts";
import { DEBUG_ENV_VARIABLES } from "../outputs/verbose.ts";

/** The console's (`TERM=dumb`: a terminal that shows neither cursor movement nor colours). */
export const OUTPUT_ENV_VARIABLES: readonly string[] = ["NO_COLOR", "TERM"];

export const ENV_VARIABLES: readonly string[] = [
  ...new Set([
    ...CONFIG_ENV_VARIABLES,
    ...NEAR_MISS_VARIABLES,
    ...CI_ENV_VARIABLES,
    ...OUTPUT_ENV_VARIABLES,
    ...DEBUG_ENV_VARIABLES,
  ]),
];
