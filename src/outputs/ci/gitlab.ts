/**
 * GitLab CI's native output: a collapsed log section around progress, a dotenv file for
 * `artifacts:reports:dotenv` and a job-annotations file for `artifacts:reports:annotations`.
 */

import type { RunReport } from "../../result/outcome.ts";
import { httpLink } from "../../text/markdown.ts";
import { outcomeText } from "../../text/words.ts";
import { outputValues } from "../summary.ts";
import type { NativeIo, NativeWriter } from "./native_io.ts";
import { sanitize } from "../../text/sanitize.ts";

/** Where {@linkcode createGitlabWriter} writes the dotenv file, relative to the working directory. */
export const GITLAB_DOTENV_FILE = "service-ci.env";

/** Where {@linkcode createGitlabWriter} writes the annotations file. */
export const GITLAB_ANNOTATIONS_FILE = "service-ci-annotations.json";

/** Options of {@linkcode createGitlabWriter}. */
export interface GitlabWriterOptions {
  /** The clock, in milliseconds since the epoch; section markers carry Unix seconds. */
  readonly now?: () => number;
}

/**
 * The GitLab CI writer: progress in a collapsed log section named `service_ci_progress`, then
 * {@linkcode GITLAB_DOTENV_FILE} (see {@linkcode gitlabDotenv}) and
 * {@linkcode GITLAB_ANNOTATIONS_FILE} (see {@linkcode gitlabAnnotations}).
 *
 * @example
 * ```ts
 * const writer = createGitlabWriter({ now: () => 1_700_000_000_000 });
 * writer.progressStart("service-ci: waiting for 1 agent");
 * // ["\x1b[0Ksection_start:1700000000:service_ci_progress[collapsed=true]\r\x1b[0Kservice-ci: waiting for 1 agent"]
 * ```
 */
export function createGitlabWriter(options: GitlabWriterOptions = {}): NativeWriter {
  const now = options.now ?? Date.now;
  const seconds = () => Math.floor(now() / 1000);
  return {
    ci: "GitLab CI",
    progressStart: (title) => [
      `\x1b[0Ksection_start:${seconds()}:${_SECTION}[collapsed=true]\r\x1b[0K${sanitize(title)}`,
    ],
    progressEnd: () => [`\x1b[0Ksection_end:${seconds()}:${_SECTION}\r\x1b[0K`],
    finish: async (report: RunReport, io: NativeIo) => {
      const dotenv = gitlabDotenv(report);
      if (dotenv.omitted > 0) {
        io.warn(
          `GitLab CI: ${dotenv.omitted} run id(s) and link(s) left out of ${GITLAB_DOTENV_FILE}, ` +
            `which GitLab accepts only up to ${GITLAB_DOTENV_LIMITS.variables} variables and ` +
            `${GITLAB_DOTENV_LIMITS.bytes} bytes`,
        );
      }
      await _write(io, GITLAB_DOTENV_FILE, dotenv.text);
      await _write(io, GITLAB_ANNOTATIONS_FILE, gitlabAnnotations(report));
    },
  };
}

/**
 * The limits GitLab puts on a dotenv report: fewer than 5 KB, and at most 20 variables (the
 * lowest of GitLab.com's plan limits and self-managed instances' long-time default).
 *
 * @example
 * ```ts
 * GITLAB_DOTENV_LIMITS.variables; // 20
 * ```
 */
export const GITLAB_DOTENV_LIMITS: { readonly bytes: number; readonly variables: number } = {
  bytes: 5119,
  variables: 20,
};

/**
 * The dotenv report: `SERVICE_CI_PASSED` (`true`/`false`) and `SERVICE_CI_EXIT_CODE`, then each
 * agent's run id and link: `SERVICE_CI_RUN_ID` and `SERVICE_CI_URL` with one agent, indexed
 * `SERVICE_CI_RUN_ID_1`, `SERVICE_CI_URL_1`, … (agent order, from 1) with several; empty when
 * not known. One `KEY=value` per line, unquoted, because GitLab keeps quotes as part of the
 * value. Every character outside `A-Z a-z 0-9 - . _ ~ : / ? & = + , ; @ ! * ( ) [ ]` is
 * percent-encoded (UTF-8; a link keeps its own `%` escapes), so a value can neither start another variable nor be read
 * differently by GitLab, npm `dotenv` and Node's `parseEnv` (`#` starts a comment for the
 * latter two, so a link's `#` reaches later jobs as `%23`). Variables past
 * {@linkcode GITLAB_DOTENV_LIMITS} are left out (counted in `omitted`), last agents first.
 */
export function gitlabDotenv(report: RunReport): { text: string; omitted: number } {
  const outputs = outputValues(report);
  const single = report.agents.length === 1;
  const lines = [
    `SERVICE_CI_PASSED=${outputs.passed}`,
    `SERVICE_CI_EXIT_CODE=${outputs["exit-code"]}`,
  ];
  let bytes = lines.join("\n").length + 1;
  let omitted = 0;
  report.agents.forEach((agent, index) => {
    const suffix = single ? "" : `_${index + 1}`;
    const pair = [
      `SERVICE_CI_RUN_ID${suffix}=${_dotenvValue(agent.runId ?? "", _RUN_ID_SAFE)}`,
      `SERVICE_CI_URL${suffix}=${_dotenvValue(httpLink(agent.url) ?? "", _URL_SAFE)}`,
    ];
    const size = pair.join("\n").length + 1;
    if (
      omitted > 0 || lines.length + 2 > GITLAB_DOTENV_LIMITS.variables ||
      bytes + size > GITLAB_DOTENV_LIMITS.bytes
    ) {
      omitted += 2;
      return;
    }
    lines.push(...pair);
    bytes += size;
  });
  return { text: `${lines.join("\n")}\n`, omitted };
}

/**
 * The job-annotations report: one section, `service-ci`, with an `external_link` per agent whose
 * run has an `http:`/`https:` dashboard link, labelled with the agent, its verdict and the run.
 * GitLab shows these links on the job's page.
 */
export function gitlabAnnotations(report: RunReport): string {
  const links = report.agents.flatMap((agent) => {
    const url = httpLink(agent.url);
    if (url === null) return [];
    const verdict = outcomeText(agent.outcome);
    const run = agent.runId === null ? "" : `, run ${sanitize(agent.runId, { maxLength: 100 })}`;
    return [{ external_link: { label: `Agent ${agent.agentId}: ${verdict}${run}`, url } }];
  });
  return `${JSON.stringify({ "service-ci": links }, null, 2)}\n`;
}

const _SECTION = "service_ci_progress";

// Characters every dotenv reader takes literally in an unquoted value, and that never end one.
// A link keeps its own percent-escapes; in a run id "%" is encoded too, so decoding restores it.
const _URL_SAFE = /[A-Za-z0-9\-._~:/?&=+,;@%!*()[\]]/;
const _RUN_ID_SAFE = /[A-Za-z0-9\-._~:/?&=+,;@!*()[\]]/;
const _UTF8 = new TextEncoder();

function _dotenvValue(value: string, safe: RegExp): string {
  return Array.from(value, (char) =>
    safe.test(char) ? char : Array.from(
      _UTF8.encode(char),
      (byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`,
    ).join("")).join("");
}

async function _write(io: NativeIo, path: string, text: string): Promise<void> {
  try {
    await io.writeTextFile(path, text, false);
  } catch (error) {
    io.warn(
      `GitLab CI: could not write ${path} (${error instanceof Error ? error.message : error})`,
    );
  }
}
