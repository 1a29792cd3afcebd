/**
 * The TeamCity lines of the docs against the provider table (src/ci/providers.ts): the branch and
 * the pull request are passed from the parameters the table names, and no page passes
 * `%teamcity.build.branch%` without saying what to pass on a pull request's build, where it is
 * `pull/42`, not a branch.
 */

import assert from "node:assert/strict";
import { PROVIDERS } from "../../src/ci/providers.ts";

const PAGES = ["docs/ci-metadata.md", "docs/how-it-works.md", "docs/ci/teamcity.md"];

Deno.test("every page that tells TeamCity users what to pass gives the table's parameters, for pull requests and for other builds", async () => {
  const parameters = PROVIDERS.find((provider) => provider.id === "teamcity")?.parameters;
  assert.ok(parameters !== undefined, "the TeamCity provider names its parameters");
  const otherwise = `--branch ${parameters.branch}`;
  const pullRequest = `--branch ${parameters.pullRequest.branch}`;
  const number = `--pull-request ${parameters.pullRequest.number}`;
  for (const page of PAGES) {
    const text = await Deno.readTextFile(new URL(`../../${page}`, import.meta.url));
    assert.ok(text.includes(otherwise), `${page} gives ${otherwise}`);
    assert.ok(text.includes(pullRequest), `${page} gives ${pullRequest} for a pull request`);
    // Every %teamcity.…% parameter a page names is one of the table's.
    const named = new Set(text.match(/%teamcity\.[\w.]+%/g));
    const known: string[] = [
      parameters.branch,
      parameters.pullRequest.branch,
      parameters.pullRequest.number,
    ];
    assert.deepEqual([...named].filter((name) => !known.includes(name)), [], page);
  }
  const teamcity = await Deno.readTextFile(new URL("../../docs/ci/teamcity.md", import.meta.url));
  assert.ok(teamcity.includes(`${pullRequest} ${number}`), "teamcity.md gives the whole PR line");
});
