import assert from "node:assert/strict";
import {
  DEFAULT_MAX_INTERVAL_MS,
  FIRST_POLL_MS,
  JITTER,
  nextPollDelay,
  RETRY_AFTER_MAX_MS,
  RETRY_AFTER_MIN_MS,
} from "../../src/service/schedule.ts";

const HOUR = 3_600_000;

Deno.test("nextPollDelay() starts at about a second", () => {
  assert.equal(nextPollDelay({ ageMs: 0, remainingMs: HOUR, random: 0.5 }), FIRST_POLL_MS);
});

Deno.test("nextPollDelay() grows monotonically with the run's age until the cap", () => {
  let previous = 0;
  for (let age = 0; age <= 10 * 60_000; age += 1_000) {
    const delay = nextPollDelay({ ageMs: age, remainingMs: HOUR, random: 0.5 });
    assert.ok(delay >= previous, `age ${age}: ${delay} < ${previous}`);
    assert.ok(delay <= DEFAULT_MAX_INTERVAL_MS);
    previous = delay;
  }
  assert.equal(previous, DEFAULT_MAX_INTERVAL_MS);
});

Deno.test("nextPollDelay() spreads each wait by at most the jitter either way, within the cap", () => {
  for (const age of [0, 5_000, 20_000, 60_000, 600_000]) {
    const middle = nextPollDelay({ ageMs: age, remainingMs: HOUR, random: 0.5 });
    const low = nextPollDelay({ ageMs: age, remainingMs: HOUR, random: 0 });
    const high = nextPollDelay({ ageMs: age, remainingMs: HOUR, random: 0.999999 });
    assert.ok(low >= Math.floor(middle * (1 - JITTER)), `${age}: ${low}`);
    assert.ok(high <= Math.ceil(middle * (1 + JITTER)), `${age}: ${high}`);
    assert.ok(high <= DEFAULT_MAX_INTERVAL_MS);
    assert.ok(low < high || middle === DEFAULT_MAX_INTERVAL_MS);
  }
});

Deno.test("nextPollDelay() honours a smaller or larger cap", () => {
  const input = { ageMs: 600_000, remainingMs: HOUR, random: 0.5 };
  assert.equal(nextPollDelay({ ...input, maxIntervalMs: 3_000 }), 3_000);
  assert.equal(nextPollDelay({ ...input, maxIntervalMs: 60_000 }), 60_000);
});

Deno.test("nextPollDelay() lets Retry-After win, bounded to 0.5 s … 5 min", () => {
  const input = { ageMs: 600_000, remainingMs: HOUR, random: 0.5 };
  assert.equal(nextPollDelay({ ...input, retryAfterMs: 2_000 }), 2_000);
  assert.equal(nextPollDelay({ ...input, retryAfterMs: 0 }), RETRY_AFTER_MIN_MS);
  assert.equal(nextPollDelay({ ...input, retryAfterMs: 60 * 60_000 }), RETRY_AFTER_MAX_MS);
  assert.equal(nextPollDelay({ ...input, ageMs: 0, retryAfterMs: 30_000 }), 30_000);
});

Deno.test("nextPollDelay() never waits past the deadline", () => {
  assert.equal(nextPollDelay({ ageMs: 600_000, remainingMs: 1_234, random: 0.9 }), 1_234);
  assert.equal(
    nextPollDelay({ ageMs: 0, remainingMs: 700, retryAfterMs: 60_000, random: 0.5 }),
    700,
  );
  assert.equal(nextPollDelay({ ageMs: 0, remainingMs: -5, random: 0.5 }), 0);
});

Deno.test("the default schedule polls a 120 s run at most 25 times", () => {
  let time = 0;
  let polls = 0;
  while (time < 120_000) {
    time += nextPollDelay({ ageMs: time, remainingMs: HOUR, random: 0 });
    polls++;
  }
  assert.ok(polls <= 25, `${polls} polls`);
});
