import assert from "node:assert/strict";
import { gateMarker, hasMarker } from "../../../src/forge/comment/history.ts";

const A = "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10";
const B = "1c1d5b6f-9a5f-4b9f-8b64-4a2d3cae8f21";

Deno.test("gateMarker() is a hidden HTML comment with 16 hex digits", () => {
  assert.match(
    gateMarker({ workflow: "ci", job: "gate", agents: [A] }),
    /^<!-- service-ci gate:[0-9a-f]{16} -->$/,
  );
});

Deno.test("gateMarker() ignores the order, case and repeats of the agents", () => {
  const marker = gateMarker({ workflow: "ci", job: "gate", agents: [A, B] });
  assert.equal(gateMarker({ workflow: "ci", job: "gate", agents: [B, A] }), marker);
  assert.equal(
    gateMarker({ workflow: "ci", job: "gate", agents: [B.toUpperCase(), A, A] }),
    marker,
  );
});

Deno.test("gateMarker() differs for another workflow, job or set of agents", () => {
  const markers = new Set([
    gateMarker({ workflow: "ci", job: "gate", agents: [A] }),
    gateMarker({ workflow: "nightly", job: "gate", agents: [A] }),
    gateMarker({ workflow: "ci", job: "gate-2", agents: [A] }),
    gateMarker({ workflow: "ci", job: "gate", agents: [B] }),
    gateMarker({ workflow: "ci", job: "gate", agents: [A, B] }),
    // The parts cannot be shifted into one another.
    gateMarker({ workflow: "cig", job: "ate", agents: [A] }),
    gateMarker({ workflow: 'ci","gate', job: "", agents: [A] }),
  ]);
  assert.equal(markers.size, 7);
});

Deno.test("gateMarker() keeps hostile workflow and job names out of the marker", () => {
  const marker = gateMarker({
    workflow: "x --> <b>",
    job: "<!-- service-ci gate:0 -->",
    agents: [],
  });
  assert.match(marker, /^<!-- service-ci gate:[0-9a-f]{16} -->$/);
});

Deno.test("hasMarker() accepts the marker only as the body's first line", () => {
  const marker = gateMarker({ workflow: "ci", job: "gate", agents: [A] });
  assert.equal(hasMarker(`${marker}\n### title`, marker), true);
  assert.equal(hasMarker(`${marker}\r\n### title`, marker), true);
  assert.equal(hasMarker(marker, marker), true);
  assert.equal(hasMarker(`text\n${marker}`, marker), false);
  assert.equal(hasMarker(`> ${marker}`, marker), false);
  assert.equal(hasMarker(`${marker.replace("-->", "")}\n`, marker), false);
  const other = gateMarker({ workflow: "ci", job: "gate", agents: [B] });
  assert.equal(hasMarker(`${other}\n### title`, marker), false);
});
