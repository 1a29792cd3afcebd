/** Inert XML text: a character reference for whatever XML would read as markup or normalize. */

import { XML_ENTITIES } from "./sanitize.ts";

/** Tab, LF and CR as character references, so attribute and line-end normalization keep them. */
export function escapeXml(text: string): string {
  return text.replace(_NOT_XML, "").replace(/[&<>"'\t\n\r]/g, (char) => _ENTITIES[char] ?? "");
}

// Outside XML 1.0's Char production, plus DEL and C1: discouraged, and some readers reject them.
const _NOT_XML =
  // deno-lint-ignore no-control-regex
  /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const _ENTITIES: Readonly<Record<string, string>> = {
  ...XML_ENTITIES,
  "\t": "&#9;",
  "\n": "&#10;",
  "\r": "&#13;",
};
