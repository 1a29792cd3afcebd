import assert from "node:assert/strict";
import { parseEnv } from "node:util";
import dotenv from "npm:dotenv@16.4.7";
import fc from "npm:fast-check@3.23.2";
import {
  createGitlabWriter,
  GITLAB_ANNOTATIONS_FILE,
  GITLAB_DOTENV_FILE,
  GITLAB_DOTENV_LIMITS,
  gitlabAnnotations,
  gitlabDotenv,
} from "../../../src/outputs/ci/gitlab.ts";
import {
  AGENT_IDS,
  anyString,
  hostileReport,
  makeAgent,
  makeReport,
  mixedReport,
  passingReport,
} from "../../support/report_fixtures.ts";
import { recordingIo } from "../../support/native_io.ts";

// GitLab's own reading (Ci::ParseDotenvArtifactService): lines split at "\n", each must match
// /^(.*?)=(.*)$/, key and value stripped, the key only ASCII letters, digits and "_", no empty
// lines, quotes and "#" kept as they are.
function readAsGitlab(text: string): Record<string, string> {
  const lines = text.split("\n");
  assert.equal(lines.pop(), "", "the file ends with a newline");
  const variables: Record<string, string> = {};
  for (const line of lines) {
    const match = /^([^=\n]*?)=(.*)$/.exec(line);
    assert.ok(match, `GitLab refuses the line ${JSON.stringify(line)}`);
    const key = match[1]!.trim();
    assert.match(key, /^[A-Za-z0-9_]+$/, `GitLab refuses the key ${JSON.stringify(key)}`);
    variables[key] = match[2]!.trim();
  }
  return variables;
}

// The dotenv file as all three readers see it; they must agree.
function readDotenv(text: string): Record<string, string> {
  const gitlab = readAsGitlab(text);
  assert.deepEqual({ ...dotenv.parse(text) }, gitlab, "npm dotenv reads the file as GitLab does");
  assert.deepEqual({ ...parseEnv(text) }, gitlab, "Node's parseEnv reads the file as GitLab does");
  return gitlab;
}

Deno.test("createGitlabWriter() opens a collapsed section stamped with the injected clock and closes it", () => {
  let now = 1_700_000_000_999;
  const writer = createGitlabWriter({ now: () => now });
  assert.deepEqual(writer.progressStart("service-ci: waiting for 2 agents"), [
    "\x1b[0Ksection_start:1700000000:service_ci_progress[collapsed=true]\r\x1b[0K" +
    "service-ci: waiting for 2 agents",
  ]);
  now += 61_000;
  assert.deepEqual(writer.progressEnd(passingReport), [
    "\x1b[0Ksection_end:1700000061:service_ci_progress\r\x1b[0K",
  ]);
  assert.equal(writer.ci, "GitLab CI");
});

Deno.test("createGitlabWriter() keeps a section title on one line without controls", () => {
  const [line] = createGitlabWriter({ now: () => 0 }).progressStart("a\nb\r\x1b[31mc\u2028d");
  assert.equal(
    line,
    "\x1b[0Ksection_start:0:service_ci_progress[collapsed=true]\r\x1b[0Ka b c d",
  );
});

Deno.test("createGitlabWriter() makes any title one section header that nothing can end early", () => {
  const writer = createGitlabWriter({ now: () => 0 });
  const prefix = "\x1b[0Ksection_start:0:service_ci_progress[collapsed=true]\r\x1b[0K";
  fc.assert(
    fc.property(anyString(), (title) => {
      const lines = writer.progressStart(title);
      assert.equal(lines.length, 1);
      assert.ok(lines[0]!.startsWith(prefix));
      // deno-lint-ignore no-control-regex
      assert.doesNotMatch(lines[0]!.slice(prefix.length), /[\x00-\x1f\x7f-\x9f\u2028\u2029]/);
    }),
  );
});

Deno.test("gitlabDotenv() gives one agent's verdict, exit code, run id and link", () => {
  const { text, omitted } = gitlabDotenv(passingReport);
  assert.equal(omitted, 0);
  assert.equal(
    text,
    "SERVICE_CI_PASSED=true\nSERVICE_CI_EXIT_CODE=0\nSERVICE_CI_RUN_ID=run_1\n" +
      "SERVICE_CI_URL=https://service.example/runs/run_1\n",
  );
  assert.deepEqual(readDotenv(text), {
    SERVICE_CI_PASSED: "true",
    SERVICE_CI_EXIT_CODE: "0",
    SERVICE_CI_RUN_ID: "run_1",
    SERVICE_CI_URL: "https://service.example/runs/run_1",
  });
});

Deno.test("gitlabDotenv() numbers several agents' run ids and links from 1, empty when unknown", () => {
  const variables = readDotenv(gitlabDotenv(mixedReport).text);
  assert.equal(variables.SERVICE_CI_PASSED, "false");
  assert.equal(variables.SERVICE_CI_EXIT_CODE, "3");
  assert.equal(variables.SERVICE_CI_RUN_ID_2, "run_2");
  assert.equal(variables.SERVICE_CI_URL_2, "https://service.example/runs/run_2");
  assert.equal(variables.SERVICE_CI_RUN_ID_3, "");
  assert.equal(variables.SERVICE_CI_URL_3, "");
  assert.equal(variables.SERVICE_CI_RUN_ID_6, "run_6");
  assert.equal(variables.SERVICE_CI_RUN_ID, undefined);
  assert.equal(Object.keys(variables).length, 2 + 2 * mixedReport.agents.length);
});

Deno.test("gitlabDotenv() writes hostile run ids and links as inert, percent-encoded values", () => {
  const variables = readDotenv(gitlabDotenv(hostileReport).text);
  const expectedKeys = ["SERVICE_CI_PASSED", "SERVICE_CI_EXIT_CODE"];
  hostileReport.agents.forEach((_, index) => {
    expectedKeys.push(`SERVICE_CI_RUN_ID_${index + 1}`, `SERVICE_CI_URL_${index + 1}`);
  });
  assert.deepEqual(Object.keys(variables).toSorted(), expectedKeys.toSorted());
  hostileReport.agents.forEach((agent, index) => {
    assert.equal(decodeURIComponent(variables[`SERVICE_CI_RUN_ID_${index + 1}`]!), agent.runId);
  });
  // Only http(s) links; javascript: and data: are left empty.
  assert.equal(variables.SERVICE_CI_URL_2, "");
  assert.equal(variables.SERVICE_CI_URL_3, "");
  assert.equal(
    decodeURIComponent(variables.SERVICE_CI_URL_1!),
    decodeURIComponent(new URL(hostileReport.agents[0]!.url!).href),
  );
});

Deno.test("gitlabDotenv() never lets any run id or link add, drop or change another variable", () => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ runId: anyString(), url: anyString() }), {
        minLength: 1,
        maxLength: 4,
      }),
      (fields) => {
        const report = makeReport(fields.map((field) => makeAgent(field)));
        const { text } = gitlabDotenv(report);
        const variables = readDotenv(text);
        assert.equal(variables.SERVICE_CI_PASSED, "true");
        assert.equal(variables.SERVICE_CI_EXIT_CODE, "0");
        assert.equal(Object.keys(variables).length, 2 + 2 * fields.length);
        for (const value of Object.values(variables)) {
          assert.match(value, /^[A-Za-z0-9\-._~:/?&=+,;@%!*()[\]]*$/);
        }
      },
    ),
    { numRuns: 100 },
  );
});

Deno.test("gitlabDotenv() stays within GitLab's variable and size limits, counting what it leaves out", () => {
  const many = makeReport(
    Array.from({ length: 30 }, (_, index) => makeAgent({ runId: `run_${index}` })),
  );
  const { text, omitted } = gitlabDotenv(many);
  const variables = readDotenv(text);
  assert.equal(Object.keys(variables).length, GITLAB_DOTENV_LIMITS.variables);
  assert.equal(omitted, 2 * 30 - (GITLAB_DOTENV_LIMITS.variables - 2));
  assert.equal(variables.SERVICE_CI_RUN_ID_9, "run_8");

  const long = makeReport(
    Array.from(
      { length: 3 },
      (_, index) => makeAgent({ url: `https://service.example/${String(index).repeat(2000)}` }),
    ),
  );
  const cut = gitlabDotenv(long);
  assert.ok(new TextEncoder().encode(cut.text).length < 5120);
  assert.equal(cut.omitted, 2);
  assert.ok(readDotenv(cut.text).SERVICE_CI_URL_2);
});

Deno.test("gitlabAnnotations() links each run with an http(s) dashboard link on the job page", () => {
  const annotations = JSON.parse(gitlabAnnotations(mixedReport));
  assert.deepEqual(Object.keys(annotations), ["service-ci"]);
  const links = annotations["service-ci"].map((entry: { external_link: unknown }) =>
    entry.external_link
  );
  assert.deepEqual(links[0], {
    label: `Agent ${AGENT_IDS.passed}: quality gate passed, run run_1`,
    url: "https://service.example/runs/run_1",
  });
  assert.deepEqual(links[1], {
    label: `Agent ${AGENT_IDS.failed}: quality gate failed, run run_2`,
    url: "https://service.example/runs/run_2",
  });
  // The unchecked agent has no link; the other four have one.
  assert.equal(links.length, mixedReport.agents.length - 1);
  assert.match(links.at(-1).label, /run started, not waited for/);
});

Deno.test("gitlabAnnotations() leaves out every link that is not http(s) and keeps labels on one line", () => {
  const annotations = JSON.parse(gitlabAnnotations(hostileReport));
  for (const { external_link: link } of annotations["service-ci"]) {
    assert.match(new URL(link.url).protocol, /^https?:$/);
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(link.label, /[\x00-\x1f\x7f-\x9f]/);
    assert.deepEqual(Object.keys(link).toSorted(), ["label", "url"]);
  }
  assert.equal(annotations["service-ci"].length, 3);
});

Deno.test("createGitlabWriter().finish() writes the dotenv and annotations files and warns of nothing", async () => {
  const { io, files, warnings, commands } = recordingIo();
  await createGitlabWriter({ now: Date.now }).finish(mixedReport, io);
  assert.deepEqual([...files.keys()], [GITLAB_DOTENV_FILE, GITLAB_ANNOTATIONS_FILE]);
  assert.equal(files.get(GITLAB_DOTENV_FILE), gitlabDotenv(mixedReport).text);
  assert.equal(files.get(GITLAB_ANNOTATIONS_FILE), gitlabAnnotations(mixedReport));
  assert.deepEqual(warnings, []);
  assert.deepEqual(commands, []);
});

Deno.test("createGitlabWriter().finish() says in one line which file it could not write and writes the other", async () => {
  const record = recordingIo();
  const { io, files, warnings } = recordingIo({
    writeTextFile: (path, text, append) =>
      path === GITLAB_DOTENV_FILE
        ? Promise.reject(new Deno.errors.PermissionDenied("read-only file system"))
        : record.io.writeTextFile(path, text, append),
  });
  await createGitlabWriter({ now: Date.now }).finish(passingReport, io);
  assert.deepEqual(warnings, [
    `GitLab CI: could not write ${GITLAB_DOTENV_FILE} (read-only file system)`,
  ]);
  assert.equal(files.size, 0);
  assert.ok(record.files.has(GITLAB_ANNOTATIONS_FILE));
});

Deno.test("createGitlabWriter().finish() warns once when agents' ids and links do not fit the dotenv limits", async () => {
  const { io, warnings } = recordingIo();
  const many = makeReport(Array.from({ length: 12 }, () => makeAgent()));
  await createGitlabWriter({ now: Date.now }).finish(many, io);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /^GitLab CI: 6 run id\(s\) and link\(s\) left out of service-ci\.env/);
});
