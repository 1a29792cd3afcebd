/** Why the process is being interrupted: the reason the interrupt signal aborts with. */

/**
 * The abort reason for SIGINT or SIGTERM.
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
  readonly signal: "SIGINT" | "SIGTERM";
  /** Makes the reason for one signal. */
  constructor(signal: "SIGINT" | "SIGTERM") {
    super(`interrupted by ${signal}`);
    this.signal = signal;
  }
}
