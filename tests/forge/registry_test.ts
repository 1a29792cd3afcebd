/**
 * The forges' registry (issue 42): one adapter per forge, each found by its CI; what the target
 * says of a forge comes from its adapter alone.
 */

import assert from "node:assert/strict";
import { PROVIDERS } from "../../src/ci/providers.ts";
import { forgeNamed, forgeOf, FORGES } from "../../src/forge/registry.ts";
import { describeTarget, forgeTarget } from "../../src/forge/target.ts";
import { githubMetadata } from "../support/report_fixtures.ts";

Deno.test("every forge has its own name and CI, a CI of the providers' table", () => {
  const names = FORGES.map((forge) => forge.name);
  assert.equal(new Set(names).size, names.length);
  for (const forge of FORGES) {
    assert.ok(PROVIDERS.some((ci) => ci.id === forge.provider), forge.provider);
    assert.equal(forgeNamed(forge.name), forge);
    assert.equal(forgeOf(forge.provider, "statuses"), forge);
  }
  assert.throws(() => forgeNamed("Gitea"), TypeError);
});

Deno.test("a comment goes only to a forge with a comment side, Code Insights only to the forge that has it", () => {
  for (const forge of FORGES) {
    assert.equal(forgeOf(forge.provider, "comment"), forge.comment ? forge : undefined);
  }
  assert.deepEqual(
    FORGES.filter((forge) => forge.codeInsights).map((forge) => forge.name),
    ["Bitbucket"],
  );
  assert.equal(forgeOf("jenkins", "statuses"), undefined);
});

Deno.test("the skip line for a CI with no forge names every forge's CI, from the registry", () => {
  const metadata = { ...githubMetadata, provider: "jenkins" };
  const statuses = forgeTarget({}, { metadata }, "statuses");
  assert.deepEqual(statuses, {
    skip:
      "service-ci: no commit statuses: commit statuses are written from GitHub Actions, GitLab CI and Bitbucket Pipelines only (this build: jenkins)",
  });
  const comment = forgeTarget({}, { metadata }, "comment");
  assert.deepEqual(comment, {
    skip:
      "service-ci: no pull-request comment: comments are written from GitHub Actions and GitLab CI only (this build: jenkins)",
  });
});

Deno.test("describeTarget() says each forge's change in its own words, and never a token", () => {
  const sha = "4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c";
  const gitlab = forgeTarget(
    {
      gitlabToken: "glpat-registry-test-token",
      gitlabApiUrl: "https://gitlab.example/api/v4",
      ci: { CI_PROJECT_ID: "42", CI_MERGE_REQUEST_IID: "7", CI_COMMIT_SHA: sha },
    },
    { metadata: { ...githubMetadata, provider: "gitlab", commit_sha: sha } },
    "comment",
  );
  assert.ok(!("skip" in gitlab));
  const said = describeTarget(gitlab);
  assert.equal(
    said,
    "on GitLab merge request !7, commit 4f1c2d3 (the merge request's head) of 42, with SERVICE_GITLAB_TOKEN to https://gitlab.example/api/v4",
  );
  assert.ok(!said.includes("glpat"));
});
