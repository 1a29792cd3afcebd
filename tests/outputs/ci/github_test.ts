import assert from "node:assert/strict";
// @ts-types="npm:@types/markdown-it@14.1.2"
import MarkdownIt from "npm:markdown-it@14.1.0";
import fc from "npm:fast-check@3.23.2";
import { inertMarkdown } from "../../../src/text/markdown.ts";
import {
  escapeWorkflowData,
  escapeWorkflowProperty,
  githubAnnotations,
  githubOutputs,
} from "../../../src/outputs/ci/github.ts";
import { summaryMarkdown } from "../../../src/outputs/summary.ts";
import {
  AGENT_IDS,
  anyString,
  HOSTILE_STRINGS,
  hostileReport,
  makeAgent,
  makeReport,
  mixedReport,
  passingReport,
  twoPassingReport,
} from "../../support/report_fixtures.ts";

const DELIMITER = "ghadelimiter_8e1f5c2a-6b7d-4c3e-9f0a-1b2c3d4e5f60";

// Reads a GITHUB_OUTPUT file the way the Actions runner does on Linux: lines end at "\n" only;
// `name=value` lines, and `name<<DELIMITER` heredocs whose value runs to the first line that
// equals the delimiter.
function readGithubOutput(text: string): Map<string, string> {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const outputs = new Map<string, string>();
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (line === "") continue;
    const equals = line.indexOf("=");
    const heredoc = line.indexOf("<<");
    if (equals >= 0 && (heredoc < 0 || equals < heredoc)) {
      outputs.set(line.slice(0, equals), line.slice(equals + 1));
    } else if (heredoc > 0) {
      const delimiter = line.slice(heredoc + 2);
      assert.notEqual(delimiter, "", `empty delimiter in ${JSON.stringify(line)}`);
      const value: string[] = [];
      for (index++;; index++) {
        assert.ok(index < lines.length, `matching delimiter not found: ${delimiter}`);
        if (lines[index] === delimiter) break;
        value.push(lines[index]!);
      }
      outputs.set(line.slice(0, heredoc), value.join("\n"));
    } else {
      assert.fail(`invalid GITHUB_OUTPUT line: ${JSON.stringify(line)}`);
    }
  }
  return outputs;
}

// Splits a Markdown table row on the pipes that are not backslash-escaped, as GFM does.
function cells(row: string): string[] {
  const found: string[] = [];
  let current = "";
  for (let index = 0; index < row.length; index++) {
    const char = row[index]!;
    if (char === "\\") {
      current += char + (row[index + 1] ?? "");
      index++;
    } else if (char === "|") {
      found.push(current);
      current = "";
    } else {
      current += char;
    }
  }
  found.push(current);
  return found.slice(1, -1).map((cell) => cell.trim());
}

function tableRows(summary: string): string[][] {
  return summary.split("\n").filter((line) => line.startsWith("|")).map(cells);
}

const markdown = new MarkdownIt({ html: true, linkify: true });

// Renders the summary as GitHub would (tables, raw HTML allowed, bare URLs linked) and returns
// the HTML of each body row's cells and every link's target.
function rendered(summary: string): { rows: string[][]; links: string[]; html: string } {
  const html = markdown.render(summary);
  const body = html.slice(html.indexOf("<tbody>"), html.indexOf("</tbody>"));
  const rows = Array.from(
    body.matchAll(/<tr>([\s\S]*?)<\/tr>/g),
    (row) => Array.from(row[1]!.matchAll(/<td>([\s\S]*?)<\/td>/g), (cell) => cell[1]!),
  );
  const links = Array.from(html.matchAll(/<a href="([^"]*)"/g), (link) => link[1]!);
  return { rows, links, html };
}

Deno.test("githubOutputs() writes one agent's values plainly, in heredoc form", () => {
  const text = githubOutputs(passingReport, DELIMITER);
  assert.match(text, new RegExp(`^passed<<${DELIMITER}\ntrue\n${DELIMITER}\n`));
  const outputs = readGithubOutput(text);
  assert.deepEqual([...outputs.keys()], [
    "passed",
    "run-id",
    "status",
    "url",
    "exit-code",
    "agents",
  ]);
  assert.equal(outputs.get("passed"), "true");
  assert.equal(outputs.get("run-id"), "run_1");
  assert.equal(outputs.get("status"), "completed");
  assert.equal(outputs.get("url"), "https://service.example/runs/run_1");
  assert.equal(outputs.get("exit-code"), "0");
  assert.deepEqual(JSON.parse(outputs.get("agents")!), [{
    agent_id: AGENT_IDS.passed,
    run_id: "run_1",
    status: "completed",
    passed: true,
    outcome: "passed",
    exit_code: 0,
    duration_ms: 1234,
    url: "https://service.example/runs/run_1",
    error: null,
    gate: {},
  }]);
  // Every line is a heredoc opener, a value, or the delimiter: none is `name=value`.
  const lines = text.trimEnd().split("\n");
  assert.equal(lines.length, 6 * 3);
  assert.ok(lines.every((line, index) => index % 3 !== 2 || line === DELIMITER));
});

Deno.test("githubOutputs() leaves unknown single-agent values empty", () => {
  const report = makeReport([
    makeAgent({ runId: null, status: null, url: null, outcome: "unchecked", passed: null }),
  ], { exitCode: 3 });
  const outputs = readGithubOutput(githubOutputs(report, DELIMITER));
  assert.equal(outputs.get("passed"), "false");
  assert.equal(outputs.get("run-id"), "");
  assert.equal(outputs.get("status"), "");
  assert.equal(outputs.get("url"), "");
  assert.equal(outputs.get("exit-code"), "3");
});

Deno.test("githubOutputs() writes JSON arrays in agent order when there are several agents", () => {
  const outputs = readGithubOutput(githubOutputs(mixedReport, DELIMITER));
  assert.equal(outputs.get("passed"), "false");
  assert.equal(outputs.get("exit-code"), "3");
  assert.deepEqual(JSON.parse(outputs.get("run-id")!), [
    "run_1",
    "run_2",
    null,
    "run_4",
    "run_5",
    "run_6",
  ]);
  assert.deepEqual(JSON.parse(outputs.get("status")!), [
    "completed",
    "failed",
    null,
    "running",
    "evaluating",
    "queued",
  ]);
  assert.deepEqual(
    JSON.parse(outputs.get("url")!),
    mixedReport.agents.map((agent) => agent.url),
  );
  const agents = JSON.parse(outputs.get("agents")!);
  assert.deepEqual(
    agents.map((agent: { agent_id: string; outcome: string }) => [agent.agent_id, agent.outcome]),
    mixedReport.agents.map((agent) => [agent.agentId, agent.outcome]),
  );
});

Deno.test("githubOutputs() says passed only when every agent passed", () => {
  assert.equal(readGithubOutput(githubOutputs(twoPassingReport, DELIMITER)).get("passed"), "true");
  const triggered = makeReport([makeAgent(), makeAgent({ outcome: "triggered", passed: null })]);
  assert.equal(readGithubOutput(githubOutputs(triggered, DELIMITER)).get("passed"), "false");
  const warnOnly = makeReport([makeAgent({ outcome: "failed", passed: false, exitCode: 1 })], {
    warnOnly: true,
  });
  const outputs = readGithubOutput(githubOutputs(warnOnly, DELIMITER));
  assert.equal(outputs.get("passed"), "false");
  assert.equal(outputs.get("exit-code"), "0");
  assert.equal(readGithubOutput(githubOutputs(makeReport([]), DELIMITER)).get("passed"), "false");
});

Deno.test("githubOutputs() keeps hostile values intact and inside their own output", () => {
  for (const hostile of HOSTILE_STRINGS) {
    const report = makeReport([makeAgent({ runId: hostile, status: hostile, url: hostile })]);
    const outputs = readGithubOutput(githubOutputs(report, DELIMITER));
    assert.equal(outputs.get("run-id"), hostile);
    assert.equal(outputs.get("status"), hostile);
    assert.equal(outputs.get("url"), hostile);
    assert.equal(outputs.size, 6);
    assert.equal(outputs.get("passed"), "true");
    assert.equal(outputs.get("exit-code"), "0");
  }
  const outputs = readGithubOutput(githubOutputs(hostileReport, DELIMITER));
  assert.deepEqual(
    JSON.parse(outputs.get("status")!),
    hostileReport.agents.map((agent) => agent.status),
  );
});

Deno.test("githubOutputs() throws when a value contains the delimiter", () => {
  for (
    const report of [
      makeReport([makeAgent({ status: `x\n${DELIMITER}\npassed<<y` })]),
      makeReport([makeAgent({ runId: DELIMITER })]),
      makeReport([makeAgent(), makeAgent({ url: `https://e.example/${DELIMITER}` })]),
      makeReport([makeAgent({ error: DELIMITER })]),
    ]
  ) {
    assert.throws(() => githubOutputs(report, DELIMITER), RangeError);
  }
});

Deno.test("githubOutputs() refuses an empty or multi-line delimiter", () => {
  assert.throws(() => githubOutputs(passingReport, ""), TypeError);
  assert.throws(() => githubOutputs(passingReport, "EOF\nx"), TypeError);
  assert.throws(() => githubOutputs(passingReport, "EOF\r"), TypeError);
});

Deno.test("githubOutputs() parses back for any strings the service sends", () => {
  fc.assert(
    fc.property(fc.array(anyString(), { minLength: 1, maxLength: 4 }), (strings) => {
      const report = makeReport(strings.map((s) => makeAgent({ runId: s })));
      const outputs = readGithubOutput(githubOutputs(report, DELIMITER));
      const runIds = outputs.get("run-id")!;
      if (strings.length === 1) {
        assert.equal(runIds, strings[0]);
      } else {
        assert.deepEqual(JSON.parse(runIds), strings);
      }
    }),
  );
});

Deno.test("summaryMarkdown() writes a heading and one six-column row per agent", () => {
  const summary = summaryMarkdown(mixedReport);
  assert.match(summary, /^### ⚠️ service-ci: quality gates could not be checked\n/);
  assert.ok(
    summary.includes(
      "1 passed · 1 failed · 1 not checked · 1 timed out · 1 interrupted · " +
        "1 not waited for.",
    ),
  );
  const rows = tableRows(summary);
  assert.deepEqual(rows[0], ["Agent", "Run", "Status", "Verdict", "Duration", "Link"]);
  assert.equal(rows.length, 2 + mixedReport.agents.length);
  assert.ok(rows.every((row) => row.length === 6));
  assert.deepEqual(rows[2], [
    inertMarkdown(AGENT_IDS.passed),
    "run\\_1",
    "completed",
    "✅ passed",
    "1.2 s",
    "[open](<https://service.example/runs/run_1>)",
  ]);
  assert.deepEqual(rows[4]!.slice(1, 4), [
    "—",
    "—",
    "⚠️ not checked: 403 Forbidden\\:&#8203; the key lacks CI access",
  ]);
  assert.equal(rows[5]![4], "30 min 0 s");
  assert.ok(summary.endsWith("Exit code 3 · service-ci 1\\.0\\.0\n"));
});

Deno.test("summaryMarkdown() renders as a table with the right cells and links only", () => {
  const { rows, links } = rendered(summaryMarkdown(mixedReport));
  assert.equal(rows.length, 6);
  assert.ok(rows.every((row) => row.length === 6));
  assert.deepEqual(rows.map((row) => row[0]), mixedReport.agents.map((agent) => agent.agentId));
  assert.deepEqual(
    links,
    mixedReport.agents.flatMap((agent) => agent.url === null ? [] : [agent.url]),
  );
});

Deno.test("summaryMarkdown() words the heading after the overall result", () => {
  const heading = (report: typeof passingReport) => summaryMarkdown(report).split("\n")[0];
  assert.equal(heading(passingReport), "### ✅ service-ci: quality gate passed");
  assert.equal(heading(twoPassingReport), "### ✅ service-ci: quality gates passed");
  assert.equal(
    heading(makeReport([makeAgent({ outcome: "failed", passed: false })], { exitCode: 1 })),
    "### ❌ service-ci: quality gate failed",
  );
  assert.equal(
    heading(makeReport([makeAgent({ outcome: "failed", passed: false })], { warnOnly: true })),
    "### ⚠️ service-ci: quality gate failed (ignored: --warn-only)",
  );
  assert.equal(
    heading(makeReport([makeAgent({ outcome: "triggered", passed: null })])),
    "### ⏩ service-ci: runs started, not waited for",
  );
  assert.equal(
    heading(makeReport([makeAgent({ outcome: "timed_out" })], { exitCode: 4 })),
    "### ⏱️ service-ci: quality gate timed out",
  );
  assert.equal(
    heading(makeReport([makeAgent({ outcome: "interrupted" })], { exitCode: 130 })),
    "### 🛑 service-ci: quality gate interrupted",
  );
});

Deno.test("summaryMarkdown() keeps hostile strings from breaking the table or adding markup", () => {
  const summary = summaryMarkdown(hostileReport);
  const rows = tableRows(summary);
  assert.equal(rows.length, 2 + hostileReport.agents.length);
  assert.ok(rows.every((row) => row.length === 6), JSON.stringify(rows));

  const { rows: htmlRows, links, html } = rendered(summary);
  assert.equal(htmlRows.length, hostileReport.agents.length);
  assert.ok(htmlRows.every((row) => row.length === 6), JSON.stringify(htmlRows));
  for (const tag of ["<img", "<script", "<x>", "<code", "<em>", "<strong>", "<s>", "<del>"]) {
    assert.ok(!html.includes(tag), `${tag} in ${html}`);
  }
  // The only links are the http(s) dashboard links: no javascript:, data:, or bare URLs.
  // markdown-it percent-encodes the IPv6 brackets of an href; decodeURI undoes that.
  const origins = links.map((link) => new URL(decodeURI(link.replaceAll("&amp;", "&"))).origin);
  assert.deepEqual(origins, [
    "https://evil.example",
    "http://[::1]:8080",
    "https://service.example",
  ]);
  assert.deepEqual(htmlRows.map((row) => row[5]!.startsWith("<a href=")), [
    true,
    false,
    false,
    false,
    true,
    true,
  ]);
});

Deno.test("summaryMarkdown() shows each hostile string as its literal text", () => {
  for (const hostile of HOSTILE_STRINGS) {
    const report = makeReport([makeAgent({ runId: hostile, status: "ok", url: null })]);
    const { rows, links } = rendered(summaryMarkdown(report));
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.length, 6);
    assert.deepEqual(links, []);
    const shown = rows[0]![1]!
      .replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"')
      .replaceAll("&amp;", "&").replaceAll("\u200b", "");
    const expected = hostile.toWellFormed().replace(/\r\n|[\r\n\u2028\u2029]/g, " ")
      // deno-lint-ignore no-control-regex
      .replace(/[\x00-\x1f\x7f-\x9f]/g, "")
      .replace(/[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g, "");
    assert.equal(shown, expected.trim());
  }
});

Deno.test("summaryMarkdown() keeps six columns for any strings the service sends", () => {
  fc.assert(
    fc.property(anyString(), anyString(), anyString(), (runId, status, error) => {
      const report = makeReport([makeAgent({ runId, status, error, outcome: "unchecked" })]);
      const { rows, links } = rendered(summaryMarkdown(report));
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.length, 6);
      assert.equal(links.length, 1);
    }),
  );
});

Deno.test("githubAnnotations() writes one error per agent that did not pass, none otherwise", () => {
  assert.deepEqual(githubAnnotations(passingReport), []);
  assert.deepEqual(githubAnnotations(twoPassingReport), []);
  assert.deepEqual(githubAnnotations(makeReport([makeAgent({ outcome: "triggered" })])), []);
  const annotations = githubAnnotations(mixedReport);
  assert.deepEqual(annotations, [
    `::error title=service-ci%3A quality gate failed::Agent ${AGENT_IDS.failed}: quality gate ` +
    "failed (run run_2, status failed). https://service.example/runs/run_2",
    `::error title=service-ci%3A quality gate could not be checked::Agent ${AGENT_IDS.unchecked}: ` +
    "quality gate could not be checked (no run id). 403 Forbidden: the key lacks CI access",
    `::error title=service-ci%3A timed out before a verdict::Agent ${AGENT_IDS.timed_out}: timed ` +
    "out before a verdict (run run_4, status running). no verdict within 30 minutes. " +
    "https://service.example/runs/run_4",
    `::error title=service-ci%3A interrupted before a verdict::Agent ${AGENT_IDS.interrupted}: ` +
    "interrupted before a verdict (run run_5, status evaluating). " +
    "https://service.example/runs/run_5",
  ]);
});

// deno-lint-ignore no-control-regex
const CONTROL_BUT_LINE_BREAK = /[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f]/;

Deno.test("githubAnnotations() keeps every hostile string on its one command line", () => {
  const annotations = githubAnnotations(hostileReport);
  assert.equal(annotations.length, 4);
  for (const line of annotations) {
    assert.ok(line.startsWith("::error title="));
    assert.ok(!/[\r\n]/.test(line), line);
    const [, title, message] = line.match(/^::error title=([^:]*)::(.*)$/s) ?? [];
    assert.ok(title !== undefined && !title.includes(","), line);
    // Decoding the message gives back text that holds the agent's strings.
    const decoded = message!.replaceAll("%0A", "\n").replaceAll("%0D", "\r")
      .replaceAll("%25", "%");
    assert.match(decoded, /^Agent [0-9a-f-]{36}: /);
    assert.ok(!CONTROL_BUT_LINE_BREAK.test(decoded), line);
  }
  const unchecked = hostileReport.agents[2]!;
  const decoded = annotations[1]!.split("::").slice(2).join("::").replaceAll("%0A", "\n")
    .replaceAll("%0D", "\r").replaceAll("%25", "%");
  assert.ok(
    decoded.includes(unchecked.error!.replace(new RegExp(CONTROL_BUT_LINE_BREAK, "g"), "")),
  );
  assert.ok(decoded.includes(`run ${unchecked.runId}`));
});

Deno.test("escapeWorkflowData() escapes percent signs and line breaks", () => {
  assert.equal(escapeWorkflowData("100%\r\nnext\nline %0A"), "100%25%0D%0Anext%0Aline %250A");
  assert.equal(escapeWorkflowData("a: b, c"), "a: b, c");
  assert.equal(escapeWorkflowData("::error::x"), "::error::x");
});

Deno.test("escapeWorkflowProperty() also escapes colons and commas", () => {
  assert.equal(escapeWorkflowProperty("a: b, c%\n\r"), "a%3A b%2C c%25%0A%0D");
  assert.equal(escapeWorkflowProperty("::"), "%3A%3A");
});

Deno.test("escapeWorkflowData() output never holds a line break and decodes back", () => {
  fc.assert(
    fc.property(anyString(), (s) => {
      const escaped = escapeWorkflowData(s);
      assert.ok(!/[\r\n]/.test(escaped));
      const decoded = escaped.replaceAll("%0D", "\r").replaceAll("%0A", "\n")
        .replaceAll("%25", "%");
      assert.equal(decoded, s);
      assert.ok(!/[\r\n:,]/.test(escapeWorkflowProperty(s)));
    }),
  );
});
