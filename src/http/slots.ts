/** The one concurrency limiter: the service's requests, and each forge's. */

/** `writes`: POST, PATCH, PUT, DELETE. */
export type Concurrency = { readonly inFlight: number; readonly writes: number };

export interface Slot {
  /** Aborts when a more urgent write takes the slot (only for rank-2 writes). */
  readonly signal: AbortSignal;
  /** Call once, whatever became of the request. */
  release(): void;
}

interface _Waiter {
  readonly write: boolean;
  readonly rank: number;
  readonly grant: (slot: Slot) => void;
}

/**
 * A few requests in flight, fewer writes, the lowest rank first, then the first come. A rank-0
 * write that waits for the write slot ends a rank-2 write in flight, which retries later.
 */
export class Slots {
  readonly #waiters: _Waiter[] = [];
  readonly #holders = new Map<_Waiter, AbortController>();
  peak = 0;

  /** `name` says who the preempted write gave way on. */
  constructor(private readonly concurrency: Concurrency, private readonly name: string) {}

  acquire(request: Pick<_Waiter, "write" | "rank">, signal?: AbortSignal): Promise<Slot> {
    return new Promise<Slot>((resolve, reject) => {
      const onAbort = () => {
        const index = this.#waiters.indexOf(waiter);
        if (index < 0) return;
        this.#waiters.splice(index, 1);
        reject(signal?.reason);
      };
      const waiter: _Waiter = {
        ...request,
        grant: (slot) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(slot);
        },
      };
      this.#waiters.push(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#pump();
    });
  }

  #pump(): void {
    // Stable: the first come stays first within a rank.
    this.#waiters.sort((a, b) => a.rank - b.rank);
    let writes = [...this.#holders.keys()].filter((holder) => holder.write).length;
    for (let index = 0; index < this.#waiters.length;) {
      const waiter = this.#waiters[index]!;
      if (this.#holders.size >= this.concurrency.inFlight) break;
      if (waiter.write && writes >= this.concurrency.writes) {
        if (waiter.rank === 0) {
          for (const [holder, controller] of this.#holders) {
            if (holder.write && holder.rank === 2) {
              controller.abort(new Error(`gave way to the final statuses on ${this.name}`));
            }
          }
        }
        index++;
        continue;
      }
      this.#waiters.splice(index, 1);
      const controller = new AbortController();
      this.#holders.set(waiter, controller);
      if (waiter.write) writes++;
      this.peak = Math.max(this.peak, this.#holders.size);
      waiter.grant({
        signal: controller.signal,
        // Once: a second call finds no holder.
        release: () => {
          if (this.#holders.delete(waiter)) this.#pump();
        },
      });
    }
  }
}
