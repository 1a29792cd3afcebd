/** Clock arithmetic that went wrong (negative, not finite) shows as no time at all. */
export function shownMs(ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/** A measured time: "12.3 s" under a minute, "2 min 5 s" from one on. */
export function formatDuration(ms: number): string {
  const seconds = shownMs(ms) / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
}

/** A bound or a wait, rounded to `unit` ms, a zero part left out: "250 ms", "2 min 5 s", "30 min". */
export function formatBound(ms: number, unit = 1): string {
  const shown = Math.round(shownMs(ms) / unit) * unit;
  if (shown % 1000 !== 0) return `${shown} ms`;
  const parts = [[Math.floor(shown / 60_000), "min"], [(shown % 60_000) / 1000, "s"]] as const;
  return parts.filter(([count]) => count > 0).map((part) => part.join(" ")).join(" ") || "0 s";
}
