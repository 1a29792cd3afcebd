import assert from "node:assert/strict";
import { runCommand } from "../support/command.ts";
import { taskArgs } from "../support/tasks.ts";

Deno.test("deno task bench --startup prints start-up and overhead as ratios to deno eval 0", async () => {
  const { code, stdout, stderr } = await runCommand(
    Deno.execPath(),
    [...taskArgs("bench"), "--startup", "--reps", "1"],
    { cwd: new URL("../../", import.meta.url).pathname },
  );
  assert.equal(code, 0, stderr);
  assert.match(
    stdout,
    /^\| start-up \| `deno eval 0` \(Deno's floor\) \| \d+ ms \| 1\.00× floor \|$/m,
  );
  assert.match(stdout, /^\| start-up \| `service-ci --version` \| \d+ ms \| \d+\.\d\d× floor \|$/m);
  for (const where of ["in CI", "in a local checkout"]) {
    assert.match(
      stdout,
      new RegExp(
        `^\\| overhead \\| immediately finished gate, ${where}.* \\| \\d+ ms \\| \\d+\\.\\d\\d× floor \\|$`,
        "m",
      ),
    );
    assert.match(
      stdout,
      new RegExp(
        `^\\| overhead of an immediately finished gate ${where}.*\\| \\d+\\.\\d\\d× \\| ≤ 1\\.50× \\| (yes|\\*\\*no\\*\\*) \\|$`,
        "m",
      ),
    );
  }
  assert.doesNotMatch(stdout, /wrong exit code/);
  assert.doesNotMatch(stdout, /fan-out|\d+\.\d\d s run/);
});
