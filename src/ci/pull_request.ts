/**
 * What a pull request's number is: the one rule, for the providers' variables and
 * `--pull-request` alike. A module of its own so the option table can use it without loading the
 * CI detection.
 */

/**
 * A pull request's number from text, or `null`: the one rule for what a number is, for the
 * providers' variables and `--pull-request` alike. `"false"`, `""`, `"PR-3"`, `"0"`, `"1.5"` and
 * numbers past 2^53 are all "not a pull request".
 *
 * @example
 * ```ts
 * pullRequestNumber("42"); // 42
 * pullRequestNumber("false"); // null
 * ```
 */
export function pullRequestNumber(value: string | null): number | null {
  const text = value?.trim() ?? "";
  if (!/^[1-9]\d*$/.test(text)) return null;
  const number = Number(text);
  return Number.isSafeInteger(number) ? number : null;
}
