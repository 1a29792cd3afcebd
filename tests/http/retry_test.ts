import assert from "node:assert/strict";
import { HttpFailure } from "../../src/http/failure.ts";
import { retrying } from "../../src/http/retry.ts";

const flaky = (failures: readonly unknown[]) => (tries: number): Promise<string> =>
  tries > failures.length
    ? Promise.resolve(`answer ${tries}`)
    : Promise.reject(failures[tries - 1]);

Deno.test("retrying() tries again after each wait it is given, counting the tries from 1", async () => {
  const sleeps: number[] = [];
  const seen: number[] = [];
  const failures = [new HttpFailure("transient", "a"), new HttpFailure("server", "b")];
  const answer = await retrying(flaky(failures), (failure, tries) => {
    seen.push(tries);
    return failure.retryAfterMs ?? tries * 100;
  }, (ms) => Promise.resolve(void sleeps.push(ms)));
  assert.equal(answer, "answer 3");
  assert.deepEqual(seen, [1, 2]);
  assert.deepEqual(sleeps, [100, 200]);
});

Deno.test("retrying() throws the failure its caller will not wait for, another error at once, and the caller's own", async () => {
  const sleeps: number[] = [];
  const sleep = (ms: number) => Promise.resolve(void sleeps.push(ms));
  const refused = new HttpFailure("refused", "no");
  await assert.rejects(retrying(flaky([refused]), () => undefined, sleep), (e) => e === refused);
  const bug = new TypeError("a bug");
  await assert.rejects(retrying(flaky([bug]), () => 0, sleep), (e) => e === bug);
  const gaveUp = new Error("gave up");
  const waitThrows = () => {
    throw gaveUp;
  };
  await assert.rejects(
    retrying(flaky([new HttpFailure("transient", "x")]), waitThrows, sleep),
    (e) => e === gaveUp,
  );
  assert.deepEqual(sleeps, []);
});

Deno.test("retrying() ends with the sleep's rejection: an abort during a wait", async () => {
  const stop = new Error("interrupted");
  const failing = flaky([new HttpFailure("transient", "x")]);
  await assert.rejects(retrying(failing, () => 5, () => Promise.reject(stop)), (e) => e === stop);
});
