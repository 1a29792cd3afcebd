import assert from "node:assert/strict";
import { OPTION_NAMES } from "../../src/config/options.ts";
import { helpText } from "../../src/config/help.ts";
import { REPOSITORY_URL, VERSION } from "../../src/config/version.ts";

const DOCKERFILE = Deno.readTextFileSync(new URL("../../Dockerfile", import.meta.url));

Deno.test("helpText() keeps every line within 100 columns", () => {
  for (const builtIn of [undefined, "https://evaluation.service.example/api/v1/"]) {
    for (const line of helpText(builtIn).split("\n")) {
      assert.ok([...line].length <= 100, `${[...line].length} columns: ${line}`);
    }
  }
});

Deno.test("helpText() names every option and the built-in address, or none", () => {
  const text = helpText(undefined);
  for (const name of OPTION_NAMES) assert.ok(text.includes(`--${name}`), `--${name}`);
  assert.match(text, /\n {28}built-in default: none\n/);
  assert.match(
    helpText("https://service.example/"),
    /built-in default: https:\/\/service\.example\/\n/,
  );
});

Deno.test("helpText() ends with a link to the docs of this very version", () => {
  const last = helpText(undefined).trimEnd().split("\n").at(-1);
  assert.equal(last, `Docs for this version: ${REPOSITORY_URL}/tree/v${VERSION}/docs`);
});

Deno.test("REPOSITORY_URL is the repository the image's source label names", () => {
  assert.ok(
    DOCKERFILE.includes(`org.opencontainers.image.source="${REPOSITORY_URL}"`),
    "Dockerfile's org.opencontainers.image.source",
  );
});
