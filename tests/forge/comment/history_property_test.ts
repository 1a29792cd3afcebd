import assert from "node:assert/strict";
import fc from "npm:fast-check@3.23.2";
import { httpLink } from "../../../src/text/markdown.ts";
import type { Outcome } from "../../../src/report/outcome.ts";
import { finalComment } from "../../../src/forge/comment/content.ts";
import {
  type CommentHistory,
  gateMarker,
  HISTORY_LENGTH,
  historyLine,
  MAX_HISTORY_SIZE,
  readHistory,
  recordRun,
} from "../../../src/forge/comment/history.ts";
import { render } from "../../support/markdown.ts";
import {
  AGENT_IDS,
  anyString,
  githubMetadata,
  makeAgent,
  makeReport,
} from "../../support/report_fixtures.ts";

const RUNS = { numRuns: 300 };
const AGENTS = [AGENT_IDS.passed, AGENT_IDS.failed];
const marker = gateMarker({ workflow: "ci", job: "gate", agents: AGENTS });
const options = { marker, agents: AGENTS };
const OUTCOMES: readonly Outcome[] = [
  "passed",
  "failed",
  "unchecked",
  "timed_out",
  "interrupted",
  "triggered",
];

// What any history read back must be, whatever the comment held.
function assertValid(history: CommentHistory): void {
  for (const [agent, entries] of history) {
    assert.ok(AGENTS.includes(agent), agent);
    assert.ok(entries.length >= 1 && entries.length <= HISTORY_LENGTH);
    assert.equal(new Set(entries.map((entry) => entry.sha)).size, entries.length);
    for (const { sha, outcome, url } of entries) {
      assert.match(sha, /^[0-9a-f]{7,40}$/);
      assert.ok(OUTCOMES.includes(outcome), outcome);
      if (url !== null) {
        assert.ok(url.length <= 2000);
        assert.equal(httpLink(url), url);
        assert.match(url, /^https?:\/\//);
      }
    }
  }
}

function lineFor(data: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(data));
  return `<!-- service-ci history:${
    bytes.toBase64({ alphabet: "base64url", omitPadding: true })
  } -->`;
}

const hex = fc.stringMatching(/^[0-9a-f]{7,40}$/);
const link = fc.oneof(
  fc.constant(null),
  fc.webUrl().map((url) => httpLink(url)),
  anyString(20).map((path) => httpLink(`https://service.example/${path}`)),
);

// Values an edited history could hold: mostly well-formed, sometimes not.
const almostSha = fc.oneof(
  { weight: 6, arbitrary: hex },
  { weight: 1, arbitrary: anyString(45) },
  { weight: 1, arbitrary: hex.map((sha) => sha.toUpperCase()) },
  { weight: 1, arbitrary: fc.anything() },
);
const almostOutcome = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...OUTCOMES) },
  { weight: 1, arbitrary: fc.constantFrom("approved", "__proto__", "toString", "", "PASSED") },
  { weight: 1, arbitrary: fc.anything() },
);
const almostUrl = fc.oneof(
  { weight: 6, arbitrary: link },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "javascript:alert(1)",
      "data:text/html,<b>x</b>",
      " https://evil.example/",
      "https://evil.example/<img>",
      "//evil.example",
      "HTTPS://EVIL.EXAMPLE/",
    ),
  },
  { weight: 1, arbitrary: fc.anything() },
);
const almostEntry = fc.oneof(
  { weight: 8, arbitrary: fc.record({ sha: almostSha, outcome: almostOutcome, url: almostUrl }) },
  { weight: 1, arbitrary: fc.anything() },
);
const almostAgent = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...AGENTS) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(AGENT_IDS.unchecked, AGENT_IDS.passed.toUpperCase(), "__proto__"),
  },
);
const almostHistory = fc.record({
  v: fc.oneof({ weight: 8, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.anything() }),
  agents: fc.dictionary(almostAgent, fc.array(almostEntry, { maxLength: HISTORY_LENGTH + 1 }), {
    maxKeys: 3,
  }),
});

// Whether `data` is, to the letter, something historyLine could have written for AGENTS.
function wellFormed(data: { v: unknown; agents: Record<string, unknown[]> }): boolean {
  if (data.v !== 1) return false;
  return Object.entries(data.agents).every(([agent, entries]) =>
    AGENTS.includes(agent) && entries.length >= 1 && entries.length <= HISTORY_LENGTH &&
    new Set(entries.map((entry) => (entry as { sha?: unknown })?.sha)).size === entries.length &&
    entries.every((entry) => {
      if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return false;
      const { sha, outcome, url } = entry as Record<string, unknown>;
      return Object.keys(entry).length === 3 && typeof sha === "string" &&
        /^[0-9a-f]{7,40}$/.test(sha) && OUTCOMES.includes(outcome as Outcome) &&
        (url === null ||
          (typeof url === "string" && url.length <= 2000 && httpLink(url) === url));
    })
  );
}

Deno.test("readHistory() never throws on any text after the marker, and never yields an invalid entry", () => {
  fc.assert(
    fc.property(anyString(200), (text) => {
      const history = readHistory(`${marker}\n${text}`, options);
      assertValid(history);
    }),
    RUNS,
  );
  fc.assert(
    fc.property(fc.base64String({ maxLength: 400 }), (encoded) => {
      const text = encoded.replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
      assertValid(readHistory(`${marker}\n<!-- service-ci history:${text} -->`, options));
    }),
    RUNS,
  );
});

Deno.test("readHistory() never throws on any JSON, and never yields an invalid entry", () => {
  fc.assert(
    fc.property(fc.jsonValue(), (data) => {
      assertValid(readHistory(`${marker}\n${lineFor(data)}`, options));
    }),
    RUNS,
  );
});

Deno.test("readHistory() takes an edited history whole when it is well-formed, else not at all", () => {
  const counts = { whole: 0, none: 0 };
  fc.assert(
    fc.property(almostHistory, (data) => {
      const read = readHistory(`${marker}\n${lineFor(data)}`, options);
      assertValid(read);
      if (wellFormed(data)) {
        counts.whole++;
        assert.deepEqual(Object.fromEntries(read), JSON.parse(JSON.stringify(data.agents)));
      } else {
        counts.none++;
        assert.equal(read.size, 0, JSON.stringify(data));
      }
    }),
    { numRuns: 1000 },
  );
  // Both kinds were tried, so the property says something about each.
  assert.ok(counts.whole > 100 && counts.none > 100, JSON.stringify(counts));
});

Deno.test("a history line with any one character changed never throws and never yields an invalid entry", () => {
  const history = recordRun(
    recordRun(
      new Map(),
      makeReport([makeAgent(), makeAgent({ agentId: AGENT_IDS.failed, outcome: "failed" })], {
        ciMetadata: { ...githubMetadata, commit_sha: "abc1234" },
      }),
    ),
    makeReport([makeAgent()]),
  );
  const line = historyLine(history)!;
  const before = Object.fromEntries(readHistory(`${marker}\n${line}`, options));
  fc.assert(
    fc.property(
      fc.nat({ max: line.length - 1 }),
      fc.string({ minLength: 1, maxLength: 1 }),
      (at, char) => {
        const edited = line.slice(0, at) + char + line.slice(at + 1);
        const read = readHistory(`${marker}\n${edited}`, options);
        // A changed character may still decode to a valid history (another sha, say): it is
        // then only data, checked like any other.
        assertValid(read);
        if (edited === line) assert.deepEqual(Object.fromEntries(read), before);
      },
    ),
    RUNS,
  );
});

Deno.test("recordRun() then historyLine() always reads back as written, within the size limit", () => {
  const run = fc.record({
    sha: fc.oneof(hex, hex.map((sha) => sha.toUpperCase()), anyString(10), fc.constant(null)),
    outcomes: fc.tuple(fc.constantFrom(...OUTCOMES), fc.constantFrom(...OUTCOMES)),
    urls: fc.tuple(
      fc.oneof(link, anyString(30), fc.webUrl({ withQueryParameters: true })),
      fc.oneof(link, fc.webUrl()),
    ),
  });
  fc.assert(
    fc.property(fc.array(run, { maxLength: 8 }), (runs) => {
      let history: CommentHistory = new Map();
      for (const { sha, outcomes, urls } of runs) {
        history = recordRun(
          history,
          makeReport(
            AGENTS.map((agentId, index) =>
              makeAgent({ agentId, outcome: outcomes[index]!, url: urls[index] ?? null })
            ),
            { ciMetadata: { ...githubMetadata, commit_sha: sha } },
          ),
        );
      }
      assertValid(history);
      const line = historyLine(history);
      if (line === null) return assert.equal(history.size, 0);
      assert.ok(line.length <= MAX_HISTORY_SIZE + 30);
      const read = readHistory(`${marker}\n${line}`, options);
      // Whatever was dropped to fit, the newest entries are the ones kept.
      for (const [agent, entries] of read) {
        const written = history.get(agent)!;
        assert.deepEqual(entries, written.slice(written.length - entries.length));
      }
    }),
    RUNS,
  );
});

Deno.test("finalComment() renders any well-formed history with only its own links and code", () => {
  fc.assert(
    fc.property(almostHistory, (data) => {
      const history = readHistory(`${marker}\n${lineFor(data)}`, options);
      const report = makeReport([makeAgent({ url: null })], {
        ciMetadata: { ...githubMetadata, build_url: null },
      });
      const rendered = render(finalComment(marker, report, { history }));
      assert.ok(rendered.htmlBlocks.length <= 2);
      for (const type of rendered.inlineTypes) {
        assert.ok(["link_open", "link_close", "code_inline"].includes(type), type);
      }
      const urls = [...history.values()].flat().flatMap((entry) =>
        entry.url === null ? [] : [entry.url]
      );
      // A link shows only when the history is shown; each is one of the history's own.
      assert.ok(rendered.links.length <= urls.length);
      for (const href of rendered.links) assert.match(href, /^https?:\/\//);
    }),
    RUNS,
  );
});
