/** The two wordings of a duration (issue 42): every surface says a time one of these two ways. */

import assert from "node:assert/strict";
import { formatBound, formatDuration, shownMs } from "../../src/text/duration.ts";

Deno.test("formatDuration() says a measured time to the tenth of a second, then in minutes and seconds", () => {
  const cases: [number, string][] = [
    [0, "0.0 s"],
    [12_345, "12.3 s"],
    [59_949, "59.9 s"],
    [60_000, "1 min 0 s"],
    [125_400, "2 min 5 s"],
    [1_800_000, "30 min 0 s"],
    [-5, "0.0 s"],
    [Number.NaN, "0.0 s"],
  ];
  for (const [ms, words] of cases) assert.equal(formatDuration(ms), words, String(ms));
});

Deno.test("formatBound() says a bound or a wait in its own unit, a zero part left out", () => {
  const cases: [number, number | undefined, string][] = [
    [250, undefined, "250 ms"],
    [10_000, undefined, "10 s"],
    [60_000, undefined, "1 min"],
    [125_000, undefined, "2 min 5 s"],
    [1_800_000, undefined, "30 min"],
    [1_499, 1000, "1 s"],
    [0, undefined, "0 s"],
    [-1, undefined, "0 s"],
  ];
  for (const [ms, unit, words] of cases) assert.equal(formatBound(ms, unit), words, String(ms));
  assert.equal(shownMs(Number.POSITIVE_INFINITY), 0);
});
