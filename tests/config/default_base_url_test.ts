/**
 * The release's built-in service address, in process: the source tree has none, and the bake
 * script writes, reads and refuses it (tests/e2e/default_base_url_test.ts runs the baked program).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  DEFAULT_BASE_URL_MODULE,
  main as bakeMain,
  requestedDefaultBaseUrl,
  withDefaultBaseUrl,
} from "../../scripts/default_base_url.ts";
import { DEFAULT_BASE_URL } from "../../src/config/default_base_url.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

Deno.test("the source tree has no built-in service address", () => {
  assert.equal(DEFAULT_BASE_URL, undefined);
});

Deno.test("bake-default's main() writes the checked address from --url, or from the variable", async () => {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-bake-" });
  try {
    await Deno.mkdir(join(dir, "src", "config"), { recursive: true });
    const module = join(dir, DEFAULT_BASE_URL_MODULE);
    const original = await Deno.readTextFile(join(ROOT, DEFAULT_BASE_URL_MODULE));
    await Deno.writeTextFile(module, original);
    const env = (name: string) =>
      name === "SERVICE_DEFAULT_BASE_URL" ? "https://variable.example" : undefined;
    assert.equal(await bakeMain(["--url", "https://flag.example"], { root: dir, env }), 0);
    assert.match(await Deno.readTextFile(module), /= "https:\/\/flag\.example\/";/);
    await Deno.writeTextFile(module, original);
    assert.equal(await bakeMain([], { root: dir, env }), 0);
    assert.match(await Deno.readTextFile(module), /= "https:\/\/variable\.example\/";/);
    await Deno.writeTextFile(module, original);
    assert.equal(await bakeMain([], { root: dir, env: () => undefined }), 0);
    assert.equal(await Deno.readTextFile(module), original);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("requestedDefaultBaseUrl() takes the flag over the variable and says which it was", () => {
  const env = (name: string) => name === "SERVICE_DEFAULT_BASE_URL" ? "https://v.example" : "";
  assert.deepEqual(requestedDefaultBaseUrl({ name: "--url", value: "https://f.example" }, env), {
    url: "https://f.example",
    source: "--url",
  });
  assert.deepEqual(requestedDefaultBaseUrl({ name: "--url", value: undefined }, env), {
    url: "https://v.example",
    source: "SERVICE_DEFAULT_BASE_URL",
  });
  assert.equal(requestedDefaultBaseUrl({ name: "--url", value: "" }, env), undefined);
  assert.equal(requestedDefaultBaseUrl({ name: "--url", value: undefined }, () => ""), undefined);
});

Deno.test("withDefaultBaseUrl() sets and unsets the one declaration, and refuses other text", () => {
  const text = Deno.readTextFileSync(join(ROOT, DEFAULT_BASE_URL_MODULE));
  const baked = withDefaultBaseUrl(text, "https://service.example");
  assert.match(baked, /= "https:\/\/service\.example\/";/);
  assert.equal(withDefaultBaseUrl(baked, undefined), text);
  assert.throws(() => withDefaultBaseUrl("const x = 1;", "https://a.example"), TypeError);
});
