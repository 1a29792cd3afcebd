/** GitLab CI: a collapsed progress section, `artifacts:reports:dotenv` and `annotations` files. */

import type { RunReport } from "../../report/outcome.ts";
import { httpLink, percentEncode } from "../../text/markdown.ts";
import { outcomeText } from "../../report/words.ts";
import { outputValues } from "../summary.ts";
import type { NativeWriter } from "./native_io.ts";
import type { Clock } from "../../effects.ts";
import { sanitize } from "../../text/sanitize.ts";
import { errorMessage } from "../../text/quote.ts";

export const GITLAB_DOTENV_FILE = "service-ci.env";

export const GITLAB_ANNOTATIONS_FILE = "service-ci-annotations.json";

export function createGitlabWriter({ now }: Pick<Clock, "now">): NativeWriter {
  const seconds = () => Math.floor(now() / 1000);
  return {
    ci: "GitLab CI",
    progressStart: (title) => [
      `\x1b[0Ksection_start:${seconds()}:${_SECTION}[collapsed=true]\r\x1b[0K${sanitize(title)}`,
    ],
    progressEnd: () => [`\x1b[0Ksection_end:${seconds()}:${_SECTION}\r\x1b[0K`],
    async finish(report, io) {
      const dotenv = gitlabDotenv(report);
      if (dotenv.omitted > 0) {
        io.warn(
          `GitLab CI: ${dotenv.omitted} run id(s) and link(s) left out of ${GITLAB_DOTENV_FILE}, ` +
            `which GitLab accepts only up to ${GITLAB_DOTENV_LIMITS.variables} variables and ` +
            `${GITLAB_DOTENV_LIMITS.bytes} bytes`,
        );
      }
      const files = [
        [GITLAB_DOTENV_FILE, dotenv.text],
        [GITLAB_ANNOTATIONS_FILE, gitlabAnnotations(report)],
      ] as const;
      for (const [path, text] of files) {
        try {
          await io.writeTextFile(path, text, false);
        } catch (error) {
          io.warn(`GitLab CI: could not write ${path} (${errorMessage(error)})`);
        }
      }
    },
  };
}

/**
 * Dotenv limits: under 5 KB and 20 variables (GitLab.com's lowest plan, self-managed's default).
 */
export const GITLAB_DOTENV_LIMITS = { bytes: 5119, variables: 20 } as const;

/**
 * Values are unquoted, because GitLab keeps quotes as part of the value, and percent-encoded, so
 * that none can start another variable or be read differently by GitLab, npm `dotenv` and Node's
 * `parseEnv` (`#` starts a comment for the latter two). The last agents go first past the limits.
 */
export function gitlabDotenv(report: RunReport): { text: string; omitted: number } {
  const outputs = outputValues(report);
  const single = report.agents.length === 1;
  const limits = GITLAB_DOTENV_LIMITS;
  const lines = [
    `SERVICE_CI_PASSED=${outputs.passed}`,
    `SERVICE_CI_EXIT_CODE=${outputs["exit-code"]}`,
  ];
  let bytes = lines.join("\n").length + 1;
  let omitted = 0;
  report.agents.forEach((agent, index) => {
    const suffix = single ? "" : `_${index + 1}`;
    const pair = [
      `SERVICE_CI_RUN_ID${suffix}=${percentEncode(agent.runId ?? "", _RUN_ID_SAFE)}`,
      `SERVICE_CI_URL${suffix}=${percentEncode(httpLink(agent.url) ?? "", _URL_SAFE)}`,
    ];
    const size = pair.join("\n").length + 1;
    if (omitted > 0 || lines.length + 2 > limits.variables || bytes + size > limits.bytes) {
      omitted += 2;
      return;
    }
    lines.push(...pair);
    bytes += size;
  });
  return { text: `${lines.join("\n")}\n`, omitted };
}

/** GitLab shows these links on the job's page. */
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
