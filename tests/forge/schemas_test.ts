/**
 * Every body service-ci sends to GitLab and Bitbucket validates against the forges' own request
 * schemas (tests/fixtures/forges/, copied from the forges' API descriptions), fields outside them
 * refused, as GitHub's bodies are against its OpenAPI description (tests/outputs/statuses_test.ts).
 */

import assert from "node:assert/strict";
import { systemClock } from "../../src/platform/clock.ts";
import { bitbucket } from "../../src/forge/bitbucket.ts";
import { ForgeClients } from "../../src/forge/clients.ts";
import { forgeTarget } from "../../src/forge/target.ts";
import { forgeConfig } from "../support/native_io.ts";
import { bitbucketAnnotations, bitbucketReport } from "../../src/outputs/ci/bitbucket.ts";
import { finalComment, progressComment } from "../../src/forge/comment/content.ts";
import { gateMarker } from "../../src/forge/comment/history.ts";
import {
  bitbucketAnnotationErrors,
  bitbucketReportErrors,
  bitbucketStatusErrors,
  gitlabNoteErrors,
  gitlabStatusErrors,
} from "../support/forge_schemas.ts";
import {
  githubMetadata,
  hostileReport,
  mixedReport,
  passingReport,
} from "../support/report_fixtures.ts";

const REPORTS = [passingReport, mixedReport, hostileReport];

Deno.test("Bitbucket's Code Insights report and annotations fit Bitbucket's schemas", () => {
  for (const report of REPORTS) {
    assert.deepEqual(bitbucketReportErrors(bitbucketReport(report)), []);
    const annotations = bitbucketAnnotations(report);
    for (let start = 0; start < annotations.length; start += 100) {
      assert.deepEqual(bitbucketAnnotationErrors(annotations.slice(start, start + 100)), []);
    }
  }
});

Deno.test("Bitbucket's build statuses fit Bitbucket's schema, in progress and at the end", async () => {
  const bodies: unknown[] = [];
  const fetchSpy: typeof fetch = (_, init) => {
    bodies.push(JSON.parse(String(init?.body)));
    return Promise.resolve(new Response(null, { status: 201 }));
  };
  const target = forgeTarget(
    forgeConfig({ BITBUCKET_REPO_FULL_NAME: "acme/widgets" }),
    {
      metadata: {
        ...githubMetadata,
        provider: "bitbucket",
        commit_sha: "4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c",
      },
    },
    "statuses",
  );
  assert.ok(!("skip" in target));
  const statuses = bitbucket.statuses(
    target,
    new ForgeClients({
      userAgent: "service-ci/test",
      clock: systemClock,
      http: { makeFetch: () => fetchSpy, timeout: systemClock.timeout },
    }).http(target),
    { warn: () => {}, now: systemClock.now, buildUrl: null },
  );
  for (const report of REPORTS) {
    for (const agent of report.agents) {
      await statuses.write(agent.agentId, { runId: agent.runId, link: null }, {});
      if (agent.outcome !== "triggered") {
        await statuses.write(agent.agentId, {
          runId: agent.runId,
          link: agent.url,
          ended: { agent, report },
        }, {});
      }
    }
  }
  assert.ok(bodies.length > 3);
  for (const body of bodies) {
    assert.deepEqual(bitbucketStatusErrors(body), [], JSON.stringify(body));
  }
});

Deno.test("GitLab's merge request notes fit GitLab's schema, and the checks can fail", () => {
  const marker = gateMarker({ workflow: "", job: "gate", agents: ["a"] });
  for (const report of REPORTS) {
    const body = finalComment(marker, report, { history: new Map() });
    assert.deepEqual(gitlabNoteErrors({ body }), []);
  }
  const progress = progressComment(marker, {
    commitSha: null,
    buildUrl: null,
    runs: [{ agentId: "a", runId: "run_1", url: null }],
  }, { history: new Map() });
  assert.deepEqual(gitlabNoteErrors({ body: progress }), []);
  assert.deepEqual(gitlabNoteErrors({ body: "x", note: "y" }), ["unknown field note"]);
  assert.notDeepEqual(gitlabStatusErrors({ state: "passed" }), []);
  assert.deepEqual(gitlabStatusErrors({ state: "success", context: "x", sha: "y" }), [
    "unknown field sha",
  ]);
  assert.notDeepEqual(bitbucketStatusErrors({ state: "SUCCESS", key: "k" }), []);
});
