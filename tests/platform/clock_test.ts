// The real clock where no time passes; its waits on real time are in tests/e2e/clock_test.ts.

import assert from "node:assert/strict";
import { sleep } from "../../src/platform/clock.ts";

Deno.test("sleep() of no time resolves without a timer, before a 0 ms timer started earlier", async () => {
  for (const ms of [0, -5, Number.NaN, Number.NEGATIVE_INFINITY]) {
    const order: string[] = [];
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        order.push("timer");
        resolve();
      }, 0)
    );
    await sleep(ms, new AbortController().signal);
    order.push("sleep");
    await timer;
    assert.deepEqual(order, ["sleep", "timer"], `sleep(${ms})`);
  }
});

Deno.test({
  name:
    "sleep() rejects with the signal's reason when the signal aborts, before or during the wait",
  // The runtime's timer of an aborted wait runs out on its own, unreferenced.
  sanitizeOps: false,
  fn: async () => {
    const before = new AbortController();
    before.abort(new Error("before"));
    await assert.rejects(sleep(10, before.signal), { message: "before" });
    const during = new AbortController();
    const waiting = sleep(60_000, during.signal);
    during.abort(new Error("during"));
    await assert.rejects(waiting, { message: "during" });
  },
});
