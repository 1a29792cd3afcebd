/** One rule for a pull request's number; alone so the option table need not load CI detection. */

export function pullRequestNumber(value: string | null): number | null {
  const text = value?.trim() ?? "";
  if (!/^[1-9]\d*$/.test(text)) return null;
  const number = Number(text);
  return Number.isSafeInteger(number) ? number : null;
}
