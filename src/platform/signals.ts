/** Why the process is being interrupted: the reason the interrupt signal aborts with. */

/** The signals that interrupt a run: each ends it as SIGTERM does, with every report written. */
export type InterruptSignal = "SIGINT" | "SIGTERM" | "SIGHUP";

/**
 * The abort reason for SIGINT, SIGTERM or SIGHUP.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * controller.abort(new Interrupted("SIGTERM"));
 * ```
 */
export class Interrupted extends Error {
  /** Names the error. */
  override name = "Interrupted";
  /** The signal that arrived. */
  readonly signal: InterruptSignal;
  /** Makes the reason for one signal. */
  constructor(signal: InterruptSignal) {
    super(`interrupted by ${signal}`);
    this.signal = signal;
  }
}
