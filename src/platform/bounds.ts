/** The time bounds of what a CI hands the run: its files, its tools, its proxy. */

import type { Clock, Files } from "../effects.ts";
import { formatBound } from "../text/duration.ts";

/** Not a regular file (a named pipe would block the run), or too large; its message is a phrase. */
export class FileRefused extends Error {
  override name = "FileRefused";
}

/** A CI's tool or proxy that hangs holds the job up by at most these. */
export const NATIVE_TIME_BOUNDS = { eachMs: 10_000, totalMs: 30_000 };

/** Each call gives the next program's or request's bound; the total counts from the first call. */
export function nativeTimeBound(
  monotonic: () => number,
  bounds: typeof NATIVE_TIME_BOUNDS = NATIVE_TIME_BOUNDS,
): () => number {
  let start: number | undefined;
  return () => {
    const now = monotonic();
    start ??= now;
    return Math.max(0, Math.min(bounds.eachMs, start + bounds.totalMs - now));
  };
}

/** How long reading a CI's event payload may take before it is refused (exit 2, nothing sent). */
export const EVENT_READ_BOUND_MS = 10_000;

/**
 * A CI's file read within {@linkcode EVENT_READ_BOUND_MS} on the run's clock: a regular file that
 * still does not answer (a hung network mount) is refused like a pipe, before anything is sent;
 * one that cannot be read is none (`undefined`).
 *
 * @throws {FileRefused} When the read outlasts the bound.
 */
export async function readBounded(
  effects: { readonly clock: Clock; readonly files: Pick<Files, "readTextFile"> },
  path: string,
): Promise<string | undefined> {
  const done = new AbortController();
  const late = effects.clock.sleep(EVENT_READ_BOUND_MS, done.signal).then(() => {
    throw new FileRefused(`could not be read within ${formatBound(EVENT_READ_BOUND_MS)}`);
  }, () => new Promise<never>(() => {}));
  try {
    return await Promise.race([effects.files.readTextFile(path), late]);
  } catch (error) {
    if (error instanceof FileRefused) throw error;
    return undefined;
  } finally {
    done.abort();
  }
}
