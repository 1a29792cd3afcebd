import assert from "node:assert/strict";
import fc from "npm:fast-check@3.23.2";
import { JUNIT_SUITE_NAME, renderJunit } from "../../src/outputs/junit.ts";
import type { RunReport } from "../../src/report/outcome.ts";
import { JUNIT_XSD, xmllint, xmlTest } from "../support/junit.ts";
import {
  AGENT_IDS,
  anyString,
  HOSTILE_STRINGS,
  hostileReport,
  makeAgent,
  makeReport,
  mixedReport,
  passingReport,
} from "../support/report_fixtures.ts";
import { escapeXml } from "../../src/text/xml.ts";

function validate(xml: string): Promise<string> {
  return xmllint(["--noout", "--schema", JUNIT_XSD], { xml });
}

interface XmlElement {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: readonly (XmlElement | string)[];
}

// libxml2 parses the document (entities, attribute normalization, line ends) and prints its
// canonical form, whose few fixed rules this small reader then follows exactly.
async function parse(xml: string): Promise<XmlElement> {
  const canonical = await xmllint(["--c14n"], { xml });
  const decode = (text: string) =>
    text.replace(
      /&(amp|lt|gt|quot|#x9|#xA|#xD);/g,
      (_, name: string) =>
        ({ amp: "&", lt: "<", gt: ">", quot: '"', "#x9": "\t", "#xA": "\n", "#xD": "\r" })[name] ??
          "",
    );
  const root: XmlElement = { name: "#document", attributes: {}, children: [] };
  const stack: XmlElement[] = [root];
  for (const token of canonical.matchAll(/<(\/?)([\w-]+)((?:\s+[\w-]+="[^"]*")*)>|([^<]+)/g)) {
    const parent = stack.at(-1)!;
    const children = parent.children as (XmlElement | string)[];
    if (token[4] !== undefined) {
      children.push(decode(token[4]));
    } else if (token[1] === "/") {
      assert.equal(stack.pop()?.name, token[2]);
    } else {
      const attributes = Object.fromEntries(
        Array.from(token[3]!.matchAll(/([\w-]+)="([^"]*)"/g), (m) => [m[1]!, decode(m[2]!)]),
      );
      const element: XmlElement = { name: token[2]!, attributes, children: [] };
      children.push(element);
      stack.push(element);
    }
  }
  assert.equal(stack.length, 1);
  return root.children.find((child): child is XmlElement => typeof child !== "string")!;
}

function elements(parent: XmlElement, name: string): XmlElement[] {
  return parent.children.filter((child): child is XmlElement =>
    typeof child !== "string" && child.name === name
  );
}

function only(parent: XmlElement, name: string): XmlElement {
  const found = elements(parent, name);
  assert.equal(found.length, 1, `one <${name}> in <${parent.name}>`);
  return found[0]!;
}

function text(element: XmlElement): string {
  return element.children.filter((child) => typeof child === "string").join("");
}

async function testcases(report: RunReport): Promise<XmlElement[]> {
  const xml = renderJunit(report);
  await validate(xml);
  return elements(only(await parse(xml), "testsuite"), "testcase");
}

// What an XML 1.0 document can carry of a string: the renderer's promise for every value.
function xmlClean(s: string): string {
  return s.replace(
    // deno-lint-ignore no-control-regex
    /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    "",
  );
}

xmlTest(
  "renderJunit() output validates against the Jenkins JUnit XSD for every fixture",
  async () => {
    for (
      const report of [
        passingReport,
        mixedReport,
        hostileReport,
        makeReport([]),
        makeReport([makeAgent({ outcome: "failed", passed: false })], { warnOnly: true }),
        makeReport([makeAgent()], { startedAt: "not a date", durationMs: Number.NaN }),
      ]
    ) {
      await validate(renderJunit(report));
    }
  },
);

xmlTest(
  "renderJunit() wraps one suite in a testsuites root with the counts of each kind",
  async () => {
    const root = await parse(renderJunit(mixedReport));
    assert.equal(root.name, "testsuites");
    assert.deepEqual(root.attributes, {
      name: "service-ci",
      tests: "6",
      failures: "1",
      errors: "3",
      time: "1800.100",
    });
    const suite = only(root, "testsuite");
    assert.deepEqual(suite.attributes, {
      name: JUNIT_SUITE_NAME,
      tests: "6",
      failures: "1",
      errors: "3",
      skipped: "1",
      time: "1800.100",
      timestamp: "2025-01-02T03:04:05Z",
    });
    assert.equal(elements(suite, "testcase").length, 6);
  },
);

Deno.test("renderJunit() starts with an XML declaration", () => {
  assert.match(
    renderJunit(passingReport),
    /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites /,
  );
});

xmlTest(
  "renderJunit() names one testcase per agent, in order, with its time in seconds",
  async () => {
    const cases = await testcases(mixedReport);
    assert.deepEqual(
      cases.map((testcase) => testcase.attributes),
      mixedReport.agents.map((agent) => ({
        classname: "service-ci",
        name: `agent ${agent.agentId}`,
        time: (agent.durationMs / 1000).toFixed(3),
      })),
    );
    assert.deepEqual(cases.map((testcase) => testcase.attributes.time), [
      "1.234",
      "2.000",
      "0.300",
      "1800.000",
      "4.000",
      "0.150",
    ]);
  },
);

xmlTest("renderJunit() gives a passed gate no failure, error or skipped element", async () => {
  const [passed] = await testcases(passingReport);
  assert.deepEqual(passed!.children.filter((c) => typeof c !== "string").map((c) => c.name), [
    "system-out",
  ]);
});

xmlTest("renderJunit() writes a failed gate as a failure of type gate_failed", async () => {
  const failed = (await testcases(mixedReport))[1]!;
  assert.equal(elements(failed, "error").length, 0);
  const failure = only(failed, "failure");
  assert.deepEqual(failure.attributes, { message: "quality gate failed", type: "gate_failed" });
  assert.match(text(failure), /^quality gate failed\n/);
  assert.match(text(failure), /\nrun id: run_2\n/);
});

xmlTest(
  "renderJunit() writes unchecked, timed-out and interrupted gates as errors typed by outcome",
  async () => {
    const [, , unchecked, timedOut, interrupted] = await testcases(mixedReport);
    const expected: [typeof unchecked, string, string][] = [
      [
        unchecked,
        "unchecked",
        "quality gate could not be checked: 403 Forbidden: the key lacks CI access",
      ],
      [timedOut, "timed_out", "timed out before a verdict: no verdict within 30 minutes"],
      [interrupted, "interrupted", "interrupted before a verdict"],
    ];
    for (const [testcase, type, message] of expected) {
      assert.equal(elements(testcase!, "failure").length, 0);
      const error = only(testcase!, "error");
      assert.deepEqual(error.attributes, { message, type });
      assert.ok(text(error).startsWith(`${message}\n`), text(error));
    }
  },
);

xmlTest("renderJunit() marks a --no-wait agent as skipped, with the reason as text", async () => {
  const triggered = (await testcases(mixedReport))[5]!;
  const skipped = only(triggered, "skipped");
  assert.deepEqual(skipped.attributes, {});
  assert.equal(text(skipped), "not waited for (--no-wait)");
  assert.equal(elements(triggered, "failure").length + elements(triggered, "error").length, 0);
});

xmlTest("renderJunit() puts the run id, status, link and error in system-out", async () => {
  const cases = await testcases(mixedReport);
  assert.equal(
    text(only(cases[3]!, "system-out")),
    [
      `agent: ${AGENT_IDS.timed_out}`,
      "outcome: timed_out",
      "run id: run_4",
      "status: running",
      "link: https://service.example/runs/run_4",
      "error: no verdict within 30 minutes",
    ].join("\n"),
  );
  assert.equal(
    text(only(cases[2]!, "system-out")),
    `agent: ${AGENT_IDS.unchecked}\noutcome: unchecked\nerror: 403 Forbidden: the key lacks CI access`,
  );
});

xmlTest(
  "renderJunit() lists the version, exit code and known CI metadata as properties",
  async () => {
    const report = makeReport([makeAgent()], {
      ciMetadata: { ...passingReport.ciMetadata, actor: null, pull_request_number: null },
    });
    const properties = only(only(await parse(renderJunit(report)), "testsuite"), "properties");
    assert.deepEqual(
      Object.fromEntries(
        elements(properties, "property").map((p) => [p.attributes.name, p.attributes.value]),
      ),
      {
        "service_ci.version": "1.0.0",
        "service_ci.exit_code": "0",
        "service_ci.warn_only": "false",
        "ci.provider": "github_actions",
        "ci.commit_sha": "4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c",
        "ci.branch": "feature/login",
        "ci.repository": "acme/widgets",
        "ci.build_url": "https://github.com/acme/widgets/actions/runs/1",
      },
    );
  },
);

xmlTest(
  "renderJunit() leaves out a timestamp it cannot read and clamps a bad duration",
  async () => {
    const report = makeReport([makeAgent({ durationMs: -5 })], {
      startedAt: "soon",
      durationMs: Number.POSITIVE_INFINITY,
    });
    const suite = only(await parse(renderJunit(report)), "testsuite");
    assert.equal(suite.attributes.timestamp, undefined);
    assert.equal(suite.attributes.time, "0.000");
    assert.equal(only(suite, "testcase").attributes.time, "0.000");
  },
);

xmlTest("renderJunit() carries hostile service strings through an XML parser intact", async () => {
  const cases = await testcases(hostileReport);
  assert.equal(cases.length, hostileReport.agents.length);
  hostileReport.agents.forEach((agent, index) => {
    const testcase = cases[index]!;
    assert.equal(testcase.attributes.name, `agent ${agent.agentId}`);
    const out = text(only(testcase, "system-out"));
    assert.ok(out.includes(`\nrun id: ${xmlClean(agent.runId!)}\n`), out);
    assert.ok(out.includes(`\nstatus: ${xmlClean(agent.status!)}`), out);
    if (agent.url !== null) assert.ok(out.includes(`\nlink: ${xmlClean(agent.url)}`), out);
    if (agent.error !== null) {
      assert.ok(out.endsWith(`\nerror: ${xmlClean(agent.error)}`), out);
      if (agent.outcome !== "failed" && agent.outcome !== "triggered") {
        const message = only(testcase, "error").attributes.message!;
        assert.ok(message.endsWith(`: ${xmlClean(agent.error)}`), message);
      }
    }
  });
  const passed = cases[0]!;
  assert.deepEqual(passed.children.filter((c) => typeof c !== "string").map((c) => c.name), [
    "system-out",
  ]);
});

xmlTest(
  "renderJunit() carries every hostile string through an attribute and text intact",
  async () => {
    const report = makeReport(
      HOSTILE_STRINGS.map((hostile) =>
        makeAgent({ outcome: "unchecked", passed: null, runId: hostile, error: hostile })
      ),
    );
    const cases = await testcases(report);
    HOSTILE_STRINGS.forEach((hostile, index) => {
      const error = only(cases[index]!, "error");
      assert.equal(
        error.attributes.message,
        `quality gate could not be checked: ${xmlClean(hostile)}`,
      );
      assert.ok(text(only(cases[index]!, "system-out")).includes(`run id: ${xmlClean(hostile)}\n`));
    });
  },
);

xmlTest("renderJunit() keeps any string it is given a valid, faithful document", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(anyString(), { minLength: 1, maxLength: 12 }),
      async (strings) => {
        const report = makeReport(
          strings.map((s) => makeAgent({ outcome: "failed", passed: false, status: s, error: s })),
          { version: strings[0]! },
        );
        const cases = await testcases(report);
        strings.forEach((s, index) => {
          assert.ok(
            text(only(cases[index]!, "system-out")).includes(`\nstatus: ${xmlClean(s)}\n`),
          );
        });
      },
    ),
    { numRuns: 25 },
  );
});

Deno.test("escapeXml() escapes markup and drops what XML 1.0 cannot carry", () => {
  assert.equal(escapeXml(`a<b>&"c'`), "a&lt;b&gt;&amp;&quot;c&apos;");
  assert.equal(escapeXml("]]>"), "]]&gt;");
  assert.equal(escapeXml("\t\n\r"), "&#9;&#10;&#13;");
  assert.equal(escapeXml("\u0000\u0008\u000b\u001b[31m\u007f\u0085\ufffe\uffff"), "[31m");
  assert.equal(escapeXml("x\ud800y\udc00z"), "xyz");
  assert.equal(escapeXml("🚀 𝒳 é \u00a0"), "🚀 𝒳 é \u00a0");
});
