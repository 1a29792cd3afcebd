import assert from "node:assert/strict";
import { BITBUCKET_PROXY } from "../../../src/forge/bitbucket.ts";
import {
  bitbucketAnnotations,
  bitbucketReport,
  createBitbucketWriter,
} from "../../../src/outputs/ci/bitbucket.ts";
import {
  AGENT_IDS,
  githubMetadata,
  hostileReport,
  makeAgent,
  makeReport,
  mixedReport,
  passingReport,
} from "../../support/report_fixtures.ts";
import { FakeTime } from "../../support/fake_time.ts";
import { REFUSED_URL } from "../../support/refused_address.ts";
import {
  proxyFetch,
  recordingIo,
  startFakeProxy,
  startSilentProxy,
} from "../../support/native_io.ts";

const SHA = githubMetadata.commit_sha!;
const REPORT_URL =
  `http://api.bitbucket.org/2.0/repositories/acme/widgets/commit/${SHA}/reports/service-ci`;

// A pipeline step's environment, with the proxy moved to the fake one on loopback.
function pipelineEnv(proxy: string): Record<string, string> {
  return {
    BITBUCKET_BUILD_NUMBER: "7",
    BITBUCKET_WORKSPACE: "acme",
    BITBUCKET_REPO_SLUG: "widgets",
    BITBUCKET_COMMIT: SHA,
    SERVICE_BITBUCKET_PROXY: proxy,
  };
}

Deno.test("bitbucketReport() is a TEST report, FAILED with a link per run when a gate did not pass", () => {
  const report = bitbucketReport(mixedReport);
  assert.equal(report.report_type, "TEST");
  assert.equal(report.result, "FAILED");
  assert.equal(report.title, "service-ci quality gate");
  assert.equal(report.reporter, "service-ci");
  assert.equal(report.link, undefined);
  assert.deepEqual(report.data.slice(0, 2), [
    { title: "Exit code", type: "NUMBER", value: 3 },
    { title: "Duration", type: "DURATION", value: 1_800_100 },
  ]);
  assert.deepEqual(report.data[2], {
    title: `Agent ${AGENT_IDS.passed.slice(0, 8)}`,
    type: "LINK",
    value: { text: "run run_1", href: "https://service.example/runs/run_1" },
  });
  // Five of the six agents have a link.
  assert.equal(report.data.length, 2 + 5);
  assert.match(report.details, /^Not passed; exit code 3; service-ci 1\.0\.0\.\n/);
  assert.match(report.details, /403 Forbidden: the key lacks CI access/);
});

Deno.test("bitbucketReport() is PASSED with the run's link for one passing agent, PENDING when not waited for", () => {
  const report = bitbucketReport(passingReport);
  assert.equal(report.result, "PASSED");
  assert.equal(report.link, "https://service.example/runs/run_1");
  const noWait = makeReport([makeAgent({ outcome: "triggered", passed: null })]);
  assert.equal(bitbucketReport(noWait).result, "PENDING");
});

Deno.test("bitbucketReport() keeps within Atlassian's limits: 10 data fields, 2000 characters of details", () => {
  const many = makeReport(
    Array.from(
      { length: 40 },
      (_, index) => makeAgent({ runId: `run_${index}_${"x".repeat(80)}`, error: "🚀".repeat(30) }),
    ),
  );
  const report = bitbucketReport(many);
  assert.equal(report.data.length, 10);
  assert.ok(report.details.length <= 2000, `${report.details.length}`);
  assert.ok(report.details.endsWith("…"));
  for (const field of report.data) {
    if (field.type === "LINK") assert.ok(field.value.text.length <= 100);
  }
});

Deno.test("bitbucketAnnotations() gives one annotation per failed or unchecked agent, with its link", () => {
  const annotations = bitbucketAnnotations(mixedReport);
  assert.deepEqual(
    annotations.map((annotation) => annotation.external_id),
    ["failed", "unchecked", "timed_out", "interrupted"].map((outcome) =>
      `service-ci-${AGENT_IDS[outcome as keyof typeof AGENT_IDS]}`
    ),
  );
  assert.deepEqual(annotations[0], {
    external_id: `service-ci-${AGENT_IDS.failed}`,
    annotation_type: "BUG",
    result: "FAILED",
    severity: "HIGH",
    summary: `Agent ${AGENT_IDS.failed}: quality gate failed`,
    details: `Agent ${AGENT_IDS.failed}: quality gate failed; run run_2; status failed`,
    link: "https://service.example/runs/run_2",
  });
  assert.equal(annotations[1]!.severity, "MEDIUM");
  assert.equal(annotations[1]!.link, undefined);
});

Deno.test("bitbucketAnnotations() gives a failed gate's reason from the service, in the summary Bitbucket shows first and in the details", () => {
  const agent = makeAgent({
    outcome: "failed",
    runId: "run_9",
    status: "completed",
    gate: [{ name: "rule", value: "jailbreak success rate < 2%" }, { name: "score", value: 0.031 }],
  });
  const [annotation] = bitbucketAnnotations(makeReport([agent]));
  const reason = "rule: jailbreak success rate < 2%; score: 0.031";
  assert.equal(annotation!.summary, `Agent ${agent.agentId}: quality gate failed: ${reason}`);
  assert.equal(
    annotation!.details,
    `Agent ${agent.agentId}: quality gate failed; run run_9; status completed; ${reason}`,
  );
  // Within Bitbucket's limits however long the reason.
  const long = makeAgent({ outcome: "failed", gate: [{ name: "rule", value: "r".repeat(3000) }] });
  const [cut] = bitbucketAnnotations(makeReport([long]));
  assert.equal(cut!.summary.length, 450);
  assert.equal(cut!.details.length, 2000);
});

Deno.test("bitbucketAnnotations() never links to anything but http(s) and cuts long texts", () => {
  const annotations = bitbucketAnnotations(hostileReport);
  assert.equal(annotations.length, 4);
  for (const annotation of annotations) {
    if (annotation.link !== undefined) assert.match(new URL(annotation.link).protocol, /^https?:$/);
    assert.ok(annotation.summary.length <= 450);
    assert.ok(annotation.details.length <= 2000);
  }
  const long = makeReport([makeAgent({ outcome: "failed", error: "e".repeat(5000) })]);
  assert.equal(bitbucketAnnotations(long)[0]!.details.length, 2000);
});

Deno.test("createBitbucketWriter().finish() replaces the commit's report and its annotations through the proxy", async () => {
  await using proxy = await startFakeProxy();
  const { io, warnings, commands } = recordingIo({ env: pipelineEnv(proxy.url) });
  const writer = createBitbucketWriter();
  assert.deepEqual(writer.progressStart("x"), []);
  assert.deepEqual(writer.progressEnd(mixedReport), []);
  await writer.finish(mixedReport, io);
  assert.deepEqual(warnings, []);
  assert.deepEqual(commands, []);
  assert.deepEqual(
    proxy.requests.map((request) => `${request.method} ${request.url}`),
    [
      `DELETE ${REPORT_URL}`,
      `PUT ${REPORT_URL}`,
      `POST ${REPORT_URL}/annotations`,
    ],
  );
  const [, put, post] = proxy.requests;
  assert.equal(put!.headers["content-type"], "application/json");
  assert.deepEqual(JSON.parse(put!.body), bitbucketReport(mixedReport));
  assert.deepEqual(JSON.parse(post!.body), bitbucketAnnotations(mixedReport));
  // The proxy adds the credentials: none is sent from here.
  for (const request of proxy.requests) assert.equal(request.headers.authorization, undefined);
});

Deno.test("createBitbucketWriter().finish() sends no annotations when every gate passed, and tolerates a missing old report", async () => {
  await using proxy = await startFakeProxy((request) =>
    request.method === "DELETE" ? new Response("", { status: 404 }) : Response.json({})
  );
  const { io, warnings } = recordingIo({ env: pipelineEnv(proxy.url) });
  await createBitbucketWriter().finish(passingReport, io);
  assert.deepEqual(warnings, []);
  assert.deepEqual(proxy.requests.map((request) => request.method), ["DELETE", "PUT"]);
});

Deno.test("createBitbucketWriter().finish() says in one line when the proxy answers an error, and stops", async () => {
  await using proxy = await startFakeProxy((request) =>
    request.method === "PUT" ? new Response("nope", { status: 403 }) : Response.json({})
  );
  const { io, warnings } = recordingIo({ env: pipelineEnv(proxy.url) });
  await createBitbucketWriter().finish(mixedReport, io);
  assert.deepEqual(warnings, [
    `Bitbucket Pipelines: the Code Insights report could not be sent through the proxy ` +
    `${proxy.url} (PUT answered 403)`,
  ]);
  assert.deepEqual(proxy.requests.map((request) => request.method), ["DELETE", "PUT"]);
});

Deno.test("createBitbucketWriter().finish() says in one line when the proxy cannot be reached", async () => {
  const closed = REFUSED_URL;
  const { io, warnings } = recordingIo({ env: pipelineEnv(closed) });
  await createBitbucketWriter().finish(mixedReport, io);
  assert.equal(warnings.length, 1);
  assert.ok(
    warnings[0]!.startsWith(
      `Bitbucket Pipelines: the Code Insights report could not be sent through the proxy ${closed} (`,
    ),
    warnings[0],
  );
});

Deno.test("createBitbucketWriter().finish() gives up on a proxy that never answers within the bound, in one line", async () => {
  await using proxy = startSilentProxy();
  const time = new FakeTime();
  const { io, warnings } = recordingIo({
    env: pipelineEnv(proxy.url),
    makeFetch: (via) => proxyFetch(via, () => 200, time.timeout),
  });
  // Virtual time stands still until the proxy has the connection, then runs out the bound.
  void time.hold(proxy.connected);
  await createBitbucketWriter().finish(mixedReport, io);
  assert.equal(time.monotonic(), 200);
  assert.deepEqual(warnings, [
    `Bitbucket Pipelines: the Code Insights report could not be sent through the proxy ${proxy.url} (no answer within 200 ms)`,
  ]);
  assert.equal(proxy.connections(), 1, "nothing is sent after the first request");
});

Deno.test("createBitbucketWriter().finish() uses the pipeline's own proxy unless told otherwise", async () => {
  const proxies: (string | undefined)[] = [];
  const { io } = recordingIo({
    env: { BITBUCKET_REPO_FULL_NAME: "acme/widgets" },
    makeFetch: (proxy) => {
      proxies.push(proxy);
      return () => Promise.resolve(new Response("{}"));
    },
  });
  await createBitbucketWriter().finish(passingReport, io);
  assert.deepEqual(proxies, [BITBUCKET_PROXY]);
  assert.equal(BITBUCKET_PROXY, "http://localhost:29418");
});

Deno.test("createBitbucketWriter().finish() sends nothing and says why without a repository or a commit", async () => {
  let fetched = 0;
  const makeFetch = () => () => {
    fetched++;
    return Promise.resolve(new Response("{}"));
  };
  const noRepository = recordingIo({ env: {}, makeFetch });
  await createBitbucketWriter().finish(passingReport, noRepository.io);
  assert.deepEqual(noRepository.warnings, [
    "Bitbucket Pipelines: no Code Insights report was sent: BITBUCKET_WORKSPACE and " +
    "BITBUCKET_REPO_SLUG (or BITBUCKET_REPO_FULL_NAME) are not set",
  ]);
  const noCommit = recordingIo({ env: { BITBUCKET_REPO_FULL_NAME: "acme/widgets" }, makeFetch });
  const report = makeReport([makeAgent()], {
    ciMetadata: { ...githubMetadata, commit_sha: "../../x" },
  });
  await createBitbucketWriter().finish(report, noCommit.io);
  assert.deepEqual(noCommit.warnings, [
    'Bitbucket Pipelines: no Code Insights report was sent: the commit is not a hex SHA (got "../../x")',
  ]);
  assert.equal(fetched, 0);
});
