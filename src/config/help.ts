/** The text of `service-ci --help`, its option list drawn from the option table. */

import { OPTION_LIST, optionName, OPTIONS, type OptionSpec } from "./options.ts";
import { REPOSITORY_URL, VERSION } from "./version.ts";
import { EXIT_MEANINGS } from "./exit_codes.ts";

// Descriptions start here; a variable joins the last line within VARIABLE_WIDTH, else its own.
const COLUMN = 28;
const VARIABLE_WIDTH = 90;

/** Names the built-in service address of this build (or none). */
export function helpText(defaultBaseUrl: string | undefined): string {
  const { agents, baseUrl, timeoutMinutes, apiKey } = OPTIONS;
  const variables = OPTION_LIST
    .filter((option) => option.flag === undefined && option !== apiKey)
    .map((option) =>
      `  ${_variable(option)!.slice(1, -1).padEnd(COLUMN - 2)}${option.help.join(" ")}`
    );
  // One entry per option with a flag; consecutive options with the same help lines share one.
  const options = OPTION_LIST.filter((option) => option.flag !== undefined);
  const lines: string[] = [];
  for (let start = 0; start < options.length;) {
    const option = options[start]!;
    let end = start + 1;
    while (end < options.length && options[end]!.help.join("\n") === option.help.join("\n")) end++;
    const group = options.slice(start, end);
    const names = group.map((each) => `${each.short ? `-${each.short}, ` : ""}${optionName(each)}`)
      .join(", ");
    const label = `  ${names}${option.valueName === undefined ? "" : ` ${option.valueName}`}`;
    const text = [...option.help];
    if (option.type === "number") text.push(`${text.pop()} (default ${option.default})`);
    const variable = _variable(option);
    if (variable !== undefined) {
      const last = text.pop()!;
      const joined = `${last} ${variable}`;
      text.push(...(COLUMN + joined.length <= VARIABLE_WIDTH ? [joined] : [last, variable]));
    }
    if (option === baseUrl) text.push(`built-in default: ${defaultBaseUrl ?? "none"}`);
    const indented = text.map((line) => " ".repeat(COLUMN) + line);
    if (label.length > COLUMN - 2) lines.push(label);
    else indented[0] = label.padEnd(COLUMN) + text[0];
    lines.push(...indented);
    start = end;
  }
  const exits = Object.entries(EXIT_MEANINGS).map(([code, text]) => `  ${code.padEnd(5)}${text}`);
  return `service-ci ${VERSION}: run an agent's quality gate on the evaluation service and
turn its verdict into an exit code.

Usage:
  service-ci ${_usage(agents)} [${_usage(agents)} …] [${_usage(baseUrl)}] [${
    _usage(timeoutMinutes)
  }]
             [options]

The API key is read from ${apiKey.variable} (environment or .env file), never from a flag.
Variables without a flag (environment or .env); the tokens are masked in all output like the key:
${variables.join("\n")}

Options ([VARIABLE] sets the same):
${lines.join("\n")}

Exit codes:
${exits.join("\n")}

Docs for this version: ${REPOSITORY_URL}/tree/v${VERSION}/docs
`;
}

function _usage(option: OptionSpec): string {
  return `${optionName(option)} ${option.valueName}`;
}

function _variable(option: OptionSpec): string | undefined {
  if (option.variable === undefined) return undefined;
  if (option.type === "list") return `[${option.variable}, a comma list]`;
  if (option.type === "switch") return `[${option.variable}=${option.flagSets}]`;
  return `[${option.variable}]`;
}
