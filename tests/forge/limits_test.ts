import assert from "node:assert/strict";
import { ForgeLimits } from "../../src/forge/limits.ts";
import { FakeTime } from "../support/fake_time.ts";
import { HttpFailure } from "../../src/http/failure.ts";

const OPEN = new AbortController().signal;

function limits(time: FakeTime = new FakeTime()) {
  return new ForgeLimits("GitHub", time);
}

Deno.test("ForgeLimits lets one GitHub write and four requests in flight at once", async () => {
  const time = new FakeTime();
  const github = limits(time);
  const writes = await Promise.all(
    [0, 1, 2].map(() => github.acquire({ write: false, priority: "progress" })),
  );
  const write = await github.acquire({ write: true, priority: "progress" });
  let second = false;
  const next = github.acquire({ write: true, priority: "progress" }).then((slot) => {
    second = true;
    return slot;
  });
  let fifth = false;
  const read = github.acquire({ write: false, priority: "progress" }).then((slot) => {
    fifth = true;
    return slot;
  });
  // Everything pending has run, and time has passed: the two still wait for a slot.
  await time.sleep(5, OPEN);
  assert.equal(second, false);
  assert.equal(fifth, false);
  assert.equal(github.peak, 4);
  write.release();
  (await next).release();
  writes.forEach((slot) => slot.release());
  (await read).release();
  assert.equal(second, true);
  assert.equal(github.peak, 4);
});

Deno.test("ForgeLimits lets the final statuses go first, and a final write ends a comment's write in flight", async () => {
  const time = new FakeTime();
  const github = limits(time);
  const comment = await github.acquire({ write: true, priority: "background" });
  const order: string[] = [];
  const progress = github.acquire({ write: true, priority: "progress" }).then((slot) => {
    order.push("progress");
    slot.release();
  });
  const final = github.acquire({ write: true, priority: "final" }).then((slot) => {
    order.push("final");
    slot.release();
  });
  await time.sleep(1, OPEN);
  assert.equal(comment.signal.aborted, true, "the comment gave way");
  comment.release();
  await Promise.all([progress, final]);
  assert.deepEqual(order, ["final", "progress"]);
});

Deno.test("ForgeLimits pauses every request until a rate limit's time, on the injected clock", async () => {
  const time = new FakeTime();
  const github = limits(time);
  github.pause(60_000, "secondary rate limit");
  const granted: number[] = [];
  await Promise.all([0, 1, 2].map(async () => {
    const slot = await github.acquire({ write: true, priority: "final" });
    granted.push(time.monotonic());
    slot.release();
  }));
  assert.deepEqual(granted, [60_000, 60_000, 60_000]);
});

Deno.test("ForgeLimits gives up what a pause past the time to finish holds, and counts it", async () => {
  const time = new FakeTime();
  const github = limits(time);
  github.pause(60_000, "403: slow down");
  github.finishBy(time.now() + 45_000);
  for (let index = 0; index < 3; index++) {
    await assert.rejects(
      github.acquire({ write: true, priority: "final" }),
      (error) => error instanceof HttpFailure && error.givenUp,
    );
  }
  assert.deepEqual(github.givenUp, { count: 3, why: "403: slow down" });
  github.close();
});

Deno.test("ForgeLimits ends every request at once after a refused token", async () => {
  const github = limits();
  github.refuse(new HttpFailure("unauthorized", "401"));
  await assert.rejects(
    github.acquire({ write: false, priority: "progress" }),
    (error) => error instanceof HttpFailure && error.kind === "unauthorized",
  );
});

Deno.test("ForgeLimits refuses more than 10 requests in flight", () => {
  assert.throws(
    () =>
      new ForgeLimits("GitHub", new FakeTime(), {
        inFlight: 11,
        writes: 1,
      }),
    RangeError,
  );
});
