import assert from "node:assert/strict";
import { denoVersionRefusal, MINIMUM_DENO_VERSION } from "../../src/platform/deno_version.ts";

Deno.test("denoVersionRefusal() lets the minimum and every later Deno through", () => {
  for (const version of [MINIMUM_DENO_VERSION, "2.1.1", "2.2.0", "2.9.6", "3.0.0", "10.0.0"]) {
    assert.equal(denoVersionRefusal(version), undefined, version);
  }
});

Deno.test("denoVersionRefusal() refuses an older Deno, naming it, the minimum and both fixes", () => {
  for (const version of ["2.0.6", "2.0.0", "1.46.3", "1.99.99", "0.9.0"]) {
    const refusal = denoVersionRefusal(version);
    assert.equal(
      refusal?.startsWith(
        `service-ci: Deno ${version} is older than ${MINIMUM_DENO_VERSION}, the oldest that runs service-ci: `,
      ),
      true,
      refusal,
    );
    assert.match(refusal!, /upgrade Deno/);
    assert.match(refusal!, /release binary/);
    assert.ok(!refusal!.includes("\n"));
  }
});

Deno.test("denoVersionRefusal() compares numbers, not text, and reads a pre-release's version", () => {
  assert.equal(denoVersionRefusal("2.10.0"), undefined);
  assert.notEqual(denoVersionRefusal("2.0.10"), undefined);
  assert.notEqual(denoVersionRefusal("2.0.6-rc.1"), undefined);
  assert.equal(denoVersionRefusal("2.1.0+abc123"), undefined);
});

Deno.test("denoVersionRefusal() lets a version it cannot read through: it is not known to be old", () => {
  for (const version of ["", "canary", "2.1", "v2.0.0"]) {
    assert.equal(denoVersionRefusal(version), undefined, version);
  }
});

Deno.test("the minimum is the same in the docs as in src/platform/deno_version.ts", () => {
  for (const path of ["docs/install.md", "docs/recipes/pre-push.md", "docs/compatibility.md"]) {
    const text = Deno.readTextFileSync(new URL(`../../${path}`, import.meta.url));
    const named = [...text.matchAll(/Deno (\d+\.\d+\.\d+) or later/g)].map((match) => match[1]);
    assert.ok(named.length > 0, `${path} names no minimum ("Deno x.y.z or later")`);
    assert.deepEqual(new Set(named), new Set([MINIMUM_DENO_VERSION]), path);
  }
});
