import assert from "node:assert/strict";
import { nextLink } from "../../../src/forge/http.ts";

Deno.test('nextLink() reads the rel="next" address of a Link header', () => {
  assert.equal(
    nextLink(
      '<https://api.github.com/x?page=3>; rel="prev", <https://api.github.com/x?page=5>; rel="next", <https://api.github.com/x?page=9>; rel="last"',
    ),
    "https://api.github.com/x?page=5",
  );
  assert.equal(
    nextLink("<https://gitlab.example/api/v4/n?page=2>; rel=next"),
    "https://gitlab.example/api/v4/n?page=2",
  );
  assert.equal(
    nextLink('<https://h/x?page=2>; title="a"; rel="prefetch next"'),
    "https://h/x?page=2",
  );
});

Deno.test("nextLink() returns null without a next page", () => {
  assert.equal(nextLink(null), null);
  assert.equal(nextLink(""), null);
  assert.equal(nextLink('<https://api.github.com/x?page=1>; rel="prev"'), null);
  assert.equal(nextLink('<https://api.github.com/x?page=1>; rel="nextish"'), null);
});
