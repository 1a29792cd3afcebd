/**
 * How each CI reads a log line as a command, as oracles for tests: the real parser where one is
 * published on npm, otherwise a line-for-line port of the CI's own reader (cited per function).
 */

// Matching control characters is part of modelling the readers.
// deno-lint-ignore-file no-control-regex

import { commandFromString } from "npm:azure-pipelines-task-lib@5.281.0/taskcommand.js";

/** One command a CI would find in a line: which CI, and the command's name. */
export interface FoundCommand {
  readonly ci: "github" | "azure" | "teamcity" | "buildkite" | "gitlab";
  readonly name: string;
}

// .NET's char.IsWhiteSpace also counts U+0085, which JavaScript's trimStart() does not.
function _dotnetTrimStart(text: string): string {
  return text.replace(/^[\s\u0085]+/, "");
}

/**
 * GitHub Actions, as actions/runner reads a line (src/Runner.Common/ActionCommand.cs): `TryParseV2`
 * wants `::name …::` at the start after `TrimStart()`, `TryParse` finds the legacy `##[name …]`
 * anywhere with `IndexOf`. Any command name counts, not only the registered ones, to be strict.
 *
 * @example
 * ```ts
 * githubCommand("x ##[error]boom"); // "error"
 * ```
 */
export function githubCommand(line: string): string | undefined {
  const trimmed = _dotnetTrimStart(line);
  if (trimmed.startsWith("::")) {
    const end = trimmed.indexOf("::", 2);
    if (end >= 0) {
      const info = trimmed.slice(2, end);
      const name = info.split(" ")[0] ?? "";
      if (name !== "") return name;
    }
  }
  const prefix = line.indexOf("##[");
  if (prefix < 0) return undefined;
  const close = line.indexOf("]", prefix);
  if (close < 0) return undefined;
  const name = line.slice(prefix + 3, close).split(" ")[0] ?? "";
  return name === "" ? undefined : name;
}

/**
 * Azure Pipelines: the agent finds `##vso[` anywhere with `IndexOf` and wants `area.event` before
 * the first `]` (microsoft/azure-pipelines-agent, src/Microsoft.VisualStudio.Services.Agent/
 * Command.cs); the command is then parsed by azure-pipelines-task-lib's own `commandFromString`.
 *
 * @example
 * ```ts
 * azureCommand("x ##vso[task.complete result=Succeeded]"); // "task.complete"
 * ```
 */
export function azureCommand(line: string): string | undefined {
  const prefix = line.indexOf("##vso[");
  if (prefix < 0) return undefined;
  const close = line.indexOf("]", prefix);
  if (close < 0) return undefined;
  const name = line.slice(prefix + 6, close).split(" ")[0] ?? "";
  if (name.split(".").filter((part) => part !== "").length !== 2) return undefined;
  try {
    return commandFromString(line.slice(prefix)).command;
  } catch {
    // The task library refuses what the agent accepts (e.g. a property without `=`): still a
    // command for the agent.
    return name;
  }
}

/**
 * TeamCity: `ServiceMessage.splitTextToServiceMessagesAndRegularText` in JetBrains'
 * teamcity-service-messages finds `##teamcity[` anywhere with `indexOf` and ends the message at the
 * first `]` not escaped by `|`. (The npm package `teamcity-service-messages` only writes messages,
 * so this port is the oracle.)
 *
 * @example
 * ```ts
 * teamcityCommands("x ##teamcity[buildStatus status='SUCCESS']"); // ["buildStatus"]
 * ```
 */
export function teamcityCommands(line: string): string[] {
  const names: string[] = [];
  let from = 0;
  while (from < line.length) {
    const start = line.indexOf("##teamcity[", from);
    if (start < 0) break;
    let end = start;
    do {
      end = line.indexOf("]", end + 1);
    } while (end !== -1 && line[end - 1] === "|");
    if (end === -1) break;
    const body = line.slice(start + 11, end).trim();
    if (body !== "") names.push(body.split(" ")[0] ?? "");
    from = end + 1;
  }
  return names;
}

/**
 * Buildkite: the agent's `isHeader` / `isHeaderExpansion` (buildkite/agent,
 * agent/header_times_streamer.go) remove colour codes anywhere in the line, then match
 * `^(?:---|\+\+\+|~~~)\s` or `^\^\^\^\s+\+\+\+\s*$`.
 *
 * @example
 * ```ts
 * buildkiteHeader("\x1b[1m--- group"); // "---"
 * ```
 */
export function buildkiteHeader(line: string): string | undefined {
  const plain = line.replace(/\x1b\[([;\d]+)?[mK]/g, "");
  return /^(?:---|\+\+\+|~~~)[\t\n\f\r ]/.exec(plain)?.[0].slice(0, 3) ??
    (/^\^\^\^[\t\n\f\r ]+\+\+\+[\t\n\f\r ]*$/.test(plain) ? "^^^ +++" : undefined);
}

/**
 * GitLab: the trace converter scans every position of a line for `build_trace_section_regex`
 * (gitlab-org/gitlab, lib/gitlab/regex.rb and lib/gitlab/ci/ansi2json/converter.rb).
 *
 * @example
 * ```ts
 * gitlabSections("section_start:1:build\r\x1b[0Kgo"); // ["start"]
 * ```
 */
export function gitlabSections(line: string): string[] {
  const section =
    /section_(start|end):(\d+):([a-zA-Z0-9_.-]+)(\[(?:\w+=\w+)(?:, ?(?:\w+=\w+))*\])?\r\x1b\[0K/g;
  return [...line.matchAll(section)].map((match) => match[1] ?? "");
}

/**
 * Every command any of the five CIs would find in `text`, read line by line as their readers split
 * lines (`\n`, `\r\n` or `\r`; GitLab's marker itself holds a `\r`, so it is looked for in the whole
 * `\n`-separated line).
 *
 * @example
 * ```ts
 * commandsIn("ok\n::error::boom"); // [{ ci: "github", name: "error" }]
 * ```
 */
export function commandsIn(text: string): FoundCommand[] {
  const found: FoundCommand[] = [];
  for (const wide of text.split("\n")) {
    for (const name of gitlabSections(wide)) found.push({ ci: "gitlab", name });
    for (const line of wide.split("\r")) {
      const github = githubCommand(line);
      if (github !== undefined) found.push({ ci: "github", name: github });
      const azure = azureCommand(line);
      if (azure !== undefined) found.push({ ci: "azure", name: azure });
      for (const name of teamcityCommands(line)) found.push({ ci: "teamcity", name });
      const buildkite = buildkiteHeader(line);
      if (buildkite !== undefined) found.push({ ci: "buildkite", name: buildkite });
    }
  }
  return found;
}
