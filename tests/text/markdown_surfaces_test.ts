/**
 * Service text on every Markdown surface (GitHub's step summary, Azure's uploaded summary,
 * Buildkite's annotation, the pull/merge request comment) renders as inert text through
 * cmark-gfm, GitHub's own renderer, and through markdown-it: no link, image, HTML, mention,
 * reference or autolink that the service's words could make, and the words themselves intact.
 */

import assert from "node:assert/strict";
// @ts-types="npm:@types/markdown-it@14.1.2"
import MarkdownIt from "npm:markdown-it@14.1.0";
import fc from "npm:fast-check@3.23.2";
import { removeIgnorable } from "../../src/text/ignorable.ts";
import { httpLink, inertMarkdown, markdownLink } from "../../src/text/markdown.ts";
import type { AgentOutcome, RunReport } from "../../src/report/outcome.ts";
import { finalComment, progressComment } from "../../src/forge/comment/content.ts";
import { createAzureWriter } from "../../src/outputs/ci/azure.ts";
import { createBuildkiteWriter } from "../../src/outputs/ci/buildkite.ts";
import { summaryMarkdown } from "../../src/outputs/summary.ts";
import { agentSummary } from "../../src/report/markdown.ts";
import { cmarkGfm } from "../support/markdown.ts";
import { recordingIo } from "../support/native_io.ts";
import { anyString, githubMetadata, makeAgent, makeReport } from "../support/report_fixtures.ts";
import { toolTest } from "../support/tools.ts";
import { gateReason } from "../../src/report/words.ts";

// Words a renderer or a forge could turn into something other than text.
const HOSTILE_WORDS = [
  "user@evil.example",
  "mailto:user@evil.example",
  "@octocat",
  "@acme/team",
  "#123",
  "GH-7",
  "gh-7",
  "acme/widgets#4",
  "!5",
  "~bug",
  "%v1",
  "$7",
  "www.evil.example",
  "WWW.Evil.example",
  "https://evil.example/x",
  "http://evil.example",
  "ftp://evil.example",
  "xmpp:user@evil.example",
  "<https://evil.example>",
  "[x](https://evil.example)",
  "![i](https://evil.example/i.png)",
  "<img src=x onerror=alert(1)>",
  "<script>alert(1)</script>",
  "<!-- c -->",
  "`code`",
  "$x^2$",
  ":tada:",
  "**bold**",
  "~~gone~~",
  "| cell |",
  "[^1]",
  "&amp;",
  "&#64;octocat",
  "\\@octocat",
  "a\nb",
  "\u202eevil",
];

// Service text: the hostile words, alone, joined and mixed with any string.
const word = fc.constantFrom(...HOSTILE_WORDS);
const serviceText = fc.oneof(
  word,
  fc.array(fc.oneof(word, fc.constantFrom(" ", "", "x", ".")), { maxLength: 6 })
    .map((parts) => parts.join("")),
  anyString(30),
);

// The text a cell must show: what inertMarkdown() keeps of `text` (one line, no control or
// invisible characters), without the zero-width spaces it adds.
function expectedText(text: string): string {
  return removeIgnorable(
    text.toWellFormed()
      .replace(/\r\n|[\r\n\u2028\u2029]/g, " ")
      // deno-lint-ignore no-control-regex
      .replace(/[\x00-\x1f\x7f-\x9f]/g, ""),
  ).trim();
}

// Agents whose every service string is hostile; only the first has a link, a real one.
function hostileAgents(texts: readonly (readonly [string, string, string])[]): AgentOutcome[] {
  return texts.map(([runId, status, error], index) =>
    makeAgent({
      agentId: `0b0c4a5e-8f4e-4a8e-9a53-${String(index).padStart(12, "0")}`,
      runId,
      status,
      error,
      outcome: "unchecked",
      passed: null,
      exitCode: 3,
      url: index === 0 ? "https://service.example/runs/1" : null,
    })
  );
}

const SAMPLE = fc.sample(fc.tuple(serviceText, serviceText, serviceText), {
  numRuns: 250,
  seed: 20,
});

interface Surface {
  readonly name: string;
  readonly markdown: string;
  /** The links the document itself makes (not the service's words). */
  readonly links: readonly string[];
  /** The service strings shown, in document order of the rows. */
  readonly cells: (agent: AgentOutcome) => readonly string[];
}

// `why` is the reason a row shows: the error by default, the service's words for failed gates
// (whose rows have no in-progress comment to show).
async function surfaces(
  report: RunReport,
  why: (agent: AgentOutcome) => string = (agent) => agent.error!,
): Promise<Surface[]> {
  const azure = recordingIo({ env: { AGENT_TEMPDIRECTORY: "/tmp/agent" } });
  await createAzureWriter({ cwd: "/work", uuid: () => "1" }).finish(report, azure.io);
  let annotation = "";
  const buildkite = recordingIo({
    runCommand: (_program, args, stdin) => {
      if (args[0] === "annotate") annotation = stdin ?? "";
      return Promise.resolve({ kind: "exited", code: 0, stderr: "" });
    },
  });
  await createBuildkiteWriter().finish(report, buildkite.io);
  const summaryCells = (agent: AgentOutcome) => [agent.runId!, agent.status!, why(agent)];
  const commentCells = (agent: AgentOutcome) => [why(agent), agent.runId!];
  const runLink = "https://service.example/runs/1";
  const jobLink = githubMetadata.build_url!;
  return [
    {
      name: "GitHub step summary",
      markdown: summaryMarkdown(report),
      links: [runLink],
      cells: summaryCells,
    },
    {
      name: "Azure summary",
      markdown: [...azure.files.values()].join(""),
      links: [runLink],
      cells: summaryCells,
    },
    { name: "Buildkite annotation", markdown: annotation, links: [runLink], cells: summaryCells },
    {
      name: "comment",
      markdown: finalComment("<!-- service-ci gate:x -->", report, { maxLength: Infinity }),
      links: [runLink, jobLink],
      cells: commentCells,
    },
    ...report.agents.some((agent) => agent.error === null) ? [] : [{
      name: "comment in progress",
      markdown: progressComment("<!-- service-ci gate:x -->", {
        commitSha: "4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c",
        buildUrl: jobLink,
        runs: report.agents.map((agent) => ({
          agentId: agent.agentId,
          runId: null,
          url: null,
          refused: agent.error,
        })),
      }, { maxLength: Infinity }),
      links: [jobLink],
      cells: (agent: AgentOutcome) => [agent.error!],
    }],
  ];
}

// What the rendered text must never hold: a mention, a reference, an autolink's start.
const LIVE = [
  /@[\p{L}\p{N}_]/u,
  /#\d/,
  /\bGH-\d/i,
  /www\./i,
  /[a-z][a-z0-9+.-]*:\/\//i,
  /mailto:[^\u200b]/i,
  /[!~%$^&*][\p{L}\p{N}]/u,
];

const ALLOWED_TAGS = new Set(["h3", "p", "table", "thead", "tbody", "tr", "th", "td", "a", "br"]);

function decode(html: string): string {
  return html.replace(/<[^>]*>/g, "")
    .replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"')
    .replace(/&#(\d+);/g, (_, code) => String.fromCodePoint(Number(code)))
    .replaceAll("&amp;", "&");
}

// Checks one surface's rendered HTML: the tags, the links, the live words, each row's text.
function assertInert(surface: Surface, html: string, report: RunReport, renderer: string): void {
  const where = `${surface.name} through ${renderer}`;
  for (const [, tag] of html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9]*)/g)) {
    assert.ok(ALLOWED_TAGS.has(tag!.toLowerCase()), `${where}: a <${tag}> element`);
  }
  const links = [...html.matchAll(/<a href="([^"]*)"/g)].map(([, href]) =>
    decode(href!).replaceAll("%5B", "[").replaceAll("%5D", "]")
  );
  assert.deepEqual(links, surface.links, `${where}: links`);
  const rows = [...html.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].slice(1).map(([, row]) => row!);
  assert.equal(rows.length, report.agents.length, `${where}: one row per agent`);
  rows.forEach((row, index) => {
    const text = decode(row);
    for (const pattern of LIVE) {
      const live = text.match(pattern);
      assert.equal(live, null, `${where}: ${JSON.stringify(live?.[0])} is live in ${text}`);
    }
    const shown = text.replaceAll("\u200b", "");
    for (const cell of surface.cells(report.agents[index]!)) {
      const expected = expectedText(cell);
      assert.ok(
        shown.includes(expected.slice(0, 250)),
        `${where}: ${JSON.stringify(expected)} not shown in ${JSON.stringify(shown)}`,
      );
    }
  });
}

// GitHub and GitLab autolink bare URLs and e-mail addresses and render raw HTML (sanitized).
const markdownIt = new MarkdownIt({ html: true, linkify: true });
markdownIt.linkify.set({ fuzzyLink: true, fuzzyEmail: true });

const REPORT = makeReport(hostileAgents(SAMPLE), { exitCode: 3 });

toolTest(
  "service text renders inert through cmark-gfm on every Markdown surface",
  { tools: ["cmark-gfm"] },
  async () => {
    for (const surface of await surfaces(REPORT)) {
      assert.ok(surface.markdown.length > 0, surface.name);
      assertInert(surface, await cmarkGfm(surface.markdown), REPORT, "cmark-gfm");
    }
  },
);

Deno.test("service text renders inert through markdown-it on every Markdown surface", async () => {
  for (const surface of await surfaces(REPORT)) {
    assertInert(surface, markdownIt.render(surface.markdown), REPORT, "markdown-it");
  }
});

// Failed gates whose service said hostile words beside the verdict: a name, a value, a summary.
const FAILURES = makeReport(
  hostileAgents(SAMPLE).map((agent, index) => ({
    ...agent,
    outcome: "failed" as const,
    passed: false,
    exitCode: 1,
    error: null,
    gate: [
      { name: SAMPLE[index]![0] || "rule", value: SAMPLE[index]![1] },
      { name: "score", value: index / 1000 },
      { name: "summary", value: SAMPLE[index]![2] },
    ],
  })),
  { exitCode: 1 },
);

toolTest(
  "the service's reason for a failed gate renders inert through cmark-gfm on every Markdown surface",
  { tools: ["cmark-gfm"] },
  async () => {
    const reason = (agent: AgentOutcome) => gateReason(agent)!.slice(0, 290);
    for (const surface of await surfaces(FAILURES, reason)) {
      assert.ok(surface.markdown.length > 0, surface.name);
      assertInert(surface, await cmarkGfm(surface.markdown), FAILURES, "cmark-gfm");
    }
    // Each check run's summary: a list, code spans and the run's dashboard link, nothing else.
    for (const agent of FAILURES.agents) {
      const html = await cmarkGfm(agentSummary(agent, FAILURES));
      for (const [, tag] of html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9]*)/g)) {
        assert.ok(["p", "ul", "li", "code", "a"].includes(tag!), `a <${tag}> element`);
      }
      const links = [...html.matchAll(/<a href="([^"]*)"/g)].map(([, href]) => decode(href!));
      const own = [agent.url, FAILURES.ciMetadata.build_url].filter((link) => link !== null);
      assert.ok(links.every((link) => own.includes(link)), links.join(" "));
      const reasonLine = decode(html.match(/<li>Reason: ([\s\S]*?)<\/li>/)![1]!);
      for (const pattern of LIVE) assert.equal(reasonLine.match(pattern), null, reasonLine);
      assert.equal(reasonLine.replaceAll("\u200b", "").trim(), expectedText(gateReason(agent)!));
    }
  },
);

toolTest(
  "inertMarkdown() shows any text as itself through cmark-gfm, with nothing live",
  { tools: ["cmark-gfm"] },
  async () => {
    const texts = fc.sample(serviceText, { numRuns: 400, seed: 7 })
      .filter((text) => expectedText(text) !== "");
    // One paragraph per text, separated by a line only cmark-gfm's table cannot mistake.
    const html = await cmarkGfm(texts.map((text) => `${inertMarkdown(text)}\n\n`).join(""));
    const paragraphs = [...html.matchAll(/<p>([\s\S]*?)<\/p>/g)].map(([, p]) => decode(p!));
    assert.equal(paragraphs.length, texts.length);
    paragraphs.forEach((paragraph, index) => {
      assert.equal(paragraph.replaceAll("\u200b", ""), expectedText(texts[index]!));
      for (const pattern of LIVE) assert.equal(paragraph.match(pattern), null, paragraph);
    });
    assert.ok(!/<(?!\/?p>)/.test(html), "only paragraphs");
  },
);

Deno.test("inertMarkdown() breaks what GitHub would link, mention or reference", () => {
  // A backslash escape alone is gone once rendered: cmark-gfm then links the address.
  assert.equal(inertMarkdown("user@evil.example"), "user\\@&#8203;evil\\.example");
  assert.equal(inertMarkdown("www.x"), "www&#8203;\\.x");
  assert.equal(inertMarkdown("GH-7"), "GH\\-&#8203;7");
  assert.equal(inertMarkdown("a\r\nb\u202e"), "a b");
});

Deno.test("a link in any report never shows a user or password", () => {
  for (const url of ["https://user:s3cret@service.example/runs/1", "http://s3cret@127.0.0.1/r"]) {
    for (const shown of [httpLink(url), markdownLink("open", url)]) {
      assert.ok(shown !== null && !shown.includes("s3cret") && !shown.includes("@"), shown ?? "");
    }
  }
});

Deno.test("every Markdown surface links the service's url through one renderer, in words of its own", () => {
  // A url that, unencoded, ends the link and adds an image after it.
  const url = "https://dash.example/run)![x](https://evil.example/p.png)";
  const agent = makeAgent({ runId: "run_1", url, outcome: "failed", passed: false, exitCode: 1 });
  const report = makeReport([agent], { exitCode: 1 });
  // What every surface writes: ")" and "(" percent-encoded, inside angle brackets.
  const destination = "(<https://dash.example/run%29![x]%28https://evil.example/p.png%29>)";
  const markdown: Record<string, string> = {
    "step summary": summaryMarkdown(report),
    "comment": finalComment("<!-- service-ci gate:x -->", report),
    "comment in progress": progressComment("<!-- service-ci gate:x -->", {
      commitSha: null,
      buildUrl: null,
      runs: [{ agentId: agent.agentId, runId: agent.runId, url }],
    }),
    "check run": agentSummary(agent, report),
  };
  for (const [surface, text] of Object.entries(markdown)) {
    assert.ok(text.includes(destination), `${surface}: ${text}`);
    const html = markdownIt.render(text);
    assert.ok(!/<img/.test(html), `${surface}: ${html}`);
    const links = [...html.matchAll(/<a href="([^"]*)">([\s\S]*?)<\/a>/g)];
    const own = links.filter(([, href]) => !href!.startsWith(githubMetadata.build_url!));
    assert.equal(own.length, 1, `${surface}: ${html}`);
    assert.equal(
      decode(own[0]![1]!),
      "https://dash.example/run%29!%5Bx%5D%28https://evil.example/p.png%29",
    );
    for (const [, , text] of links) {
      assert.ok(
        ["open", "dashboard", "CI job", "the job's summary"].includes(text!),
        `${surface}: ${text}`,
      );
    }
  }
});
