import assert from "node:assert/strict";
import { markdownLink } from "../../../src/text/markdown.ts";
import type { RunReport } from "../../../src/report/outcome.ts";
import { finalComment, progressComment } from "../../../src/forge/comment/content.ts";
import {
  type CommentHistory,
  gateMarker,
  HISTORY_LENGTH,
  historyLine,
  MAX_HISTORY_SIZE,
  readHistory,
  recordRun,
} from "../../../src/forge/comment/history.ts";
import { cmarkGfm, render } from "../../support/markdown.ts";
import {
  AGENT_IDS,
  githubMetadata,
  makeAgent,
  makeReport,
  twoPassingReport,
} from "../../support/report_fixtures.ts";
import { toolTest } from "../../support/tools.ts";

const AGENTS = [AGENT_IDS.passed, AGENT_IDS.failed];
const marker = gateMarker({ workflow: "ci", job: "gate", agents: AGENTS });
const options = { marker, agents: AGENTS };

const SHA = {
  a: "abc1234abc1234abc1234abc1234abc1234abc12",
  b: "1234567123456712345671234567123456712345",
  c: "def5678def5678def5678def5678def5678def56",
};

// A report of the two agents at `sha`: the first with `outcome`, the second passed.
function pushed(sha: string | null, outcome: "passed" | "failed", run = sha ?? "x"): RunReport {
  return makeReport([
    makeAgent({ outcome, url: `https://service.example/runs/${run}` }),
    makeAgent({ agentId: AGENT_IDS.failed, url: null }),
  ], { ciMetadata: { ...githubMetadata, commit_sha: sha } });
}

// A body of this gate holding `line` where the history goes.
function bodyWith(line: string | null): string {
  return `${marker}\n${line ?? ""}\n\n### something`;
}

// The history line for any JSON value: what someone editing the comment could write.
function lineFor(data: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(data));
  return `<!-- service-ci history:${
    bytes.toBase64({ alphabet: "base64url", omitPadding: true })
  } -->`;
}

function plain(history: CommentHistory): Record<string, unknown> {
  return Object.fromEntries(history);
}

const VALID = {
  v: 1,
  agents: {
    [AGENT_IDS.passed]: [
      { sha: "abc1234", outcome: "failed", url: "https://service.example/runs/1" },
      { sha: SHA.c, outcome: "passed", url: null },
    ],
  },
};

Deno.test("historyLine() and readHistory() round-trip what recordRun() keeps", () => {
  const history = recordRun(recordRun(new Map(), pushed(SHA.a, "failed")), pushed(SHA.b, "passed"));
  const line = historyLine(history)!;
  assert.match(line, /^<!-- service-ci history:[A-Za-z0-9_-]+ -->$/);
  assert.deepEqual(plain(readHistory(bodyWith(line), options)), {
    [AGENT_IDS.passed]: [
      { sha: SHA.a, outcome: "failed", url: `https://service.example/runs/${SHA.a}` },
      { sha: SHA.b, outcome: "passed", url: `https://service.example/runs/${SHA.b}` },
    ],
    [AGENT_IDS.failed]: [
      { sha: SHA.a, outcome: "passed", url: null },
      { sha: SHA.b, outcome: "passed", url: null },
    ],
  });
  // CRLF line ends (an edit in a browser) read the same.
  assert.equal(readHistory(bodyWith(line).replaceAll("\n", "\r\n"), options).size, 2);
  assert.equal(readHistory(bodyWith(lineFor(VALID)), options).size, 1);
});

Deno.test("recordRun() adds each agent's verdict at the commit, newest last, and keeps the last five", () => {
  let history: CommentHistory = new Map();
  const shas = Array.from({ length: 7 }, (_, index) => String(index + 1).repeat(7));
  for (const sha of shas) history = recordRun(history, pushed(sha, "failed"));
  assert.deepEqual(
    history.get(AGENT_IDS.passed)?.map((entry) => entry.sha),
    shas.slice(-HISTORY_LENGTH),
  );
  // The same commit again (a re-run) replaces its entry and becomes the newest.
  history = recordRun(history, pushed(shas[3]!, "passed", "again"));
  const entries = history.get(AGENT_IDS.passed)!;
  assert.deepEqual(entries.map((entry) => entry.sha), [
    "3333333",
    "5555555",
    "6666666",
    "7777777",
    "4444444",
  ]);
  assert.deepEqual(entries.at(-1), {
    sha: "4444444",
    outcome: "passed",
    url: "https://service.example/runs/again",
  });
});

Deno.test("recordRun() leaves the history alone when the commit is unknown or not a commit id", () => {
  const before = recordRun(new Map(), pushed(SHA.a, "failed"));
  for (const sha of [null, "", "HEAD", "abc12", "<b>abc1234</b>"]) {
    assert.deepEqual(plain(recordRun(before, pushed(sha, "passed"))), plain(before), String(sha));
  }
  assert.equal(recordRun(new Map(), pushed(null, "passed")).size, 0);
  // An upper-case commit id is stored lower-case, as it is read back.
  assert.equal(
    recordRun(new Map(), pushed(SHA.a.toUpperCase(), "passed")).get(AGENT_IDS.passed)?.[0]?.sha,
    SHA.a,
  );
});

Deno.test("recordRun() keeps only http(s) links, normalised, and only the report's agents", () => {
  const report = makeReport([
    makeAgent({ url: "javascript:alert(1)" }),
    makeAgent({ agentId: AGENT_IDS.failed.toUpperCase(), url: "HTTPS://Service.Example/a b" }),
    makeAgent({ agentId: "not-a-uuid" }),
  ]);
  const earlier = new Map([[AGENT_IDS.unchecked, [{
    sha: SHA.b,
    outcome: "failed" as const,
    url: null,
  }]]]);
  const history = recordRun(earlier, report);
  assert.deepEqual([...history.keys()], [AGENT_IDS.passed, AGENT_IDS.failed]);
  assert.equal(history.get(AGENT_IDS.passed)?.[0]?.url, null);
  assert.equal(history.get(AGENT_IDS.failed)?.[0]?.url, "https://service.example/a%20b");
  const long = recordRun(
    new Map(),
    makeReport([makeAgent({ url: `https://x.example/${"a".repeat(2000)}` })]),
  );
  assert.equal(long.get(AGENT_IDS.passed)?.[0]?.url, null);
});

Deno.test("historyLine() is null for an empty history", () => {
  assert.equal(historyLine(new Map()), null);
  assert.equal(historyLine(new Map([[AGENT_IDS.passed, []]])), null);
});

Deno.test("historyLine() stays under its size limit by dropping the oldest entries first", () => {
  const agents = Array.from(
    { length: 6 },
    (_, index) => `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`,
  );
  let history: CommentHistory = new Map();
  for (let push = 0; push < HISTORY_LENGTH; push++) {
    history = recordRun(
      history,
      makeReport(
        agents.map((agentId) =>
          makeAgent({ agentId, url: `https://service.example/${push}/${"r".repeat(300)}` })
        ),
        { ciMetadata: { ...githubMetadata, commit_sha: String(push).repeat(40) } },
      ),
    );
  }
  const line = historyLine(history)!;
  const encoded = /history:([^ ]+) -->$/.exec(line)![1]!;
  assert.ok(encoded.length <= MAX_HISTORY_SIZE, String(encoded.length));
  const read = readHistory(bodyWith(line), { marker, agents });
  // Every agent keeps its newest commit; nobody keeps an older one while another lost a newer.
  assert.equal(read.size, agents.length);
  const kept = [...read.values()].map((entries) => entries.length);
  assert.ok(Math.max(...kept) - Math.min(...kept) <= 1, kept.join());
  for (const entries of read.values()) assert.equal(entries.at(-1)?.sha, "4".repeat(40));
  assert.ok(kept.reduce((sum, count) => sum + count, 0) < agents.length * HISTORY_LENGTH);

  // Without long links everything fits.
  const short = recordRun(
    history,
    makeReport(agents.map((agentId) => makeAgent({ agentId, url: null }))),
  );
  assert.ok(historyLine(short)!.length < MAX_HISTORY_SIZE);
});

Deno.test("readHistory() ignores a history that is not right under this gate's own marker", () => {
  const line = lineFor(VALID);
  const other = gateMarker({ workflow: "ci", job: "other", agents: AGENTS });
  for (
    const body of [
      `${other}\n${line}`,
      `> ${marker}\n${line}`,
      `${line}\n${marker}`,
      `${marker}\n\n${line}`,
      `${marker}\n ${line}`,
      `${marker}\n${line} and more`,
      `${marker}`,
      "",
    ]
  ) {
    assert.equal(readHistory(body, options).size, 0, body);
  }
});

Deno.test("readHistory() ignores the whole history when any part of it is not what it writes", () => {
  const entry = { sha: "abc1234", outcome: "failed", url: "https://service.example/runs/1" };
  const withEntry = (changes: Record<string, unknown>) => ({
    v: 1,
    agents: {
      [AGENT_IDS.passed]: [{ sha: SHA.c, outcome: "passed", url: null }, { ...entry, ...changes }],
    },
  });
  const cases: Record<string, unknown> = {
    "another agent": { v: 1, agents: { [AGENT_IDS.unchecked]: VALID.agents[AGENT_IDS.passed] } },
    "an upper-case agent": {
      v: 1,
      agents: { [AGENT_IDS.passed.toUpperCase()]: VALID.agents[AGENT_IDS.passed] },
    },
    "__proto__ as an agent": JSON.parse(`{"v":1,"agents":{"__proto__":[]}}`),
    "another version": { ...VALID, v: 2 },
    "an extra field": { ...VALID, note: "hi" },
    "an array": [VALID],
    "agents as an array": { v: 1, agents: [] },
    "no entries": { v: 1, agents: { [AGENT_IDS.passed]: [] } },
    "too many entries": {
      v: 1,
      agents: {
        [AGENT_IDS.passed]: Array.from(
          { length: 6 },
          (_, index) => ({ ...entry, sha: String(index).repeat(7) }),
        ),
      },
    },
    "the same commit twice": withEntry({ sha: SHA.c }),
    "a short sha": withEntry({ sha: "abc123" }),
    "a long sha": withEntry({ sha: "a".repeat(41) }),
    "an upper-case sha": withEntry({ sha: "ABC1234" }),
    "a sha with HTML": withEntry({ sha: "<img src=x onerror=alert(1)>" }),
    "a sha that is a number": withEntry({ sha: 1234567 }),
    "an unknown outcome": withEntry({ outcome: "approved" }),
    "an outcome from the prototype": withEntry({ outcome: "toString" }),
    "a javascript: URL": withEntry({ url: "javascript:alert(1)" }),
    "a data: URL": withEntry({ url: "data:text/html,<script>alert(1)</script>" }),
    "a URL with HTML": withEntry({ url: "https://evil.example/<script>" }),
    "a URL with spaces": withEntry({ url: " https://evil.example/" }),
    "a URL over 2,000 characters": withEntry({ url: `https://evil.example/${"a".repeat(2000)}` }),
    "a URL that is an object": withEntry({ url: { href: "https://evil.example/" } }),
    "a missing url": {
      v: 1,
      agents: { [AGENT_IDS.passed]: [{ sha: "abc1234", outcome: "failed" }] },
    },
    "an extra entry field": withEntry({ at: "2026-01-01T00:00:00Z" }),
    "a null entry": { v: 1, agents: { [AGENT_IDS.passed]: [null] } },
  };
  for (const [what, data] of Object.entries(cases)) {
    assert.equal(readHistory(bodyWith(lineFor(data)), options).size, 0, what);
  }
  for (
    const line of [
      "<!-- service-ci history: -->",
      "<!-- service-ci history:not base64! -->",
      "<!-- service-ci history:e30= -->",
      `<!-- service-ci history:${"A".repeat(MAX_HISTORY_SIZE + 1)} -->`,
      `<!-- service-ci history:${
        new Uint8Array([0xff, 0xfe, 0x7b]).toBase64({ alphabet: "base64url" })
      } -->`,
      "<!-- service-ci history:bm90IGpzb24 -->",
    ]
  ) {
    assert.equal(readHistory(bodyWith(line), options).size, 0, line);
  }
});

Deno.test("finalComment() shows each agent's history under the table, oldest first, each commit linked to its run", () => {
  let history: CommentHistory = new Map();
  for (const [sha, outcome] of [[SHA.a, "failed"], [SHA.b, "failed"]] as const) {
    history = recordRun(history, pushed(sha, outcome));
  }
  const report = pushed(SHA.c, "passed");
  const body = finalComment(marker, report, { history: recordRun(history, report) });
  const lines = body.split("\n");
  assert.equal(lines[0], marker);
  assert.match(lines[1]!, /^<!-- service-ci history:[A-Za-z0-9_-]+ -->$/);
  assert.equal(lines[3], "### ✅ service-ci: quality gates passed");
  const item = lines.find((line) =>
    line.startsWith(`- ${AGENT_IDS.passed.replaceAll("-", "\\-")}`)
  );
  assert.equal(
    item,
    `- ${AGENT_IDS.passed.replaceAll("-", "\\-")}: ` +
      `❌ at [\`abc1234\`](<https://service.example/runs/${SHA.a}>) → ` +
      `❌ at [\`1234567\`](<https://service.example/runs/${SHA.b}>) → ` +
      `✅ at [\`def5678\`](<https://service.example/runs/${SHA.c}>)`,
  );
  assert.ok(
    lines.includes(
      `- ${
        AGENT_IDS.failed.replaceAll("-", "\\-")
      }: ✅ at \`abc1234\` → ✅ at \`1234567\` → ✅ at \`def5678\``,
    ),
  );
  // The history comes after the table and before what the exit code means.
  const at = (text: string) => lines.findIndex((line) => line.startsWith(text));
  assert.ok(
    at("| ") < at("Verdicts of the last commits") && at("Verdicts of the last") < at("Exit code"),
  );
  const rendered = render(body);
  assert.equal(rendered.htmlBlocks.length, 2);
  // The first agent's run in the table, its three commits, then the CI job.
  assert.deepEqual(
    rendered.links,
    [SHA.c, SHA.a, SHA.b, SHA.c].map((sha) => `https://service.example/runs/${sha}`)
      .concat(githubMetadata.build_url!),
  );
});

Deno.test("finalComment() shows no history when it holds only this run, but still stores it", () => {
  const report = pushed(SHA.c, "passed");
  const body = finalComment(marker, report, { history: recordRun(new Map(), report) });
  assert.doesNotMatch(body, /Verdicts of the last commits/);
  assert.deepEqual(
    plain(readHistory(body, options)),
    plain(recordRun(new Map(), report)),
  );
  // Without a history the comment is the one of 1.1, line for line.
  assert.equal(finalComment(marker, report, { history: new Map() }), finalComment(marker, report));
});

Deno.test("progressComment() shows and stores the history of earlier commits unchanged", () => {
  const earlier = recordRun(new Map(), pushed(SHA.a, "failed"));
  const body = progressComment(marker, {
    commitSha: SHA.b,
    buildUrl: null,
    runs: AGENTS.map((agentId) => ({ agentId, runId: "run_1", url: null })),
  }, { history: earlier });
  assert.equal(body.split("\n")[1], historyLine(earlier));
  assert.match(body, /Verdicts of the last commits, oldest first:\n\n- .*: ❌ at \[`abc1234`\]/);
  assert.deepEqual(plain(readHistory(body, options)), plain(earlier));
});

Deno.test("the history is left out before any agent's row when the comment would be too long", () => {
  const agents = Array.from(
    { length: 40 },
    (_, index) =>
      makeAgent({
        agentId: `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`,
        url: `https://service.example/${"r".repeat(500)}`,
      }),
  );
  let history: CommentHistory = new Map();
  for (let push = 0; push < 3; push++) {
    history = recordRun(
      history,
      makeReport(agents, {
        ciMetadata: { ...githubMetadata, commit_sha: String(push).repeat(40) },
      }),
    );
  }
  const report = makeReport(agents);
  const full = finalComment(marker, report, { history, maxLength: Infinity });
  const bare = finalComment(marker, report, { maxLength: Infinity });
  assert.match(full, /Verdicts of the last commits/);
  // Room for the table and the stored line, not for the history shown.
  const tight = finalComment(marker, report, { history, maxLength: bare.length + 9_000 });
  assert.doesNotMatch(tight, /Verdicts of the last commits/);
  assert.match(tight.split("\n")[1]!, /^<!-- service-ci history:/);
  assert.doesNotMatch(tight, /more agents/);
  // Room for the table only: no history at all, every row.
  const tighter = finalComment(marker, report, { history, maxLength: bare.length + 100 });
  assert.equal(tighter, finalComment(marker, report, { maxLength: bare.length + 100 }));
  assert.doesNotMatch(tighter, /more agents/);
});

// Links a tampered (but well-formed) history could hold, and what each must render as.
const HOSTILE_LINKS = [
  "https://evil.example/a)|[x](javascript:alert(1))",
  "https://evil.example/`code`<b>",
  "https://evil.example/?q=@octocat#1&x=|y|",
  "https://evil.example/--><script>alert(1)</script>",
  "http://evil.example/$x$/~bug/*a*",
];

function hostileHistory(): CommentHistory {
  return new Map([[
    AGENT_IDS.passed,
    HOSTILE_LINKS.map((url, index) => ({
      sha: String(index + 1).repeat(7),
      outcome: "failed" as const,
      url: new URL(url).href,
    })),
  ]]);
}

Deno.test("a history's links render as links to themselves, nothing else, through markdown-it", () => {
  const history = hostileHistory();
  // What readHistory accepts is what is rendered: each link is in its normalised form.
  assert.equal(
    readHistory(bodyWith(historyLine(history)), options).get(AGENT_IDS.passed)?.length,
    5,
  );
  const body = finalComment(marker, twoPassingReport, { history });
  const rendered = render(body);
  assert.deepEqual(rendered.htmlBlocks, [`${marker}\n`, `${historyLine(history)}\n`]);
  // Each link as it is written: percent-encoded where Markdown could read it as syntax.
  assert.deepEqual(
    rendered.links.slice(2, 7).map((href) => href.replaceAll("%5B", "[").replaceAll("%5D", "]")),
    HOSTILE_LINKS.map((url) =>
      /\(<(.*)>\)$/.exec(markdownLink("x", url)!)![1]!.replaceAll("&amp;", "&")
    ),
  );
  for (const type of rendered.inlineTypes) {
    assert.ok(["link_open", "link_close", "code_inline"].includes(type), type);
  }
});

toolTest(
  "a history's links render as links to themselves, nothing else, through cmark-gfm",
  { tools: ["cmark-gfm"] },
  async () => {
    const body = finalComment(marker, twoPassingReport, { history: hostileHistory() });
    const html = await cmarkGfm(body);
    for (const [, tag] of html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9]*)/g)) {
      assert.ok(
        ["h3", "p", "table", "thead", "tbody", "tr", "th", "td", "a", "ul", "li", "code"].includes(
          tag!,
        ),
        `a <${tag}> element in ${html}`,
      );
    }
    // The two hidden lines, and nothing else raw.
    assert.equal([...html.matchAll(/<!--/g)].length, 2);
    const hrefs = [...html.matchAll(/<a href="([^"]*)"/g)].map(([, href]) => href!);
    assert.equal(hrefs.length, 2 + HOSTILE_LINKS.length + 1);
    for (const href of hrefs) assert.match(href, /^https?:\/\/[^\s"<>`]*$/, href);
    assert.ok(
      hrefs.slice(2, 7).every((href) =>
        href.startsWith("https://evil.example/") || href.startsWith("http://evil.example/")
      ),
    );
  },
);
