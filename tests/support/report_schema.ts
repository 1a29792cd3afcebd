/**
 * `docs/report.schema.json` and the strict Ajv that checks documents against it: draft 2020-12,
 * every error, formats checked, and strict mode, which also refuses a schema with unknown
 * keywords or loose types, so the schema file itself is checked too.
 */

import { Ajv2020 } from "npm:ajv@8.17.1/dist/2020.js";
import addFormatsModule from "npm:ajv-formats@3.0.1";

// ajv-formats is CommonJS: its function is the default export's own default.
const addFormats = addFormatsModule.default ?? addFormatsModule;

/** The schema of `--json`'s report, as docs/report.schema.json holds it. */
export interface ReportSchema {
  readonly $id: string;
  readonly [keyword: string]: unknown;
}

/**
 * Reads `docs/report.schema.json`.
 *
 * @example
 * ```ts
 * reportSchema().$id; // "https://…/report.schema.json"
 * ```
 */
export function reportSchema(): ReportSchema {
  return JSON.parse(
    Deno.readTextFileSync(new URL("../../docs/report.schema.json", import.meta.url)),
  );
}

/**
 * A new strict Ajv for draft 2020-12 schemas, with every error and the formats.
 *
 * @example
 * ```ts
 * const validate = strictAjv().compile(reportSchema());
 * validate({}); // false
 * ```
 */
export function strictAjv(): InstanceType<typeof Ajv2020> {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  return ajv;
}
