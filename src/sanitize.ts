/** Turns text that came from the service into one safe line, and masks secrets in anything printed. */

// Matching control characters is this module's purpose.
// deno-lint-ignore-file no-control-regex

import { neutralizeLine } from "./log_commands.ts";

// ESC-introduced sequences: CSI (ESC [ … final), OSC/DCS/SOS/PM/APC (… BEL or ESC \), and two-byte ESC X.
const ESCAPE_SEQUENCE =
  /\x1b(?:\[[0-?]*[ -/]*[@-~]?|[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_]?)/g;
// C1 CSI (U+009B) and OSC (U+009D) introduce sequences too.
const C1_SEQUENCE = /\x9b[0-?]*[ -/]*[@-~]?|\x9d[^\x07\x9c]*(?:\x07|\x9c)?/g;
// Line breaks of every kind become one space.
const LINE_BREAK = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g;
// Other controls (C0, DEL, C1), the bidirectional controls that can make text read differently,
// and invisible format characters (soft hyphen, zero-width spaces and joiners, word joiner, BOM)
// that could hide inside a secret and keep it from being recognised and masked.
const CONTROL =
  /[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;
// A line starting like a GitHub Actions command is quoted whole, as it always was; neutralizeLine()
// then breaks every other CI's markers (and `##[` anywhere, which GitHub's runner also reads).
const WORKFLOW_COMMAND = /^\s*(?:::|##\[)/;

/** The longest line `sanitize()` returns unless told otherwise. */
export const DEFAULT_MAX_LENGTH = 500;

/** Options for {@linkcode sanitize}. */
export interface SanitizeOptions {
  /** The longest result, in characters, ellipsis included. Default 500. */
  readonly maxLength?: number;
  /** Values that must never appear: each is replaced with `***`. */
  readonly secrets?: readonly string[];
}

/**
 * Makes service-controlled text printable as data: escape sequences and control characters
 * removed, all on one line, secrets masked, length-capped, and unable to form a CI log command on
 * any CI (see {@linkcode neutralizeLine}).
 *
 * @example
 * ```ts
 * sanitize("\x1b[31mboom\x1b[0m\n::error::x"); // "boom ::error::x"
 * ```
 */
export function sanitize(text: string, options: SanitizeOptions = {}): string {
  const maxLength = options.maxLength ?? DEFAULT_MAX_LENGTH;
  const secrets = options.secrets ?? [];
  // Masked before removing escapes, which could eat a secret's first character ("\x1b[" + key
  // reads as a CSI sequence ending in it), and again after, which can join a secret split by a
  // removed character.
  let line = maskSecrets(text, secrets)
    .replace(ESCAPE_SEQUENCE, "")
    .replace(C1_SEQUENCE, "")
    .replace(LINE_BREAK, " ")
    .replace(CONTROL, "")
    .replace(/\s+/g, " ")
    .trim();
  line = maskSecrets(line, secrets);
  if (WORKFLOW_COMMAND.test(line)) line = `"${line}"`;
  // Before the cut: a prefix of a neutral line is neutral, and the cut keeps within the cap.
  line = neutralizeLine(line);
  if (maxLength < 1) return "";
  if (line.length > maxLength) {
    let cut = line.slice(0, maxLength - 1);
    // Never leave half of a surrogate pair (an emoji cut in two) before the ellipsis.
    if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1);
    line = `${cut}…`;
  }
  return line;
}

/**
 * Replaces every occurrence of each secret (and its percent-encoded form) with `***`.
 * Secrets shorter than 4 characters are ignored: masking them would garble ordinary text.
 *
 * @example
 * ```ts
 * maskSecrets("key=sk_live_123", ["sk_live_123"]); // "key=***"
 * ```
 */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let masked = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) {
      masked = masked.split(form).join("***");
    }
  }
  return masked;
}
