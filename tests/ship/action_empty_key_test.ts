/** The action's refusal of an empty key names both causes a workflow author meets. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runCommand } from "../support/command.ts";
import { toolTest } from "../support/tools.ts";

const SCRIPT = new URL("../../scripts/action.sh", import.meta.url).pathname;

toolTest(
  "an empty api-key input names a fork's run and a reusable workflow without secrets: inherit",
  { tools: ["sh"], notOn: ["windows"] },
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "service-ci-empty-key-" });
    try {
      const output = join(dir, "output");
      const { code, stdout, stderr } = await runCommand("sh", [SCRIPT], {
        env: {
          PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
          GITHUB_OUTPUT: output,
          SERVICE_API_KEY: "",
          SERVICE_CI_AGENT: "6f1d2c3b-0a9e-4c8d-9b7a-1e2f3a4b5c6d",
        },
        clearEnv: true,
      });
      const text = stdout + stderr;
      assert.equal(code, 2, text);
      assert.match(text, /^::error title=service-ci action::the api-key input is empty/m);
      assert.match(text, /a workflow started from a fork gets no secrets/);
      assert.match(text, /reusable workflow .* secrets: inherit/);
      // One annotation line: a workflow command ends at the first newline.
      assert.equal(text.split("\n").filter((line) => line.startsWith("::error")).length, 1);
      assert.equal(await Deno.readTextFile(output), "passed=false\nexit-code=2\n");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
