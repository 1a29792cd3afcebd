import assert from "node:assert/strict";
import fc from "npm:fast-check@3.23.2";
import {
  BACKOFF_BASE_MS,
  BACKOFF_CAP_MS,
  DEFAULT_MAX_INTERVAL_MS,
  FIRST_POLL_MS,
  JITTER,
  MAX_CONSECUTIVE_FAULTS,
  nextPollDelay,
  parseRetryAfter,
  RETRY_AFTER_MAX_MS,
  RETRY_AFTER_MIN_MS,
  retryDelay,
} from "../../src/service/timing.ts";

const HOUR = 3_600_000;
// Sun, 06 Nov 1994 08:49:37 GMT, the example date of RFC 9110.
const NOW = Date.UTC(1994, 10, 6, 8, 49, 37);

/** The backoff ceiling of retry `attempt`: 0.5 s doubling each time, at most 30 s. */
function ceiling(attempt: number): number {
  return Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
}

Deno.test("the backoff starts at 0.5 s, doubles, is capped at 30 s and gives up after 10 faults", () => {
  assert.equal(BACKOFF_BASE_MS, 500);
  assert.equal(BACKOFF_CAP_MS, 30_000);
  assert.equal(MAX_CONSECUTIVE_FAULTS, 10);
  assert.equal(RETRY_AFTER_MIN_MS, 500);
  assert.equal(RETRY_AFTER_MAX_MS, 300_000);
});

Deno.test("retryDelay() waits random × the ceiling of the attempt (full jitter)", () => {
  const top = 1 - Number.EPSILON;
  const expected = [500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000];
  expected.forEach((ceilingMs, index) => {
    const attempt = index + 1;
    assert.equal(retryDelay({ attempt, remainingMs: HOUR, random: 0 }), 0);
    assert.equal(retryDelay({ attempt, remainingMs: HOUR, random: 0.5 }), ceilingMs / 2);
    assert.equal(retryDelay({ attempt, remainingMs: HOUR, random: top }), ceilingMs);
  });
});

Deno.test("retryDelay() doubles the ceiling with each attempt until the 30 s cap", () => {
  for (let attempt = 1; attempt < 12; attempt++) {
    const now = retryDelay({ attempt, remainingMs: HOUR, random: 0.5 });
    const next = retryDelay({ attempt: attempt + 1, remainingMs: HOUR, random: 0.5 });
    assert.equal(next, Math.min(2 * now, BACKOFF_CAP_MS / 2), `attempt ${attempt}`);
  }
});

Deno.test("retryDelay() stays within 0 … the ceiling for any attempt and random number", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 10_000 }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (attempt, random) => {
        const delay = retryDelay({ attempt, remainingMs: HOUR, random });
        assert.ok(Number.isInteger(delay), `${delay}`);
        assert.ok(delay >= 0 && delay <= ceiling(attempt), `attempt ${attempt}: ${delay}`);
        assert.ok(delay <= BACKOFF_CAP_MS);
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("retryDelay() obeys Retry-After within 0.5 s … 5 min instead of its own backoff", () => {
  const input = { attempt: 7, remainingMs: HOUR, random: 0.01 };
  assert.equal(retryDelay({ ...input, retryAfterMs: 2_000 }), 2_000);
  assert.equal(retryDelay({ ...input, retryAfterMs: 45_000 }), 45_000);
  assert.equal(retryDelay({ ...input, retryAfterMs: 0 }), RETRY_AFTER_MIN_MS);
  assert.equal(retryDelay({ ...input, retryAfterMs: 100 }), RETRY_AFTER_MIN_MS);
  assert.equal(retryDelay({ ...input, retryAfterMs: HOUR }), RETRY_AFTER_MAX_MS);
  assert.equal(retryDelay({ ...input, retryAfterMs: Infinity }), RETRY_AFTER_MAX_MS);
  // A shorter Retry-After shortens the runner's own schedule too.
  const own = retryDelay({ attempt: 9, remainingMs: HOUR, random: 0.9 });
  assert.ok(retryDelay({ attempt: 9, remainingMs: HOUR, random: 0.9, retryAfterMs: 1_000 }) < own);
});

Deno.test("retryDelay() never waits past the time that remains", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 50 }),
      fc.integer({ min: -HOUR, max: HOUR }),
      fc.option(fc.integer({ min: 0, max: 2 * HOUR }), { nil: undefined }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (attempt, remainingMs, retryAfterMs, random) => {
        const delay = retryDelay({ attempt, remainingMs, retryAfterMs, random });
        assert.ok(delay >= 0, `${delay}`);
        assert.ok(delay <= Math.max(0, remainingMs), `${delay} > ${remainingMs}`);
        if (retryAfterMs !== undefined) {
          const bounded = Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_MIN_MS, retryAfterMs));
          assert.equal(delay, Math.min(Math.max(0, remainingMs), bounded));
        }
      },
    ),
    { numRuns: 2000 },
  );
  assert.equal(retryDelay({ attempt: 8, remainingMs: 1_234, random: 0.99 }), 1_234);
  assert.equal(retryDelay({ attempt: 1, remainingMs: 700, retryAfterMs: 60_000, random: 0 }), 700);
  assert.equal(retryDelay({ attempt: 1, remainingMs: -5, random: 0.5 }), 0);
  assert.equal(retryDelay({ attempt: 1, remainingMs: -5, retryAfterMs: 1_000, random: 0.5 }), 0);
});

Deno.test("parseRetryAfter() reads delay-seconds", () => {
  assert.equal(parseRetryAfter("0", NOW), 0);
  assert.equal(parseRetryAfter("2", NOW), 2_000);
  assert.equal(parseRetryAfter(" 120 ", NOW), 120_000);
  assert.equal(parseRetryAfter("86400", NOW), 86_400_000);
  assert.equal(parseRetryAfter("007", NOW), 7_000);
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 1_000_000 }), (seconds) => {
      assert.equal(parseRetryAfter(String(seconds), NOW), seconds * 1000);
    }),
  );
});

Deno.test("parseRetryAfter() reads an HTTP date as the time from now until it", () => {
  assert.equal(parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", NOW), 0);
  assert.equal(parseRetryAfter("Sun, 06 Nov 1994 08:49:42 GMT", NOW), 5_000);
  assert.equal(parseRetryAfter("Sun, 06 Nov 1994 08:54:37 GMT", NOW), 300_000);
  assert.equal(parseRetryAfter("Mon, 07 Nov 1994 08:49:37 GMT", NOW), 86_400_000);
  assert.equal(parseRetryAfter("Thu, 01 Jan 1970 00:00:05 GMT", 1_000), 4_000);
  // The obsolete RFC 850 form, which recipients must still read.
  assert.equal(parseRetryAfter("Sunday, 06-Nov-94 08:49:47 GMT", NOW), 10_000);
  // A date already past means "now".
  assert.equal(parseRetryAfter("Sat, 05 Nov 1994 08:49:37 GMT", NOW), 0);
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 3 * HOUR / 1000 }), (seconds) => {
      const date = new Date(NOW + seconds * 1000).toUTCString();
      assert.equal(parseRetryAfter(date, NOW), seconds * 1000);
    }),
  );
});

Deno.test("parseRetryAfter() ignores an absent or unreadable header", () => {
  const garbage = [
    "",
    " ",
    "soon",
    "-1",
    "+5",
    "1e3",
    "0x10",
    "1,5",
    "5 s",
    "5s",
    "12abc",
    "Infinity",
    "NaN",
    "null",
    "GMT",
    // Date.parse reads each of these as some date; none is an HTTP date.
    "1 GMT",
    "-1 GMT",
    "2099 GMT",
    "foo 1 GMT",
    "99 GMT",
    "3000 GMT",
    "tomorrow GMT",
    "12:00 GMT",
    "Mon, 32 Foo 2024 GMT",
    "Sun, 06 Nov 1994 08:49:37",
    "2024-01-01T00:00:00Z",
  ];
  assert.equal(parseRetryAfter(null, NOW), undefined);
  for (const value of garbage) {
    assert.equal(parseRetryAfter(value, NOW), undefined, JSON.stringify(value));
  }
});

Deno.test("a parsed Retry-After of any size ends up within 0.5 s … 5 min and the deadline", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.nat().map(String),
        fc.stringMatching(/^\d{1,400}$/),
        fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true })
          .map((date) => date.toUTCString()),
        fc.string(),
      ),
      fc.integer({ min: 0, max: HOUR }),
      (header, remainingMs) => {
        const retryAfterMs = parseRetryAfter(header, NOW);
        if (retryAfterMs === undefined) return;
        assert.ok(retryAfterMs >= 0, `${header}: ${retryAfterMs}`);
        const delay = retryDelay({ attempt: 1, remainingMs, retryAfterMs, random: 0.5 });
        assert.ok(delay <= remainingMs);
        assert.ok(delay <= RETRY_AFTER_MAX_MS);
        assert.ok(delay >= Math.min(remainingMs, RETRY_AFTER_MIN_MS));
      },
    ),
    { numRuns: 1000 },
  );
});

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
