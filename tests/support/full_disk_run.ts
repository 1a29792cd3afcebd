/**
 * Drives `run()` with `--junit /dev/full` and the real report-file effects, and prints what it
 * did as JSON: `tests/run_test.ts` runs it with every permission, which /dev/full needs.
 */

import { run } from "../../src/run.ts";
import { checkReportPath, openReportFile } from "../../src/platform/system.ts";
import { AGENT, harness } from "./run_harness.ts";

const faked = harness({ args: ["--agent", AGENT, "--json", "--junit", "/dev/full"] });
const code = await run({
  ...faked.effects,
  files: { ...faked.effects.files, checkReportPath, openReportFile },
});
console.log(JSON.stringify({
  code,
  stdout: faked.stdout.join(""),
  stderr: faked.stderr.join(""),
}));
