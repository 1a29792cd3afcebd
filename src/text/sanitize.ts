/** Turns service text into one safe line, and masks secrets in anything printed. */

// Matching control characters is this module's purpose.
// deno-lint-ignore-file no-control-regex

import { IGNORABLE_SOURCE, removeIgnorable } from "./ignorable.ts";
import { escapeJsonForLogs, neutralizeLine } from "./log_commands.ts";

// CSI (ESC [ … final), OSC/DCS/SOS/PM/APC (… BEL or ESC \), and two-byte ESC X.
const ESCAPE_SEQUENCE =
  /\x1b(?:\[[0-?]*[ -/]*[@-~]?|[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_]?)/g;
// C1 CSI (U+009B) and OSC (U+009D) introduce sequences too.
const C1_SEQUENCE = /\x9b[0-?]*[ -/]*[@-~]?|\x9d[^\x07\x9c]*(?:\x07|\x9c)?/g;
const LINE_BREAK = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g;
// Other controls (C0, DEL, C1). The invisible and bidirectional format characters go with every
// other default-ignorable code point (removeIgnorable).
export const CONTROL = /[\x00-\x1f\x7f-\x9f]/g;
// A line starting like a GitHub Actions command is quoted whole, as it always was; neutralizeLine()
// then breaks every other CI's markers (and `##[` anywhere, which GitHub's runner also reads).
const WORKFLOW_COMMAND = /^\s*(?:::|##\[)/;

export const DEFAULT_MAX_LENGTH = 500;

/**
 * Service text as data: no escape sequence or control character, one line, secrets masked,
 * length-capped (in characters, ellipsis included), and unable to form a CI log command on any CI.
 */
export function sanitize(
  text: string,
  { maxLength = DEFAULT_MAX_LENGTH, secrets = [] }: {
    readonly maxLength?: number;
    readonly secrets?: readonly string[];
  } = {},
): string {
  // Masked before removing escapes, which could eat a secret's first character ("\x1b[" + key
  // reads as a CSI sequence ending in it), and again after, which can join a secret split by a
  // removed character. Invisible characters go first, so none can split an escape sequence.
  let line = removeIgnorable(maskSecrets(text, secrets))
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
    // Every whole secret was masked before the cut; one that straddles it must not leave its
    // first characters behind.
    line = `${_maskSecretPrefixAtEnd(_cut(line, maxLength - 1), secrets)}…`;
  }
  return line;
}

/** For the fields a forge or a CI caps (GitHub's status description: 140); never half an emoji. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${_cut(text, max - 1)}…`;
}

function _cut(text: string, length: number): string {
  const cut = text.slice(0, length);
  return /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
}

// The shortest start of a secret that is masked where a cut leaves it at the end of a line.
const _MIN_PREFIX = 4;

function _maskSecretPrefixAtEnd(text: string, secrets: readonly string[]): string {
  let longest = 0;
  for (const form of secrets.flatMap(secretForms)) {
    for (let length = Math.min(form.length - 1, text.length); length > longest; length--) {
      if (length >= _MIN_PREFIX && text.endsWith(form.slice(0, length))) {
        longest = length;
        break;
      }
    }
  }
  return longest === 0 ? text : `${text.slice(0, text.length - longest)}***`;
}

// Secrets shorter than this are not masked: masking them would garble ordinary text.
const MIN_SECRET_LENGTH = 4;

const _formsCache = new Map<string, readonly string[]>();

/**
 * Every spelling of `secret` that output could carry, longest first; none for a secret too short
 * to mask. Percent-encoding is also strict RFC 3986 (`! ' ( ) *` too, as Python's `quote` and Go
 * do) and lower-case hex.
 */
export function secretForms(secret: string): readonly string[] {
  if (secret.length < MIN_SECRET_LENGTH) return [];
  const cached = _formsCache.get(secret);
  if (cached !== undefined) return cached;
  const forms = new Set<string>([secret]);
  const hexLower = (text: string) => text.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase());
  // A lone surrogate has no percent-encoding.
  if (secret.isWellFormed()) {
    const component = encodeURIComponent(secret);
    const strict = component.replace(
      /[!'()*]/g,
      (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
    );
    for (const form of [component, strict]) forms.add(form).add(hexLower(form));
    forms.add(strict.replaceAll("%20", "+"));
    forms.add(new URLSearchParams({ k: secret }).toString().slice(2));
    const uri = encodeURI(secret);
    forms.add(uri).add(hexLower(uri));
  }
  const json = JSON.stringify(secret);
  forms.add(json.slice(1, -1)).add(escapeJsonForLogs(json).slice(1, -1));
  forms.add(
    secret.replace(/[&<>"']/g, (char) => XML_ENTITIES[char] ?? char),
  ).add(secret.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`));
  if (/^[\x00-\xff]*$/.test(secret)) {
    const base64 = btoa(secret);
    const base64Url = base64.replaceAll("+", "-").replaceAll("/", "_");
    for (const form of [base64, base64Url]) forms.add(form).add(form.replace(/=+$/, ""));
  }
  const sorted = [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length);
  _formsCache.set(secret, sorted);
  return sorted;
}

export const XML_ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
};

/** Every spelling of each secret becomes `***`, and so does the start of one cut before a `…`. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let masked = text;
  // A secret with invisible characters between its characters reads as the secret.
  const hidden = _HAS_IGNORABLE.test(text);
  for (const form of secrets.flatMap(secretForms)) {
    if (hidden) masked = masked.replace(_seenThrough(form), "***");
    else if (masked.includes(form)) masked = masked.split(form).join("***");
  }
  // A value cut short (`clip`, `quoteValue`) may end in the start of a secret.
  if (!masked.includes("…")) return masked;
  const pieces = masked.split("…");
  return pieces.map((piece, index) =>
    index === pieces.length - 1 ? piece : _maskSecretPrefixAtEnd(piece, secrets)
  ).join("…");
}

const _HAS_IGNORABLE = new RegExp(IGNORABLE_SOURCE, "u");
const _seenThroughCache = new Map<string, RegExp>();

// `form` with any run of default-ignorable code points allowed before each of its characters.
function _seenThrough(form: string): RegExp {
  let pattern = _seenThroughCache.get(form);
  if (pattern === undefined) {
    const chars = [...removeIgnorable(form)].map((char) =>
      char.replace(/[\\^$.*+?()[\]{}|/]/, "\\$&")
    );
    // A secret made only of invisible characters is nothing to find: "" would match everywhere.
    pattern = chars.length === 0 ? /(?!)/gu : new RegExp(chars.join(`${IGNORABLE_SOURCE}*`), "gu");
    _seenThroughCache.set(form, pattern);
  }
  return pattern;
}
