/**
 * What one forge allows, shared by every writer of the run (statuses, comment, Code Insights): a
 * few requests in flight, writes one at a time, one pause for all on a rate limit, a deadline, and
 * a refused token (401) that ends every later request at once.
 */

import type { Clock } from "../effects.ts";

/**
 * The final statuses decide merges and go first; the comment (`background`) goes last. A `final`
 * write waiting for the write slot ends a `background` write in flight, which retries later.
 */
export type Priority = "final" | "progress" | "background";

export interface Concurrency {
  readonly inFlight: number;
  /** POST, PATCH, PUT, DELETE. */
  readonly writes: number;
}

/**
 * GitHub asks integrations to send writes one at a time and never to have more than 100 requests
 * in flight; GitLab and Bitbucket document no figure, so they get the same few.
 */
export const FORGE_CONCURRENCY: Readonly<Record<string, Concurrency>> = {
  GitHub: { inFlight: 4, writes: 1 },
  GitLab: { inFlight: 4, writes: 2 },
  Bitbucket: { inFlight: 4, writes: 2 },
};

/** The shortest pause after a rate limit that gives no time (GitHub: "at least one minute"). */
export const MIN_RATE_LIMIT_PAUSE_MS = 60_000;

export interface Slot {
  /** Aborts when a more urgent write takes the slot (only for `background` writes). */
  readonly signal: AbortSignal;
  /** Call once, whatever became of the request. */
  release(): void;
}

export class LimitRefusal extends Error {
  override name = "LimitRefusal";
  /** `refused`: the forge refused the token; `given_up`: a pause outlasts the time left. */
  readonly reason: "refused" | "given_up";
  readonly error: unknown;

  constructor(reason: "refused" | "given_up", message: string, error?: unknown) {
    super(message);
    this.reason = reason;
    this.error = error;
  }
}

export interface ForgeLimitsOptions {
  readonly forge: string;
  readonly concurrency?: Concurrency;
  readonly clock: Pick<Clock, "now" | "sleep">;
}

interface _Waiter {
  readonly write: boolean;
  readonly rank: number;
  readonly seq: number;
  readonly grant: (slot: Slot) => void;
}

interface _Holder {
  readonly write: boolean;
  readonly rank: number;
  readonly controller: AbortController;
}

const _RANK: Readonly<Record<Priority, number>> = { final: 0, progress: 1, background: 2 };

/** One forge's limits for the whole run: every client of that forge asks it before each request. */
export class ForgeLimits {
  readonly forge: string;
  readonly #concurrency: Concurrency;
  readonly #now: () => number;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #waiters: _Waiter[] = [];
  readonly #holders = new Set<_Holder>();
  #seq = 0;
  #peak = 0;
  #pause: { until: number; why: string; over: Promise<void>; ended: AbortController } | null = null;
  #deadline = Infinity;
  #deadlineMoved = Promise.withResolvers<void>();
  #refused: unknown = undefined;
  #givenUp = 0;
  #givenUpWhy = "";

  constructor(options: ForgeLimitsOptions) {
    this.forge = options.forge;
    this.#concurrency = options.concurrency ?? FORGE_CONCURRENCY[options.forge] ??
      { inFlight: 4, writes: 1 };
    if (this.#concurrency.inFlight > 10) {
      throw new RangeError(`At most 10 requests in flight (got ${this.#concurrency.inFlight})`);
    }
    this.#now = options.clock.now;
    this.#sleep = options.clock.sleep;
  }

  get peak(): number {
    return this.#peak;
  }

  get givenUp(): { readonly count: number; readonly why: string } {
    return { count: this.#givenUp, why: this.#givenUpWhy };
  }

  /** Epoch ms: a pause that ends later gives up its waiting requests and all later ones. */
  finishBy(deadline: number): void {
    this.#deadline = deadline;
    const moved = this.#deadlineMoved;
    this.#deadlineMoved = Promise.withResolvers<void>();
    moved.resolve();
  }

  /** A rate limit: `why` is the forge's words. A longer pause already under way stays. */
  pause(waitMs: number, why: string): void {
    const until = this.#now() + waitMs;
    if (this.#pause !== null && this.#pause.until >= until) return;
    this.#pause?.ended.abort();
    const ended = new AbortController();
    const over = this.#sleep(waitMs, ended.signal).catch(() => {}).then(() => {
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
  refuse(error: unknown): void {
    this.#refused ??= error;
  }

  /**
   * Waits for no pause and a free slot; more urgent requests go first.
   *
   * @throws {LimitRefusal} When the token was refused, or a pause outlasts the time left.
   */
  async acquire(
    request: { readonly write: boolean; readonly priority: Priority },
    signal?: AbortSignal,
  ): Promise<Slot> {
    for (;;) {
      await this.#unpaused(signal);
      const slot = await new Promise<Slot>((grant, reject) => {
        const waiter: _Waiter = {
          write: request.write,
          rank: _RANK[request.priority],
          seq: this.#seq++,
          grant,
        };
        this.#waiters.push(waiter);
        signal?.addEventListener("abort", () => {
          const index = this.#waiters.indexOf(waiter);
          if (index < 0) return;
          this.#waiters.splice(index, 1);
          reject(signal.reason);
        }, { once: true });
        this.#pump();
      });
      // A pause that began while this request waited for its slot holds it too.
      if (this.#pause === null && this.#refused === undefined) return slot;
      slot.release();
    }
  }

  async #unpaused(signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (this.#refused !== undefined) {
        throw new LimitRefusal("refused", `${this.forge} refused the token`, this.#refused);
      }
      const pause = this.#pause;
      if (pause === null) return;
      // Some time to send once the pause is over.
      if (pause.until + 1_000 > this.#deadline) {
        this.#givenUp++;
        this.#givenUpWhy = pause.why;
        throw new LimitRefusal(
          "given_up",
          `${this.forge} asked to wait until past the time left to finish (${pause.why})`,
        );
      }
      const moved = this.#deadlineMoved.promise;
      await Promise.race([
        pause.over,
        moved,
        ...(signal === undefined ? [] : [
          new Promise<never>((_, reject) => {
            if (signal.aborted) reject(signal.reason);
            signal.addEventListener("abort", () => reject(signal.reason), { once: true });
          }),
        ]),
      ]);
    }
  }

  #pump(): void {
    this.#waiters.sort((a, b) => a.rank - b.rank || a.seq - b.seq);
    let writes = [...this.#holders].filter((holder) => holder.write).length;
    for (let index = 0; index < this.#waiters.length;) {
      const waiter = this.#waiters[index]!;
      if (this.#holders.size >= this.#concurrency.inFlight) break;
      if (waiter.write && writes >= this.#concurrency.writes) {
        // The most urgent write waiting ends a background write in flight (the comment).
        if (waiter.rank === _RANK.final) {
          for (const holder of this.#holders) {
            if (holder.write && holder.rank === _RANK.background) {
              holder.controller.abort(
                new Error(`gave way to the final statuses on ${this.forge}`),
              );
            }
          }
        }
        index++;
        continue;
      }
      this.#waiters.splice(index, 1);
      const holder: _Holder = {
        write: waiter.write,
        rank: waiter.rank,
        controller: new AbortController(),
      };
      this.#holders.add(holder);
      if (waiter.write) writes++;
      this.#peak = Math.max(this.#peak, this.#holders.size);
      let released = false;
      waiter.grant({
        signal: holder.controller.signal,
        release: () => {
          if (released) return;
          released = true;
          this.#holders.delete(holder);
          this.#pump();
        },
      });
    }
  }
}
