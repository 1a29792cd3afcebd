/**
 * Tests the option table: docs/options.md, README.md, action.yml (with scripts/action.sh) and
 * `--help` say what src/config/options.ts declares, so a renamed flag, a new variable or a changed
 * default that is not carried everywhere fails here.
 */

import assert from "node:assert/strict";
import { helpText } from "../../src/config/help.ts";
import {
  actionInput,
  CONFIG_ENV_VARIABLES,
  OPTION_NAMES,
  optionName,
  OPTIONS,
  type OptionSpec,
} from "../../src/config/options.ts";
import { UsageError } from "../../src/config/errors.ts";
import { parseYaml } from "../support/yaml.ts";

const read = (path: string) => Deno.readTextFileSync(new URL(`../../${path}`, import.meta.url));
const ENTRIES = Object.entries(OPTIONS as Record<string, OptionSpec>);
const ALL = ENTRIES.map(([, option]) => option);

// The action's defaults that are not the option's own.
const INPUT_DEFAULTS: Readonly<Record<string, string>> = {
  verbose: "false",
  // Empty, so that the variable in the job's env: still counts.
  "request-timeout-seconds": "",
  // The action's auto: on for pull_request events (scripts/action.sh).
  "pr-comment": "auto",
  "commit-status": "false",
};

interface Row {
  readonly flags: string;
  readonly variable: string;
  readonly default: string;
}

// The rows of docs/options.md's first table: flag, variable, default, meaning.
function _docsRows(text: string): Row[] {
  const table = text.split("\n\n").find((block) => block.startsWith("| flag"));
  assert.ok(table !== undefined, "docs/options.md has a table starting with | flag");
  return table.split("\n").slice(2).map((line) => {
    const cells = line.split(" | ").map((cell) => cell.replace(/^\|\s*|\s*\|$/g, "").trim());
    assert.equal(cells.length, 4, line);
    return { flags: cells[0]!, variable: cells[1]!, default: cells[2]! };
  });
}

// A flag's spellings in a docs cell: `--agent <uuid>`, `--commit-sha`, `--branch`.
function _flagsIn(cell: string): string[] {
  return [...cell.matchAll(/`(--[a-z][a-z-]*)/g)].map((match) => match[1]!);
}

// What docs/options.md's default column says for an option.
function _docsDefault(option: OptionSpec): string {
  if (option.defaultText !== undefined) return option.defaultText;
  if (option.type === "number") return `\`${option.default}\``;
  if (typeof option.default === "boolean") return option.default ? "on" : "off";
  return option.valueName === undefined ? "" : "none";
}

// What the variable column says: the variable, the value a switch's flag stands for, or a list.
function _docsVariable(option: OptionSpec): string {
  if (option.variable === undefined) return "";
  if (option.type === "switch") return `\`${option.variable}=${option.flagSets}\``;
  if (option.type === "list") return `\`${option.variable}\` (comma-separated)`;
  return `\`${option.variable}\``;
}

// The action.yml inputs scripts/action.sh reads to choose, check and install the release.
const ACTION_ONLY_INPUTS = ["version", "verify-attestation", "github-token"];

Deno.test("docs/options.md has a row for every option, with its variable and default", () => {
  const rows = _docsRows(read("docs/options.md"));
  for (const option of ALL) {
    const row = option.flag === undefined
      ? rows.find((each) => each.flags === "" && each.variable === _docsVariable(option))
      : rows.find((each) => _flagsIn(each.flags).includes(optionName(option)));
    assert.ok(row !== undefined, `docs/options.md has no row for ${optionName(option)}`);
    if (_flagsIn(row.flags).length === 1 && option.valueName !== undefined) {
      assert.equal(row.flags, `\`${optionName(option)} ${option.valueName}\``);
    }
    assert.equal(row.variable, _docsVariable(option), `${optionName(option)}'s variable`);
    assert.equal(row.default, _docsDefault(option), `${optionName(option)}'s default`);
  }
});

Deno.test("docs/options.md and README.md name no flag or service variable the table lacks", () => {
  const rows = _docsRows(read("docs/options.md"));
  for (const row of rows) {
    for (const flag of _flagsIn(row.flags)) assert.ok(OPTION_NAMES.includes(flag.slice(2)), flag);
    for (const [variable] of row.variable.matchAll(/SERVICE_[A-Z_]+/g)) {
      assert.ok(CONFIG_ENV_VARIABLES.includes(variable), `docs/options.md: ${variable}`);
    }
  }
  // Flags of other programs (npx, deno task) and the one refused, which the README explains.
  const others = ["yes", "quiet", "api-key"];
  for (const [, flag] of read("README.md").matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)) {
    assert.ok(OPTION_NAMES.includes(flag!) || others.includes(flag!), `README.md: --${flag}`);
  }
});

Deno.test("action.yml's inputs are the table's inputs and the action's own, with their defaults", () => {
  const action = parseYaml<{
    inputs: Record<string, { required?: boolean; default?: string }>;
  }>(read("action.yml"), "action.yml");
  // The step's commands, without its comments.
  const script = read("scripts/action.sh").split("\n").filter((line) => !/^\s*#/.test(line))
    .join("\n");
  const fromTable = ALL.filter((option) => actionInput(option) !== undefined);
  assert.deepEqual(
    Object.keys(action.inputs).sort(),
    [...fromTable.map((option) => actionInput(option)!), ...ACTION_ONLY_INPUTS].sort(),
  );
  for (const option of fromTable) {
    const input = action.inputs[actionInput(option)!]!;
    const required = option.defaultText === "required";
    assert.equal(input.required, required, `input ${actionInput(option)} required`);
    const expected = required
      ? undefined
      : INPUT_DEFAULTS[actionInput(option)!] ?? (option.type === "number"
        ? String(option.default)
        : option.type === "boolean"
        ? "false"
        : "");
    assert.equal(input.default, expected, `input ${actionInput(option)}'s default`);
    // The step hands the input to service-ci as the flag or as the variable.
    const handed = (option.flag !== undefined &&
      new RegExp(`(?<![\\w-])--${option.flag}(?![\\w-])`).test(script)) ||
      (option.variable !== undefined && new RegExp(`\\b${option.variable}=`).test(script)) ||
      (option.variable !== undefined &&
        read("action.yml").includes(`${option.variable}: \${{ inputs.${actionInput(option)} }}`));
    assert.ok(handed, `scripts/action.sh passes the input ${actionInput(option)} on`);
  }
});

Deno.test("--help lists every flag and variable, and every line of the table's help", () => {
  const text = helpText(undefined);
  for (const option of ALL) {
    if (option.flag !== undefined) assert.ok(text.includes(optionName(option)), option.flag);
    if (option.variable !== undefined) assert.ok(text.includes(option.variable), option.variable);
    for (const line of option.help) assert.ok(text.includes(line), line);
  }
});

Deno.test("OPTIONS spells each flag, short alias, variable and input once", () => {
  for (const field of ["flag", "short", "variable", "input"] as const) {
    const values = ALL.flatMap((option) => {
      const value = field === "input" ? actionInput(option) : option[field];
      return value === undefined ? [] : [value];
    });
    assert.equal(new Set(values).size, values.length, `${field}: ${values.join(" ")}`);
  }
  for (const option of ALL) {
    assert.ok(option.flag === undefined || /^[a-z][a-z-]*[a-z]$/.test(option.flag), option.flag);
    // Our own variables are SERVICE_*; a forge's own variable (its token, its API address)
    // keeps the forge's name, and has no flag.
    assert.ok(
      option.variable === undefined || /^SERVICE_[A-Z_]+$/.test(option.variable) ||
        (/^(GITHUB|CI)_[A-Z0-9_]+$/.test(option.variable) && option.flag === undefined),
      option.variable,
    );
    const takesValue = option.type !== "boolean" && option.type !== "switch";
    assert.equal(option.valueName !== undefined, takesValue && option.flag !== undefined);
  }
});

Deno.test("each option's check names the input and says what is valid", () => {
  const cases: Array<[OptionSpec, string, RegExp]> = [
    [OPTIONS.timeoutMinutes, "soon", /^--timeout-minutes must be a positive number of minutes/],
    [OPTIONS.maxPollIntervalSeconds, "0.1", /from 0\.5 to 300, decimals allowed \(got "0\.1"\)$/],
    [OPTIONS.ciNative, "maybe", /^--no-ci-native must be true or false \(also 1\/0/],
    [OPTIONS.pullRequest, "PR-1", /^--pull-request must be a pull request number like 42/],
    [OPTIONS.prCommentKey, " ", /^--pr-comment-key must be a name \(got an empty value\)$/],
    [OPTIONS.runId, "..", /^--run-id must be a run id \(got "\.\."\)$/],
    [OPTIONS.apiKey, "sk_key\n", /^SERVICE_API_KEY contains whitespace/],
    [
      OPTIONS.apiKey,
      "sk_\u2013key",
      /^SERVICE_API_KEY must be printable ASCII, .* character 4 of 7/,
    ],
  ];
  for (const [option, text, message] of cases) {
    const parse = option.parse as (text: string, name: string) => unknown;
    assert.throws(() => parse(text, optionName(option)), (error: unknown) => {
      assert.ok(error instanceof UsageError, String(error));
      assert.match(error.message, message);
      return true;
    });
  }
  assert.equal(OPTIONS.ciNative.parse(" Off ", "SERVICE_CI_NATIVE"), false);
  assert.equal(OPTIONS.prComment.parse(" ", "SERVICE_PR_COMMENT"), undefined);
  assert.equal(OPTIONS.prCommentKey.parse(" leg-1 ", "--pr-comment-key"), "leg-1");
  assert.equal(OPTIONS.timeoutMinutes.parse(".5", "--timeout-minutes"), 0.5);
});

Deno.test("SERVICE_API_KEY that is a CI's unexpanded reference is refused, naming what it refers to and the CI's fix", () => {
  const cases: Array<[string, RegExp]> = [
    [
      "$(SERVICE_API_KEY)",
      /^SERVICE_API_KEY is an Azure Pipelines macro for SERVICE_API_KEY that was never expanded, not a key: no variable SERVICE_API_KEY is defined; define SERVICE_API_KEY as a secret variable of the pipeline and map it in the step's env: \(nothing was sent\)$/,
    ],
    [
      "${{ secrets.EVAL_KEY }}\n",
      /^SERVICE_API_KEY is a GitHub Actions expression for secrets\.EVAL_KEY that was never evaluated, not a key: .*define the secret under Settings → Secrets and variables → Actions/,
    ],
    ["${{ vars.KEY }}", /^SERVICE_API_KEY is a GitHub Actions expression that was never/],
    [
      "%env.SERVICE_API_KEY%",
      /^SERVICE_API_KEY is a TeamCity reference to env\.SERVICE_API_KEY that was never expanded, .*define env\.SERVICE_API_KEY as a password parameter/,
    ],
    [
      "$EVAL_KEY",
      /^SERVICE_API_KEY is a reference to the variable EVAL_KEY that was never expanded, .*define EVAL_KEY as a secret variable in the CI's settings/,
    ],
    ["${EVAL_KEY}", /^SERVICE_API_KEY is a reference to the variable EVAL_KEY that was never/],
  ];
  for (const [key, message] of cases) {
    assert.throws(() => OPTIONS.apiKey.parse(key, "SERVICE_API_KEY"), (error: unknown) => {
      assert.ok(error instanceof UsageError, String(error));
      assert.match(error.message, message);
      assert.ok(!error.message.includes(key.trim()), "the value whole is masked anyway");
      assert.ok(!error.message.includes("\n"), "one line");
      return true;
    });
  }
  // Keys that only contain such characters are keys.
  for (const key of ["sk_$(x)", "sk%abc%", "$", "sk_live_$abc"]) {
    assert.equal(OPTIONS.apiKey.parse(key, "SERVICE_API_KEY"), key);
  }
});
