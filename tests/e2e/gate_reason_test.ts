/**
 * End to end: a failed gate whose service says why, through the real entry point against the fake
 * service: the reason reaches the console, `--json`, JUnit and GitHub's step summary, and the key
 * the service echoes in it reaches none of them.
 */

import assert from "node:assert/strict";
import { inertMarkdown } from "../../src/text/markdown.ts";
import { AGENTS, defaultAgents, KEYS, startFakeService } from "../support/fake_service.ts";
import { assertValidJunit, xmlTest, xpath } from "../support/junit.ts";
import { runProgram } from "../support/program.ts";

const RULE = "jailbreak success rate < 2%";
const REASON = `rule: ${RULE}; score: 0.031; echo: you sent ***; summary: 3 of 97 prompts leaked`;

xmlTest(
  "a failed gate's reason is in the console, --json, JUnit and the step summary",
  async () => {
    const failing = defaultAgents(100).find((agent) => agent.id === AGENTS.failing)!;
    await using service = await startFakeService({
      agents: [{
        ...failing,
        finished: () => ({
          status: "completed",
          results: {
            gate: {
              passed: false,
              rule: RULE,
              score: 0.031,
              echo: `you sent ${KEYS.ci}`,
              by: null,
            },
            summary: "3 of 97 prompts leaked",
          },
        }),
      }],
    });
    const dir = await Deno.makeTempDir({ prefix: "service-ci-reason-" });
    const files = { junit: `${dir}/gate.xml`, summary: `${dir}/summary.md`, output: `${dir}/out` };
    const result = await runProgram(["--agent", failing.id, "--json", "--junit", files.junit], {
      env: {
        SERVICE_API_KEY: KEYS.ci,
        SERVICE_BASE_URL: service.url,
        GITHUB_ACTIONS: "true",
        GITHUB_STEP_SUMMARY: files.summary,
        GITHUB_OUTPUT: files.output,
      },
    });
    assert.equal(result.code, 1, result.stderr);

    assert.match(result.stderr, new RegExp(`agent ${failing.id}: FAILED \\(run run_0001\\): `));
    assert.ok(result.stderr.includes(`FAILED (run run_0001): ${REASON}\n`), result.stderr);

    const document = JSON.parse(result.stdout);
    assert.deepEqual(document.agents[0].gate, {
      rule: RULE,
      score: 0.031,
      echo: "you sent ***",
      summary: "3 of 97 prompts leaked",
    });

    await assertValidJunit(files.junit);
    assert.equal(
      await xpath(files.junit, "string(//failure/@message)"),
      `quality gate failed: ${REASON}`,
    );
    assert.ok((await xpath(files.junit, "string(//failure)")).includes(`gate: ${REASON}`));

    const summary = await Deno.readTextFile(files.summary);
    assert.ok(summary.includes(`❌ failed: ${inertMarkdown(REASON)}`), summary);

    const output = await Deno.readTextFile(files.output);
    for (
      const text of [
        result.stdout,
        result.stderr,
        summary,
        output,
        await Deno.readTextFile(files.junit),
      ]
    ) {
      assert.ok(!text.includes(KEYS.ci));
    }
  },
);

xmlTest(
  "a member that reads as passed is no verdict, and is shown nowhere as a reason",
  async () => {
    const failing = defaultAgents(100).find((agent) => agent.id === AGENTS.failing)!;
    for (const lookAlike of ["pass\u200bed", " passed", "passed\u00a0", "pass\u00aded"]) {
      await using service = await startFakeService({
        agents: [{
          ...failing,
          finished: () => ({
            status: "completed",
            results: { gate: { passed: false, [lookAlike]: true, rule: RULE } },
          }),
        }],
      });
      const dir = await Deno.makeTempDir({ prefix: "service-ci-look-alike-" });
      const files = { junit: `${dir}/gate.xml`, summary: `${dir}/summary.md` };
      const result = await runProgram(["--agent", failing.id, "--json", "--junit", files.junit], {
        env: {
          SERVICE_API_KEY: KEYS.ci,
          SERVICE_BASE_URL: service.url,
          GITHUB_ACTIONS: "true",
          GITHUB_STEP_SUMMARY: files.summary,
        },
      });
      const spelled = JSON.stringify(lookAlike);
      assert.equal(result.code, 3, `${spelled}: ${result.stderr}`);
      const [agent] = JSON.parse(result.stdout).agents;
      assert.equal(agent.outcome, "unchecked");
      assert.deepEqual(agent.gate, {});
      assert.match(agent.error, /reads as results\.gate\.passed/);
      await assertValidJunit(files.junit);
      const shown = [
        result.stdout,
        result.stderr,
        await Deno.readTextFile(files.junit),
        await Deno.readTextFile(files.summary),
      ];
      for (const text of shown) {
        // As read: without Markdown's escapes and zero-width spaces.
        const read = text.replaceAll("&#8203;", "").replaceAll("\\", "");
        assert.doesNotMatch(read, /passed"?: true/, `${spelled}: ${text}`);
      }
    }
  },
);
