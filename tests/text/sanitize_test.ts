/**
 * The key in every spelling (issue 41): what a PHP service, a URL parser or a forge makes of it is
 * masked like the key itself. The properties over every encoding are sanitize_property_test.ts's.
 */

import assert from "node:assert/strict";
import { maskSecrets, sanitize } from "../../src/text/sanitize.ts";

const KEY = "sk_h6/SeCrEt_4f1c9a7e2b3d";

/** Printable ASCII in its full-width forms (U+FF01–U+FF5E), as a host may spell it. */
function fullWidth(text: string): string {
  return text.replace(/[!-~]/g, (char) => String.fromCharCode(char.charCodeAt(0) + 0xfee0));
}

/** Every character percent-escaped, unreserved ones included. */
function escapedWhole(text: string, hex: "lower" | "upper"): string {
  return [...new TextEncoder().encode(text)].map((byte) => {
    const digits = byte.toString(16).padStart(2, "0");
    return `%${hex === "upper" ? digits.toUpperCase() : digits}`;
  }).join("");
}

Deno.test("maskSecrets() masks a key JSON-escaped as PHP writes it: `/` as `\\/`, anything else as `\\u`", () => {
  assert.equal(maskSecrets('{"key":"sk_h6\\/SeCrEt_4f1c9a7e2b3d"}', [KEY]), '{"key":"***"}');
  const accented = "sk_é/ünïcode_4f1c9a7e";
  assert.equal(
    maskSecrets('{"key":"sk_\\u00e9\\/\\u00FCn\\u00efcode_4f1c9a7e"}', [accented]),
    '{"key":"***"}',
  );
});

Deno.test("maskSecrets() masks a key in another letter case, in full-width letters and percent-escaped", () => {
  const spellings = {
    "upper case": KEY.toUpperCase(),
    "lower case": KEY.toLowerCase(),
    "full-width": fullWidth(KEY),
    "full-width, upper case": fullWidth(KEY.toUpperCase()),
    "every character percent-escaped": escapedWhole(KEY, "lower"),
    "every character percent-escaped, upper-case hex": escapedWhole(KEY, "upper"),
    "full-width, percent-escaped": escapedWhole(fullWidth(KEY), "upper"),
    "in part percent-escaped": KEY.replace("SeC", "%53e%43"),
    "in part full-width, with a zero-width joiner": KEY.replace("4f1c", "４\u200dｆ1Ｃ"),
  };
  for (const [what, spelling] of Object.entries(spellings)) {
    assert.equal(
      maskSecrets(`link https://${spelling}.evil.example/r`, [KEY]),
      "link https://***.evil.example/r",
      what,
    );
  }
  // The host a URL parser makes of each: lower case, IDNA-mapped, escapes decoded.
  const host = KEY.replace("/", "");
  for (const spelling of [host.toUpperCase(), fullWidth(host), escapedWhole(host, "upper")]) {
    const link = new URL(`https://${spelling}.evil.example/r`).href;
    assert.equal(maskSecrets(link, [host]), "https://***.evil.example/r", spelling);
  }
});

Deno.test("maskSecrets() still finds a key after a stray `%` that reads as an escape with its first characters", () => {
  const key = "4f1c9a7e2b3d_live";
  assert.equal(maskSecrets(`100%${key} done`, [key]), "100%*** done");
  assert.equal(maskSecrets(`100%${key.toUpperCase()}`, [key]), "100%***");
});

Deno.test("sanitize() masks the start of a key in another spelling that its cut leaves at the end", () => {
  for (const spelling of [KEY.toUpperCase(), fullWidth(KEY)]) {
    const line = sanitize(`run ${spelling} tail`, { maxLength: 14, secrets: [KEY] });
    assert.equal(line, "run *** tail", spelling);
    const cut = sanitize(`run ${spelling.slice(0, 12)} and more text`, {
      maxLength: 14,
      secrets: [KEY],
    });
    assert.equal(cut, "run ***…", spelling);
  }
});

Deno.test("maskSecrets() leaves text alone that only resembles a key", () => {
  const text = "sk_h6 secret 4f1c9a7e 100% Ｓｋ %73%6b done";
  assert.equal(maskSecrets(text, [KEY]), text);
});
