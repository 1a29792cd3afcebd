/** Turns service text into one safe line, and masks secrets in anything printed. */

// Matching control characters is this module's purpose.
// deno-lint-ignore-file no-control-regex

import { IGNORABLE_SOURCE, removeIgnorable } from "./ignorable.ts";
import { escapeJsonForLogs, neutralizeLine, unicodeEscape } from "./log_commands.ts";

// CSI (ESC [ … final), OSC/DCS/SOS/PM/APC (… BEL or ESC \), and two-byte ESC X.
const ESCAPE_SEQUENCE =
  /\x1b(?:\[[0-?]*[ -/]*[@-~]?|[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_]?)/g;
// C1 CSI (U+009B) and OSC (U+009D) introduce sequences too.
const C1_SEQUENCE = /\x9b[0-?]*[ -/]*[@-~]?|\x9d[^\x07\x9c]*(?:\x07|\x9c)?/g;
const LINE_BREAK = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g;
// Other controls (C0, DEL, C1); invisible and bidi format characters go in removeIgnorable.
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
    // Whole secrets were masked before the cut; one straddling it must not leave its start behind.
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
  const forms = _foldedForms(secrets);
  let cut = text.length;
  for (const view of forms.length === 0 ? [] : _views(text)) {
    let longest = 0;
    for (const form of forms) {
      for (let length = Math.min(form.length - 1, view.text.length); length > longest; length--) {
        if (length >= _MIN_PREFIX && view.text.endsWith(form.slice(0, length))) {
          longest = length;
          break;
        }
      }
    }
    if (longest > 0) cut = Math.min(cut, view.start(view.text.length - longest));
  }
  return cut === text.length ? text : `${text.slice(0, cut)}***`;
}

// Secrets shorter than this are not masked: masking them would garble ordinary text.
const MIN_SECRET_LENGTH = 4;

/**
 * Every spelling of `secret` that output could carry, longest first; none for a secret too short
 * to mask. Percent-encoding is also strict RFC 3986 (`! ' ( ) *` too, as Python's `quote` and Go
 * do); JSON also with `/` as `\/` (PHP's `json_encode`) and anything but printable ASCII as `\u`
 * escapes (PHP's and Python's default).
 */
export const secretForms: (secret: string) => readonly string[] = _memo((secret) => {
  if (secret.length < MIN_SECRET_LENGTH) return [];
  const forms = new Set<string>([secret]);
  // A lone surrogate has no percent-encoding.
  if (secret.isWellFormed()) {
    const component = encodeURIComponent(secret);
    const strict = component.replace(
      /[!'()*]/g,
      (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
    );
    forms.add(component).add(strict).add(strict.replaceAll("%20", "+")).add(encodeURI(secret));
    forms.add(new URLSearchParams({ k: secret }).toString().slice(2));
  }
  const json = JSON.stringify(secret).slice(1, -1);
  const asciiJson = json.replace(/[^\x20-\x7e]/g, unicodeEscape);
  for (const form of [json, asciiJson]) {
    forms.add(form).add(escapeJsonForLogs(`"${form}"`).slice(1, -1)).add(
      form.replaceAll("/", "\\/"),
    );
  }
  forms.add(
    secret.replace(/[&<>"']/g, (char) => XML_ENTITIES[char] ?? char),
  ).add(secret.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`));
  if (/^[\x00-\xff]*$/.test(secret)) {
    const base64 = btoa(secret);
    const base64Url = base64.replaceAll("+", "-").replaceAll("/", "_");
    for (const form of [base64, base64Url]) forms.add(form).add(form.replace(/=+$/, ""));
  }
  return [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length);
});

// `compute` once for each key: a secret's forms, a character's folding.
function _memo<T>(compute: (key: string) => T): (key: string) => T {
  const cache = new Map<string, T>();
  return (key) => {
    let value = cache.get(key);
    if (value === undefined) cache.set(key, value = compute(key));
    return value;
  };
}

export const XML_ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
};

/**
 * Every spelling of each secret becomes `***`, and so does the start of one cut before a `…`,
 * found however a reader, URL parser or forge respells it: case, NFKD, %-escapes, invisibles.
 */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  const forms = _foldedForms(secrets);
  const spans: Array<readonly [number, number]> = [];
  for (const view of forms.length === 0 ? [] : _views(text)) {
    for (const form of forms) {
      for (let at = view.text.indexOf(form); at >= 0; at = view.text.indexOf(form, at + 1)) {
        spans.push([view.start(at), view.end(at + form.length - 1)]);
      }
    }
  }
  const masked = _masked(text, spans);
  // A value cut short (`clip`, `quoteValue`) may end in the start of a secret.
  if (!masked.includes("…")) return masked;
  const pieces = masked.split("…");
  return pieces.map((piece, index) =>
    index === pieces.length - 1 ? piece : _maskSecretPrefixAtEnd(piece, secrets)
  ).join("…");
}

// Each span of `text` (overlapping ones merged) becomes `***`.
function _masked(text: string, spans: Array<readonly [number, number]>): string {
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0]);
  let masked = "";
  let done = 0;
  for (const [start, end] of spans) {
    if (end <= done) continue;
    if (start >= done) masked += `${text.slice(done, start)}***`;
    done = end;
  }
  return masked + text.slice(done);
}

const _folded = _memo((secret) =>
  [...new Set(secretForms(secret).flatMap((form) => _views(form).map((v) => v.text)))]
    .filter((form) => form.length >= MIN_SECRET_LENGTH)
);

function _foldedForms(secrets: readonly string[]): readonly string[] {
  return [...new Set(secrets.flatMap((secret) => _folded(secret)))];
}

/** Text as _fold() reads it: `start(i)` and `end(i)` bound the source of its `i`th character. */
interface _Folded {
  readonly text: string;
  start(index: number): number;
  end(index: number): number;
}

// ASCII without `%` folds to its lower case, character for character.
const _PLAIN = /^[\x00-\x24\x26-\x7f]*$/;
const _IGNORABLE = new RegExp(`^${IGNORABLE_SOURCE}$`, "u");

// Text read as is and, where it has a `%`, with its percent-escapes decoded too: decoding alone
// would hide a secret after a stray `%` (`%4f1c…` reads as `O1c…`).
function _views(text: string): _Folded[] {
  if (_PLAIN.test(text)) {
    return [{ text: text.toLowerCase(), start: (index) => index, end: (index) => index + 1 }];
  }
  const escaped = /%[0-9a-f]{2}/i.test(text);
  return escaped ? [_fold(text, false), _fold(text, true)] : [_fold(text, false)];
}

/**
 * How a reader, a URL parser (lower case, IDNA) or a forge may respell `text`: lower case, NFKD
 * (full-width letters, ligatures), no invisibles, and with `decode` UTF-8 percent-escapes decoded.
 */
function _fold(text: string, decode: boolean): _Folded {
  let folded = "";
  const starts: number[] = [];
  const ends: number[] = [];
  const plain = decode ? _PLAIN_RUN : _ASCII_RUN;
  for (let index = 0; index < text.length;) {
    plain.lastIndex = index;
    const run = plain.exec(text)?.[0];
    if (run !== undefined) {
      folded += run.toLowerCase();
      for (let unit = index; unit < index + run.length; unit++) {
        starts.push(unit);
        ends.push(unit + 1);
      }
      index += run.length;
      continue;
    }
    const escaped = decode && text[index] === "%" ? _percentEscape(text, index) : undefined;
    const char = escaped?.char ?? String.fromCodePoint(text.codePointAt(index)!);
    const next = index + (escaped?.length ?? char.length);
    const mapped = char < "\x80" ? char.toLowerCase() : _foldChar(char);
    for (let unit = 0; unit < mapped.length; unit++) {
      starts.push(index);
      ends.push(next);
    }
    folded += mapped;
    index = next;
  }
  return { text: folded, start: (index) => starts[index]!, end: (index) => ends[index]! };
}

// Runs of characters that fold to their lower case, one for one.
const _ASCII_RUN = /[\x00-\x7f]+/y;
const _PLAIN_RUN = /[\x00-\x24\x26-\x7f]+/y;
const _foldChar = _memo((char) =>
  _IGNORABLE.test(char) ? "" : char.normalize("NFKD").toLowerCase()
);

// The character the UTF-8 bytes percent-escaped at `index` spell, and their escapes' length.
function _percentEscape(text: string, index: number): { char: string; length: number } | undefined {
  if (!/^%[0-9a-f]{2}$/i.test(text.slice(index, index + 3))) return undefined;
  const lead = parseInt(text.slice(index + 1, index + 3), 16);
  // 0x80–0xC1 start no UTF-8 character; decodeURIComponent refuses what else is not one.
  const bytes = lead < 0x80 ? 1 : lead < 0xc2 ? 0 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
  const length = 3 * bytes;
  try {
    return length === 0
      ? undefined
      : { char: decodeURIComponent(text.slice(index, index + length)), length };
  } catch {
    return undefined;
  }
}
