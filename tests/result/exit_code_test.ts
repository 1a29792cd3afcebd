import assert from "node:assert/strict";
import { combineExitCodes, ExitCode } from "../../src/result/exit_code.ts";

Deno.test("combineExitCodes() gives 0 only when every agent passed", () => {
  assert.equal(combineExitCodes([0]), 0);
  assert.equal(combineExitCodes([0, 0, 0]), 0);
  assert.equal(combineExitCodes([0, 1]), 1);
});

Deno.test("combineExitCodes() takes the first that applies of 2, 3, 4, 1, 0", () => {
  assert.equal(combineExitCodes([1, 4]), 4);
  assert.equal(combineExitCodes([4, 3, 1]), 3);
  assert.equal(combineExitCodes([0, 3, 2]), 2);
  assert.equal(combineExitCodes([1, 1, 0]), 1);
  assert.equal(combineExitCodes([4, 0]), 4);
});

Deno.test("combineExitCodes() lets an interrupt win over every other code", () => {
  assert.equal(combineExitCodes([2, 130, 0]), ExitCode.Sigint);
  assert.equal(combineExitCodes([3, 143]), ExitCode.Sigterm);
});

Deno.test("combineExitCodes() refuses an empty list and unknown codes", () => {
  assert.throws(() => combineExitCodes([]), RangeError);
  assert.throws(() => combineExitCodes([0, 7]), RangeError);
});

Deno.test("combineExitCodes() does not depend on the order of the agents", () => {
  const codes = [0, 1, 3, 4];
  for (let i = 0; i < 24; i++) {
    const shuffled = [...codes].sort(() => Math.random() - 0.5);
    assert.equal(combineExitCodes(shuffled), 3);
  }
});
