/** The text of `service-ci --help`. */

import {
  DEFAULT_MAX_POLL_INTERVAL_SECONDS,
  DEFAULT_REQUEST_TIMEOUT_SECONDS,
  DEFAULT_TIMEOUT_MINUTES,
} from "./config.ts";
import { REPOSITORY_URL, VERSION } from "./version.ts";

/**
 * What `--help` prints, naming the built-in service address of this build (or none).
 *
 * @example
 * ```ts
 * helpText(undefined).includes("built-in default: none"); // true
 * ```
 */
export function helpText(defaultBaseUrl: string | undefined): string {
  return `service-ci ${VERSION}: run an agent's quality gate on the evaluation service and
turn its verdict into an exit code.

Usage:
  service-ci --agent <uuid> [--agent <uuid> …] [--base-url <url>] [--timeout-minutes <n>]
             [options]

The API key is read from SERVICE_API_KEY (environment or .env file), never from a flag.

Options ([VARIABLE] sets the same):
  --agent <uuid>            agent to run; repeatable, all run concurrently
                            [SERVICE_AGENT_ID, a comma list]
  --base-url <url>          the service's address; https:// (http:// only for localhost)
                            [SERVICE_BASE_URL]
                            built-in default: ${defaultBaseUrl ?? "none"}
  --timeout-minutes <n>     bounds the whole wait; decimals allowed (default ${DEFAULT_TIMEOUT_MINUTES})
                            [SERVICE_TIMEOUT_MINUTES]
  --json                    print one JSON document with every agent's outcome on stdout
  --junit <file>            write a JUnit XML report, one test case per agent
  --no-wait                 trigger the runs, print their ids, exit 0 without waiting
  --run-id <id>             attach to an existing run of the one --agent and wait for it
  --warn-only               report a failed gate but exit 0 (unchecked and timeout keep
                            their codes)
  --dry-run                 print the request that would be sent (key masked), send nothing
  --env-file <file>         read variables from this file instead of ./.env (set ones win)
  --ca-cert <file>          also trust the certificates in this PEM file [SERVICE_CA_CERT]
  --request-timeout-seconds <n>
                            one request's limit (default ${DEFAULT_REQUEST_TIMEOUT_SECONDS})
                            [SERVICE_REQUEST_TIMEOUT_SECONDS]
  --max-poll-interval-seconds <n>
                            longest wait between polls (default ${DEFAULT_MAX_POLL_INTERVAL_SECONDS})
                            [SERVICE_MAX_POLL_INTERVAL_SECONDS]
  --no-ci-native            no native output in Azure Pipelines, GitLab, TeamCity, Buildkite,
                            Bitbucket [SERVICE_CI_NATIVE=false]
  --pr-comment              keep one comment with the verdicts on the pull/merge request
                            [SERVICE_PR_COMMENT=true]
  --pr-comment-key <name>   a comment of its own for this job, e.g. a matrix leg
                            [SERVICE_PR_COMMENT_KEY]
  --commit-sha, --branch, --pull-request, --repository, --actor <value>
                            override the CI metadata detected from the environment
  -h, --help                print this help and exit 0
  --version                 print the version and exit 0

Exit codes:
  0  every gate passed            1  a gate failed
  2  usage or configuration error (nothing was sent)
  3  a gate could not be checked  4  the timeout ran out
  130, 143  interrupted by SIGINT, SIGTERM

Docs for this version: ${REPOSITORY_URL}/tree/v${VERSION}/docs
`;
}
