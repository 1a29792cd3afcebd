/**
 * The commit statuses as one of the run's outputs (a courtesy): one status per agent on the
 * commit the gate evaluated, in progress once the agent's run is triggered, completed with its
 * outcome once the reports are written. A status that cannot be written is one line; it never
 * touches the verdict or the exit code.
 */

import type { CiMetadata } from "../ci_metadata.ts";
import type { Config } from "../config.ts";
import { httpLink } from "../markdown.ts";
import { optionName, OPTIONS } from "../options.ts";
import type { OutputsContext } from "../outputs.ts";
import type { RunDeps } from "../run.ts";
import type { RunOutput, RunPlan } from "../run_output.ts";
import { maskSecrets, sanitize } from "../sanitize.ts";
import { userAgent } from "../version.ts";
import { BITBUCKET_PROXY, bitbucketCommitApi } from "../report/bitbucket.ts";
import { BitbucketStatuses } from "./bitbucket.ts";
import { githubTarget, gitlabTarget } from "../pr_comment/forge_http.ts";
import type { StatusForge, StatusSkip } from "./commit_status.ts";
import { GithubStatuses } from "./github.ts";
import { GitlabStatuses } from "./gitlab.ts";

/** The default GitHub API root; `GITHUB_API_URL` points elsewhere on GitHub Enterprise Server. */

/**
 * The commit statuses' outputs for this run: one output, or none with one line on stderr saying
 * why (not GitHub Actions, GitLab CI or Bitbucket Pipelines; `--no-wait`; no commit SHA; no token;
 * a merge queue's `merge_group` event).
 *
 * @example
 * ```ts
 * import type { RunDeps } from "../run.ts";
 * import type { OutputsContext } from "../outputs.ts";
 * declare const deps: RunDeps;
 * declare const context: OutputsContext;
 * const outputs = commitStatusOutputs(deps, context);
 * ```
 */
export function commitStatusOutputs(deps: RunDeps, context: OutputsContext): RunOutput[] {
  const { output } = context;
  const made = statusForge(deps, context);
  if ("skip" in made) {
    output.stderr(`${made.skip}\n`);
    return [];
  }
  return [statusOutput(made, {
    secrets: output.secrets,
    warn: (line) => output.stderr(`${line}\n`),
  })];
}

/**
 * The forge to write the statuses to, from the CI detected and its environment, or the one line
 * saying why there is none.
 *
 * @example
 * ```ts
 * import type { RunDeps } from "../run.ts";
 * import type { OutputsContext } from "../outputs.ts";
 * declare const deps: RunDeps;
 * declare const context: OutputsContext;
 * const forge = statusForge(deps, context);
 * if ("skip" in forge) console.error(forge.skip);
 * ```
 */
export function statusForge(deps: RunDeps, context: OutputsContext): StatusForge | StatusSkip {
  const { config, env, metadata, output } = context;
  const read = (name: string) => env[name]?.trim() || null;
  const skip = (why: string): StatusSkip => ({ skip: `service-ci: no commit statuses: ${why}` });
  if (config.noWait) {
    return skip(
      `${
        optionName(OPTIONS.noWait)
      } leaves each run without a verdict, and a status completed without one could let a required check pass`,
    );
  }
  const sha = _commitSha(
    metadata,
    metadata.provider === "bitbucket" ? read("BITBUCKET_COMMIT") : null,
  );
  const effects = _effects(deps, config);
  switch (metadata.provider) {
    case "github_actions": {
      if (context.context.kind === "merge_queue") {
        return skip("no pull request is attached to a merge_group event");
      }
      if (sha === null) return skip(_noSha(metadata));
      const token = read("GITHUB_TOKEN");
      if (token === null) {
        return skip(
          "GITHUB_TOKEN is not set; set it to ${{ github.token }} and grant the job `permissions: checks: write`",
        );
      }
      const target = githubTarget(read, metadata.repository, token);
      if ("problem" in target) return skip(target.problem);
      return new GithubStatuses({
        token,
        apiUrl: target.apiUrl,
        repository: target.repository,
        sha,
        userAgent: userAgent(),
        warn: (line) => output.stderr(`${maskSecrets(line, [token])}\n`),
        ...effects,
      });
    }
    case "gitlab": {
      if (sha === null) return skip(_noSha(metadata));
      const token = read("SERVICE_GITLAB_TOKEN");
      if (token === null) {
        return skip(
          "SERVICE_GITLAB_TOKEN is not set; set it to a project access token with the api scope and the Developer role (CI_JOB_TOKEN cannot set statuses)",
        );
      }
      const target = gitlabTarget(read);
      if ("problem" in target) return skip(target.problem);
      return new GitlabStatuses({
        token,
        apiUrl: target.apiUrl,
        projectId: target.projectId,
        sha,
        userAgent: userAgent(),
        ...effects,
      });
    }
    case "bitbucket": {
      if (sha === null) return skip(_noSha(metadata));
      const api = bitbucketCommitApi((name) => read(name) ?? undefined, sha);
      if ("missing" in api) return skip(api.missing);
      const proxy = read("SERVICE_BITBUCKET_PROXY") ?? BITBUCKET_PROXY;
      return new BitbucketStatuses({
        commitApi: api.url,
        proxy,
        fetch: deps.makeProxyFetch(proxy, () => config.requestTimeoutMs),
        fallbackLink: httpLink(metadata.build_url) ?? api.web,
      });
    }
    default:
      return skip(
        `commit statuses are written from GitHub Actions, GitLab CI and Bitbucket Pipelines only (this build: ${metadata.provider})`,
      );
  }
}

/** What {@linkcode statusOutput} writes lines with. */
export interface StatusOutputOptions {
  /** Values never to show (the key, the forge tokens). */
  readonly secrets: readonly string[];
  /** Prints one line (without its newline). */
  readonly warn: (line: string) => void;
}

/**
 * The output that drives `forge`: the agent's status in progress on its first `triggered` or
 * `attached` event, completed with its outcome at `finish`. Writes for one agent go one after
 * the other; the first failure is one line, and a failure another attempt would only repeat
 * stops every further write.
 *
 * @example
 * ```ts
 * import type { StatusForge } from "./commit_status.ts";
 * declare const forge: StatusForge;
 * const output = statusOutput(forge, { secrets: [], warn: console.error });
 * output.kind; // "courtesy"
 * ```
 */
export function statusOutput(forge: StatusForge, options: StatusOutputOptions): RunOutput {
  let plan: RunPlan | undefined;
  const chains = new Map<string, Promise<void>>();
  const started = new Set<string>();
  let givenUp = false;
  let warned = false;
  const clean = (text: string | null) =>
    text === null ? null : sanitize(text, { secrets: options.secrets });
  const fail = (error: unknown, last: boolean) => {
    const final = forge.final(error);
    if (final) givenUp = true;
    // A passing fault of the in-progress status says nothing yet: the final write tries again.
    if ((!final && !last) || warned) return;
    warned = true;
    const what = error instanceof Error ? error.message : String(error);
    const advice = forge.advice(error);
    options.warn(maskSecrets(
      `service-ci: the ${forge.forge} commit statuses were not written: ${what}.${
        advice === "" ? "" : ` ${advice}`
      } The gate's verdict and exit code are not affected.`,
      options.secrets,
    ));
  };
  const enqueue = (agentId: string, write: () => Promise<void>, last: boolean) => {
    const chain = (chains.get(agentId) ?? Promise.resolve()).then(async () => {
      if (givenUp) return;
      try {
        await write();
      } catch (error) {
        fail(error, last);
      }
    });
    chains.set(agentId, chain);
    return chain;
  };
  const begin = (agentId: string, runId: string | null, url: string | null) => {
    if (plan === undefined || started.has(agentId)) return;
    started.add(agentId);
    const link = httpLink(clean(url)) ?? httpLink(plan.metadata.build_url);
    void enqueue(agentId, () => forge.start({ agentId, runId: clean(runId), link }), false);
  };
  return {
    kind: "courtesy",
    name: `the ${forge.forge} commit statuses`,
    start: (given) => plan = given,
    event(agentId, event) {
      if (event.type === "triggered") begin(agentId, event.runId, event.url);
      if (event.type === "attached") begin(agentId, event.runId, null);
    },
    finish: async (report) => {
      await Promise.all(report.agents.map((agent) => {
        if (agent.outcome === "triggered") return chains.get(agent.agentId);
        const link = httpLink(agent.url) ?? httpLink(report.ciMetadata.build_url);
        return enqueue(agent.agentId, () => forge.end({ agent, report, link }), true);
      }));
    },
  };
}

// The commit the gate evaluated, as a full SHA (the pull request's head: ci_metadata.ts picks
// it over the merge commit), or null.
function _commitSha(metadata: CiMetadata, fallback: string | null): string | null {
  const sha = metadata.commit_sha ?? fallback;
  return sha !== null && /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i.test(sha) ? sha.toLowerCase() : null;
}

function _noSha(metadata: CiMetadata): string {
  return `no full commit SHA was detected (got ${JSON.stringify(metadata.commit_sha ?? "")}; ${
    optionName(OPTIONS.commitSha)
  } gives one)`;
}

// A forge request's effects: the program's fetch, waits on the run's clock that an interrupt
// does not cut short (the final statuses still go out), and --request-timeout-seconds.
function _effects(deps: RunDeps, config: Config) {
  const never = new AbortController().signal;
  return {
    fetch: deps.makeProxyFetch(undefined),
    sleep: (ms: number) => deps.sleep(ms, never),
    now: deps.now,
    requestTimeoutMs: config.requestTimeoutMs,
  };
}
