import assert from "node:assert/strict";
import { repositorySlug } from "../../src/ci/git_url.ts";

const SLUGS: readonly [string, string | null][] = [
  ["https://github.com/acme/widgets", "acme/widgets"],
  ["https://github.com/acme/widgets.git", "acme/widgets"],
  ["https://github.com/acme/widgets/", "acme/widgets"],
  ["https://github.com/acme/widgets.git/", "acme/widgets"],
  ["http://git.acme.test:8080/acme/widgets.git", "acme/widgets"],
  ["https://gitlab.com/group/sub/widgets.git", "group/sub/widgets"],
  ["https://gitlab.com/a/b/c/d/widgets", "a/b/c/d/widgets"],
  ["https://oauth2:glpat-s3cret@gitlab.com/acme/widgets.git", "acme/widgets"],
  ["https://gitlab-ci-token:glcbt-s3cret@gitlab.com/group/sub/widgets.git", "group/sub/widgets"],
  ["https://x-access-token:ghs_s3cret@github.com/acme/widgets", "acme/widgets"],
  ["https://user:p@ss@github.com/acme/widgets.git", "acme/widgets"],
  ["https://octocat@github.com/acme/widgets.git", "acme/widgets"],
  ["https://github.com/acme/widgets.git?ref=main#readme", "acme/widgets"],
  ["ssh://git@github.com/acme/widgets.git", "acme/widgets"],
  ["ssh://git@github.com:22/acme/widgets.git", "acme/widgets"],
  ["ssh://git@git.acme.test:2222/group/sub/widgets.git", "group/sub/widgets"],
  ["ssh://git@github.com:acme/widgets.git", "acme/widgets"],
  ["SSH://git@github.com/Acme/Widgets.git", "Acme/Widgets"],
  ["git+ssh://git@github.com/acme/widgets.git", "acme/widgets"],
  ["git://github.com/acme/widgets.git", "acme/widgets"],
  ["git@github.com:acme/widgets.git", "acme/widgets"],
  ["git@github.com:acme/widgets", "acme/widgets"],
  ["git@gitlab.com:group/sub/widgets.git", "group/sub/widgets"],
  ["github.com:acme/widgets.git", "acme/widgets"],
  ["git@github.com:/acme/widgets.git", "acme/widgets"],
  ["  https://github.com/acme/widgets.git\n", "acme/widgets"],
  ["https://github.com/acme/my.widgets.git", "acme/my.widgets"],
  ["", null],
  ["widgets", null],
  ["acme/widgets", null],
  ["/srv/git/acme/widgets.git", null],
  ["../widgets", null],
  ["C:/src/acme/widgets", null],
  ["C:\\src\\acme\\widgets", null],
  ["file:///srv/git/acme/widgets.git", null],
  ["s3://bucket/acme/widgets.zip", null],
  ["arn:aws:s3:::bucket/widgets.zip", null],
  ["https://github.com/widgets", null],
  ["https://github.com/", null],
  ["git@github.com:widgets.git", null],
  ["https://github.com/acme/../widgets", null],
  ["https://u:tok/en@github.com/acme/widgets", null],
  ["https://github.com/acme/wid%20gets", null],
];

for (const [url, slug] of SLUGS) {
  Deno.test(`repositorySlug() reads ${JSON.stringify(url)} as ${JSON.stringify(slug)}`, () => {
    assert.equal(repositorySlug(url), slug);
  });
}

Deno.test("repositorySlug() never returns any part of the credentials", () => {
  for (const [url, slug] of SLUGS) {
    if (slug === null) continue;
    for (const secret of ["s3cret", "p@ss", "tok"]) {
      if (url.includes(secret)) assert.ok(!slug.includes(secret), `${url} → ${slug}`);
    }
  }
});
