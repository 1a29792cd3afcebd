/**
 * The contract a comment cites is one a reader can open: every "contract §N" in src/, tests/,
 * docs/ and scripts/ names a `## §N` section of docs/contract.md, and no tracked file names a path
 * outside the repository (a build machine's copy of a spec, a home directory).
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { ROOT } from "../support/docs.ts";

const CONTRACT = "docs/contract.md";
const CONTRACT_TEXT = Deno.readTextFileSync(join(ROOT, CONTRACT));

/** The sections of docs/contract.md, in order; the code, tests and docs cite them by number. */
const SECTIONS = [
  "§1 The two operations",
  "§2 Reading a run",
  "§3 HTTP answers",
  "§4 The command line",
  "§5 Exit codes",
  "§6 What is printed",
];

// Where citations of the contract may be: what the issue asks to resolve, and the README.
const CITING = /^(?:src|tests|docs|scripts)\/|^README\.md$/;

// A `§` that belongs to another document (`RFC 9110 §15.5`) is not a citation of the contract.
const OTHER_DOCUMENT = /\b(?:RFC|ECMA-?)\s?\d+,?\s*$/;

// Paths that exist only on some machine: a checkout's parent, a home directory, a Windows drive,
// a sibling of the repository. Written so that this file does not match itself.
const OUTSIDE_PATH = /(?<![\w.-])\/(?:work|home|Users)\/|[C]:\\|\.\.\/shared\b/g;

// The spec's file name on the machine it came from; the repository's copy is docs/contract.md.
const FOREIGN_CONTRACT = /\bCONTRACT\.md\b/g;

/**
 * Example data that looks like an outside path and is not one this repository reads: what a CI
 * sets on its own machines, or an input a parser must refuse. Each is one file's one token.
 */
const EXAMPLE_PATHS: ReadonlyArray<{ file: string; token: string; why: string }> = [
  {
    file: "tests/ci/detect_test.ts",
    token: "\u002fhome/runner/work/_temp/_github_workflow/event.json",
    why: "GITHUB_EVENT_PATH as GitHub's runners set it",
  },
  { file: "tests/ci/detect_test.ts", token: "\u002fhome/octocat", why: "HOME of a local run" },
  {
    file: "tests/ci/merge_queue_test.ts",
    token: "\u002fhome/runner/work/_temp/_github_workflow/event.json",
    why: "GITHUB_EVENT_PATH as GitHub's runners set it",
  },
  {
    file: "tests/ci/git_url_test.ts",
    token: "C:" + "\\\\src\\\\acme\\\\widgets",
    why: "a Windows path that is not a git URL",
  },
  {
    file: "tests/outputs/ci/azure_test.ts",
    token: "\u002fwork/dir",
    why: "a fake agent work directory",
  },
];

/** The anchors GitHub gives the headings of a Markdown text (`## §3 HTTP answers` → `3-http-answers`). */
function _anchors(markdown: string): Set<string> {
  const headings = markdown.replace(/^```[^]*?^```/gm, "").matchAll(/^#{1,6} (.+)$/gm);
  return new Set(
    [...headings].map((match) =>
      match[1]!.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-")
    ),
  );
}

/** The section numbers of `## §N` headings in a Markdown text. */
function _sections(markdown: string): Set<number> {
  return new Set([...markdown.matchAll(/^## §(\d+) /gm)].map((match) => Number(match[1])));
}

/** Every `§N` a text cites, ranges (`§2–§5`) expanded, with its line number. */
function _citations(text: string): Array<{ line: number; section: number; cited: string }> {
  const found: Array<{ line: number; section: number; cited: string }> = [];
  text.split("\n").forEach((line, index) => {
    for (const match of line.matchAll(/§(\d+)(?:\s*[–-]\s*§(\d+))?/g)) {
      if (OTHER_DOCUMENT.test(line.slice(0, match.index))) continue;
      const first = Number(match[1]);
      const last = match[2] === undefined ? first : Number(match[2]);
      for (let section = first; section <= Math.max(first, last); section++) {
        found.push({ line: index + 1, section, cited: match[0] });
      }
    }
  });
  return found;
}

/** Citations of sections that `sections` lacks, as `file:line: §N`. */
function _unresolved(file: string, text: string, sections: ReadonlySet<number>): string[] {
  return _citations(text)
    .filter((citation) => !sections.has(citation.section))
    .map((citation) =>
      `${file}:${citation.line}: ${citation.cited} (no section ${citation.section})`
    );
}

/** The whitespace- and quote-delimited token around `index`. */
function _token(text: string, index: number): string {
  const stop = /[\s"'`()<>[\]{},;]/;
  let start = index;
  let end = index;
  while (start > 0 && !stop.test(text[start - 1]!)) start--;
  while (end < text.length && !stop.test(text[end]!)) end++;
  return text.slice(start, end);
}

/** Outside paths a file names, as `file:line: token`, less the example data of `allowed`. */
function _outsidePaths(
  file: string,
  text: string,
  allowed: ReadonlyArray<{ file: string; token: string }>,
): string[] {
  const matches = [...text.matchAll(OUTSIDE_PATH), ...text.matchAll(FOREIGN_CONTRACT)]
    .sort((a, b) => a.index - b.index);
  const found = new Set<string>();
  for (const match of matches) {
    const token = _token(text, match.index);
    if (allowed.some((entry) => entry.file === file && entry.token === token)) continue;
    const line = text.slice(0, match.index).split("\n").length;
    found.add(`${file}:${line}: ${token}`);
  }
  return [...found];
}

/** Every text file git tracks, with its contents. */
function _trackedTextFiles(): Array<{ file: string; text: string }> {
  const { code, stdout } = new Deno.Command("git", {
    args: ["ls-files", "-z"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "inherit",
  }).outputSync();
  assert.equal(code, 0, "git ls-files");
  const files = new TextDecoder().decode(stdout).split("\0").filter((file) => file !== "");
  const texts: Array<{ file: string; text: string }> = [];
  for (const file of files) {
    let bytes: Uint8Array;
    try {
      bytes = Deno.readFileSync(join(ROOT, file));
    } catch (error) {
      // Deleted in the working tree but not yet in the index: nothing to read.
      if (error instanceof Deno.errors.NotFound) continue;
      throw error;
    }
    if (bytes.includes(0)) continue;
    texts.push({ file, text: new TextDecoder().decode(bytes) });
  }
  return texts;
}

const TRACKED = _trackedTextFiles();

Deno.test("docs/contract.md has the six sections the code cites, in order", () => {
  const headings = [...CONTRACT_TEXT.matchAll(/^## (§.*)$/gm)].map((match) => match[1]);
  assert.deepEqual(headings, SECTIONS);
});

Deno.test("every contract §N in src/, tests/, docs/ and scripts/ names a section of docs/contract.md", () => {
  const sections = _sections(CONTRACT_TEXT);
  const cited = TRACKED.filter(({ file }) => CITING.test(file));
  assert.ok(cited.some(({ file }) => file === "src/service/verdict.ts"), "the scan reaches src/");
  const unresolved = cited.flatMap(({ file, text }) => _unresolved(file, text, sections));
  assert.deepEqual(unresolved, []);
});

Deno.test("no tracked file names a path outside the repository", () => {
  assert.ok(TRACKED.length > 100, `${TRACKED.length} tracked text files`);
  const found = TRACKED.flatMap(({ file, text }) => _outsidePaths(file, text, EXAMPLE_PATHS));
  assert.deepEqual(found, []);
});

Deno.test("every example path allowed above is still in its file", () => {
  for (const { file, token, why } of EXAMPLE_PATHS) {
    const text = TRACKED.find((tracked) => tracked.file === file)?.text ?? "";
    const named = _outsidePaths(file, text, []);
    assert.ok(
      named.some((entry) => entry.endsWith(`: ${token}`)),
      `${file} no longer holds ${token} (${why}): drop it from the list`,
    );
  }
});

Deno.test("every link into docs/contract.md, and every link out of it, names a heading that exists", () => {
  const broken: string[] = [];
  for (const { file, text } of TRACKED.filter(({ file }) => file.endsWith(".md"))) {
    const dir = dirname(file);
    for (const match of text.matchAll(/\]\(([^)#\s]*)#([^)\s]+)\)/g)) {
      const target = match[1] === "" ? file : join(dir, match[1]!);
      if (file !== CONTRACT && target !== CONTRACT) continue;
      const markdown = TRACKED.find((tracked) => tracked.file === target)?.text;
      if (markdown === undefined) continue; // tests/docs/readme_test.ts reports a missing file
      if (!_anchors(markdown).has(match[2]!)) broken.push(`${file}: ${match[0]}`);
    }
  }
  assert.ok(_anchors(CONTRACT_TEXT).has("3-http-answers"), [..._anchors(CONTRACT_TEXT)].join(" "));
  assert.deepEqual(broken, []);
});

// The checks above pass on this repository; these show they would not pass on a bad one.

const S = "\u00a7";

Deno.test("a citation of a section docs/contract.md lacks is reported with its line", () => {
  const sections = _sections(`# C\n\n## ${S}1 One\n\n## ${S}2 Two\n`);
  const text = `// contract ${S}1\n// contract ${S}3: no such section\n// ${S}1${"\u2013"}${S}4\n`;
  assert.deepEqual(_unresolved("src/x.ts", text, sections), [
    `src/x.ts:2: ${S}3 (no section 3)`,
    `src/x.ts:3: ${S}1\u2013${S}4 (no section 3)`,
    `src/x.ts:3: ${S}1\u2013${S}4 (no section 4)`,
  ]);
  assert.deepEqual(_unresolved("src/x.ts", `// RFC 9110 ${S}15.5.5\n`, sections), []);
});

Deno.test("a path on a build machine, a home directory or a sibling checkout is reported", () => {
  const text = [
    ` * The contract (docs: \u002fwork\u002fshared/${"CONTRACT"}.md ${S}2)`,
    `const env = { HOME: "\u002fhome/ci" };`,
    "see ..\u002fshared/notes.md or C\u003a\u005cUsers\u005cme",
    "https://example.com\u002fwork\u002fitems is a URL, not a path",
  ].join("\n");
  assert.deepEqual(_outsidePaths("tests/x.ts", text, []), [
    `tests/x.ts:1: \u002fwork\u002fshared/${"CONTRACT"}.md`,
    "tests/x.ts:2: \u002fhome/ci",
    "tests/x.ts:3: ..\u002fshared/notes.md",
    "tests/x.ts:3: C\u003a\u005cUsers\u005cme",
  ]);
  const allowed = [{ file: "tests/x.ts", token: "\u002fhome/ci" }];
  assert.ok(!_outsidePaths("tests/x.ts", text, allowed).includes("tests/x.ts:2: \u002fhome/ci"));
});
