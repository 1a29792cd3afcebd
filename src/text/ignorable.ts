/** Unicode's default-ignorable code points: shown as nothing, they can hide inside a secret. */

// From https://www.unicode.org/Public/16.0.0/ucd/DerivedCoreProperties.txt (27 lines merged
// where they touch: 4174 code points); JavaScript's regular expressions have no such \p{…}.
const _RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x00ad, 0x00ad], // soft hyphen
  [0x034f, 0x034f], // combining grapheme joiner
  [0x061c, 0x061c], // Arabic letter mark
  [0x115f, 0x1160], // Hangul choseong and jungseong fillers
  [0x17b4, 0x17b5], // Khmer inherent vowels
  [0x180b, 0x180f], // Mongolian free variation selectors, vowel separator
  [0x200b, 0x200f], // zero-width space, joiners, direction marks
  [0x202a, 0x202e], // bidirectional embeddings and overrides
  [0x2060, 0x206f], // word joiner, invisible operators, isolates, deprecated format controls
  [0x3164, 0x3164], // Hangul filler
  [0xfe00, 0xfe0f], // variation selectors
  [0xfeff, 0xfeff], // zero-width no-break space (byte order mark)
  [0xffa0, 0xffa0], // halfwidth Hangul filler
  [0xfff0, 0xfff8], // reserved
  [0x1bca0, 0x1bca3], // shorthand format controls
  [0x1d173, 0x1d17a], // musical symbol format controls
  [0xe0000, 0xe0fff], // tag characters, supplementary variation selectors, reserved
];

/** For patterns that must see through them (a secret with them between its characters). */
export const IGNORABLE_SOURCE: string = `[${
  _RANGES.map(([first, last]) => `\\u{${first.toString(16)}}-\\u{${last.toString(16)}}`).join("")
}]`;

const _IGNORABLE = new RegExp(IGNORABLE_SOURCE, "gu");

export function removeIgnorable(text: string): string {
  return text.replace(_IGNORABLE, "");
}

// Other scripts' letters drawn like Latin (Unicode confusables): Cyrillic `fаiled` reads `failed`.
const _LOOK_ALIKE: Readonly<Record<string, string>> = Object.fromEntries(
  [
    ["a", "аɑα"],
    ["c", "сϲ"],
    ["d", "ԁ"],
    ["e", "еҽ"],
    ["g", "ɡ"],
    ["h", "һ"],
    ["i", "іɩι"],
    ["j", "ј"],
    ["k", "κ"],
    ["l", "ӏ"],
    ["n", "ո"],
    ["o", "оοօ"],
    ["p", "рρ"],
    ["q", "ԛ"],
    ["s", "ѕ"],
    ["u", "υս"],
    ["v", "ν"],
    ["w", "ԝ"],
    ["x", "хχ"],
    ["y", "уγ"],
  ].flatMap(([latin, others]) => [...others!].map((other) => [other, latin!])),
);

/**
 * What a reader takes `text` for: its compatibility form (full-width `ｆａｉｌｅｄ` is `failed`)
 * with look-alike letters of other scripts as the Latin ones. Only for comparing, never shown.
 *
 * @example
 * ```ts
 * readAs("f\u0430iled"); // "failed"
 * ```
 */
export function readAs(text: string): string {
  return [...text.normalize("NFKC")].map((char) => _LOOK_ALIKE[char] ?? char).join("");
}
