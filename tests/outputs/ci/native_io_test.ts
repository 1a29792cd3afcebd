import assert from "node:assert/strict";
import { NATIVE_TIME_BOUNDS, nativeTimeBound } from "../../../src/platform/bounds.ts";
import { formatBound } from "../../../src/text/duration.ts";

Deno.test("nativeTimeBound() gives each call the bound, less when the total has less left, then 0", () => {
  let now = 1_000;
  const bound = nativeTimeBound(() => now, { eachMs: 10_000, totalMs: 30_000 });
  assert.equal(bound(), 10_000);
  now += 9_000;
  assert.equal(bound(), 10_000);
  now += 15_000;
  assert.equal(bound(), 6_000);
  now += 6_000;
  assert.equal(bound(), 0);
  now += 60_000;
  assert.equal(bound(), 0);
});

Deno.test("nativeTimeBound() counts the total from its first call, not from when it was made", () => {
  let now = 0;
  const bound = nativeTimeBound(() => now);
  now = 500_000;
  assert.equal(bound(), NATIVE_TIME_BOUNDS.eachMs);
  now += NATIVE_TIME_BOUNDS.totalMs - 1_000;
  assert.equal(bound(), 1_000);
});

Deno.test("formatBound() says whole minutes and seconds, the rest in milliseconds", () => {
  assert.equal(formatBound(10_000), "10 s");
  assert.equal(formatBound(2_500), "2500 ms");
  assert.equal(formatBound(2_500, 1000), "3 s");
  assert.equal(formatBound(200), "200 ms");
  assert.equal(formatBound(0), "0 s");
  assert.equal(formatBound(125_000), "2 min 5 s");
  assert.equal(formatBound(1_800_000), "30 min");
});
