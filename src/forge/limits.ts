/**
 * What one forge allows, honoured by every writer of the run together (the commit statuses, the
 * comment, Bitbucket's Code Insights): a few requests in flight and writes one at a time, one
 * pause for all of them when the forge answers with a rate limit, the end of the time left to
 * finish, and a refused token (401) that ends every later request at once (docs/architecture.md,
 * "The forge").
 */

import type { Clock } from "../effects.ts";

/**
 * How urgent a request is. The final statuses decide merges and go first (`final`); the
 * in-progress statuses next (`progress`); the comment last (`background`). A `final` write that
 * waits for the write slot ends a `background` write in flight there, which its writer takes as
 * a passing fault and writes again later.
 */
export type Priority = "final" | "progress" | "background";

/** How many requests one forge may have at once. */
export interface Concurrency {
  /** Requests in flight, reads and writes (at most 10). */
  readonly inFlight: number;
  /** Writes (POST, PATCH, PUT, DELETE) in flight. */
  readonly writes: number;
}

/**
 * Each forge's limits. GitHub asks integrations to send writes one at a time and never to have
 * more than 100 requests in flight; GitLab and Bitbucket document no figure, so they get the
 * same few.
 *
 * @example
 * ```ts
 * FORGE_CONCURRENCY.GitHub?.writes; // 1
 * ```
 */
export const FORGE_CONCURRENCY: Readonly<Record<string, Concurrency>> = {
  GitHub: { inFlight: 4, writes: 1 },
  GitLab: { inFlight: 4, writes: 2 },
  Bitbucket: { inFlight: 4, writes: 2 },
};

/** The shortest pause after a rate limit that gives no time (GitHub: "at least one minute"). */
export const MIN_RATE_LIMIT_PAUSE_MS = 60_000;

/** What a request waits for: a slot, the end of a pause. */
export interface Slot {
  /** Aborts when a more urgent write takes the slot (only for `background` writes). */
  readonly signal: AbortSignal;
  /** Gives the slot back; call it once, whatever became of the request. */
  release(): void;
}

/** Why {@linkcode ForgeLimits.acquire} will not let a request go. */
export class LimitRefusal extends Error {
  /** Names the error. */
  override name = "LimitRefusal";
  /** `refused`: the forge refused the token; `given_up`: a pause outlasts the time left. */
  readonly reason: "refused" | "given_up";
  /** The error that refused the token, for `refused`. */
  readonly error: unknown;

  /** Makes the refusal. */
  constructor(reason: "refused" | "given_up", message: string, error?: unknown) {
    super(message);
    this.reason = reason;
    this.error = error;
  }
}

/** Options of {@linkcode ForgeLimits}. */
export interface ForgeLimitsOptions {
  /** The forge's name for messages: `"GitHub"`. */
  readonly forge: string;
  /** The requests allowed at once; default the forge's {@linkcode FORGE_CONCURRENCY}. */
  readonly concurrency?: Concurrency;
  /** The wall clock (`now`, epoch milliseconds) and the waits out of a rate limit's pause. */
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

/**
 * One forge's limits for the whole run: every client of that forge asks it before each request.
 *
 * @example
 * ```ts
 * import { systemClock } from "../platform/clock.ts";
 * const limits = new ForgeLimits({ forge: "GitHub", clock: systemClock });
 * const slot = await limits.acquire({ write: true, priority: "final" });
 * slot.release();
 * ```
 */
export class ForgeLimits {
  /** The forge's name for messages. */
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

  /** The limits of one forge. */
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

  /** The most requests that were in flight at once so far. */
  get peak(): number {
    return this.#peak;
  }

  /** How many requests were given up because a pause outlasted the time left, and why. */
  get givenUp(): { readonly count: number; readonly why: string } {
    return { count: this.#givenUp, why: this.#givenUpWhy };
  }

  /**
   * Sets when the run stops writing (epoch milliseconds): a pause that ends later gives up the
   * requests that wait for it, and every later one.
   */
  finishBy(deadline: number): void {
    this.#deadline = deadline;
    const moved = this.#deadlineMoved;
    this.#deadlineMoved = Promise.withResolvers<void>();
    moved.resolve();
  }

  /**
   * Stops every request of this forge for `waitMs` (a rate limit); `why` is the forge's words.
   * A longer pause already under way stays.
   */
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

  /** Ends a pause's timer, so it keeps no finished run alive; later requests are given up. */
  close(): void {
    this.finishBy(-Infinity);
    this.#pause?.ended.abort();
  }

  /** Ends every later request of this forge at once with `error` (a refused token). */
  refuse(error: unknown): void {
    this.#refused ??= error;
  }

  /**
   * Waits until a request may go: the forge is not paused, and a slot is free for it. More
   * urgent requests go first.
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
