/** Why the process is being interrupted: the reason the interrupt signal aborts with. */

/** The signals that interrupt a run: each ends it as SIGTERM does, with every report written. */
export type InterruptSignal = "SIGINT" | "SIGTERM" | "SIGHUP";

export class Interrupted extends Error {
  override name = "Interrupted";
  constructor(readonly signal: InterruptSignal) {
    super(`interrupted by ${signal}`);
  }
}
