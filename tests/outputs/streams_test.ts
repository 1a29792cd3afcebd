import assert from "node:assert/strict";
import { isCapableTerminal } from "../../src/outputs/streams.ts";

Deno.test("isCapableTerminal() takes a terminal for one with a live line, but TERM=dumb for plain lines", () => {
  assert.equal(isCapableTerminal(true, "xterm-256color"), true);
  assert.equal(isCapableTerminal(true, undefined), true);
  assert.equal(isCapableTerminal(true, "dumb"), false);
  assert.equal(isCapableTerminal(false, "xterm-256color"), false);
});
