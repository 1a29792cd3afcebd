/**
 * What one forge allows, shared by its writers (statuses, comment, Code Insights): a few requests
 * in flight, writes one at a time, one pause for all on a rate limit, a deadline, a 401 ending all.
 */

import type { Clock } from "../effects.ts";
import { HttpFailure } from "../http/failure.ts";
import { type Concurrency, type Slot, Slots } from "../http/slots.ts";

/** `final` statuses decide merges: first, preempting a `background` write (the comment's). */
export type Priority = "final" | "progress" | "background";

/** The shortest pause after a rate limit that gives no time (GitHub: "at least one minute"). */
export const MIN_RATE_LIMIT_PAUSE_MS = 60_000;

const _RANK: Readonly<Record<Priority, number>> = { final: 0, progress: 1, background: 2 };

/** One forge's limits for the whole run: every client of that forge asks it before each request. */
export class ForgeLimits {
  readonly #slots: Slots;
  #pause: { until: number; why: string; over: Promise<void>; ended: AbortController } | null = null;
  #deadline = Infinity;
  #deadlineMoved = Promise.withResolvers<void>();
  #refused: HttpFailure | undefined = undefined;
  /** The requests given up because a pause outlasted the time left, and the last pause's why. */
  readonly givenUp: { count: number; why: string } = { count: 0, why: "" };

  constructor(
    readonly forge: string,
    private readonly clock: Pick<Clock, "now" | "sleep">,
    /** The forge's own figures (`Forge.concurrency`). */
    concurrency: Concurrency = { inFlight: 4, writes: 1 },
  ) {
    if (concurrency.inFlight > 10) {
      throw new RangeError(`At most 10 requests in flight (got ${concurrency.inFlight})`);
    }
    this.#slots = new Slots(concurrency, forge);
  }

  get peak(): number {
    return this.#slots.peak;
  }

  /** Epoch ms: a pause that ends later gives up its waiting requests and all later ones. */
  finishBy(deadline: number): void {
    this.#deadline = deadline;
    this.#deadlineMoved.resolve();
    this.#deadlineMoved = Promise.withResolvers<void>();
  }

  /** A rate limit: `why` is the forge's words. A longer pause already under way stays. */
  pause(waitMs: number, why: string): void {
    const until = this.clock.now() + waitMs;
    if (this.#pause !== null && this.#pause.until >= until) return;
    this.#pause?.ended.abort();
    const ended = new AbortController();
    const over = this.clock.sleep(waitMs, ended.signal).catch(() => {}).then(() => {
      if (this.#pause?.over === over) this.#pause = null;
    });
    this.#pause = { until, why, over, ended };
  }

  /** Ends a pause's timer so it keeps no finished run alive; later requests are given up. */
  close(): void {
    this.finishBy(-Infinity);
    this.#pause?.ended.abort();
  }

  /** A refused token: every later request of this forge fails at once with `error`. */
  refuse(error: HttpFailure): void {
    this.#refused ??= error;
  }

  /**
   * Waits for no pause and a free slot; more urgent requests go first.
   *
   * @throws {HttpFailure} The refusal when the token was refused; `rate_limited` and `givenUp`
   * when a pause outlasts the time left.
   */
  async acquire(
    request: { readonly write: boolean; readonly priority: Priority },
    signal?: AbortSignal,
  ): Promise<Slot> {
    for (;;) {
      await this.#unpaused(signal);
      const rank = _RANK[request.priority];
      const slot = await this.#slots.acquire({ write: request.write, rank }, signal);
      // A pause that began while this request waited for its slot holds it too.
      if (this.#pause === null && this.#refused === undefined) return slot;
      slot.release();
    }
  }

  async #unpaused(signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (this.#refused !== undefined) throw this.#refused;
      const pause = this.#pause;
      if (pause === null) return;
      // Some time to send once the pause is over.
      if (pause.until + 1_000 > this.#deadline) {
        this.givenUp.count++;
        this.givenUp.why = pause.why;
        const message = `${this.forge} asked to wait until past the time left to finish`;
        throw new HttpFailure("rate_limited", `${message} (${pause.why})`, { givenUp: true });
      }
      await Promise.race([
        pause.over,
        this.#deadlineMoved.promise,
        ...(signal === undefined ? [] : [
          new Promise<never>((_, reject) => {
            if (signal.aborted) reject(signal.reason);
            signal.addEventListener("abort", () => reject(signal.reason), { once: true });
          }),
        ]),
      ]);
    }
  }
}
