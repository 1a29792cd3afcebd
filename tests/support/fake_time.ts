/**
 * Virtual time for tests that drive waits: a clock and a sleep that never really wait. Time
 * jumps to the earliest pending sleep whenever the program has nothing else to do (between
 * macrotasks), so a 30-minute timeout takes milliseconds and ends the same way every run.
 */

interface _Timer {
  readonly at: number;
  readonly seq: number;
  readonly resolve: () => void;
}

/** A clock and a sleep on virtual time. */
export class FakeTime {
  #now = 0;
  #seq = 0;
  #timers: _Timer[] = [];
  #scheduled = false;

  /** The virtual time, in milliseconds. */
  readonly clock = (): number => this.#now;

  /** Resolves after `ms` of virtual time, or rejects with the signal's reason. */
  readonly sleep = (ms: number, signal: AbortSignal): Promise<void> =>
    new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const timer: _Timer = {
        at: this.#now + Math.max(0, ms),
        seq: this.#seq++,
        resolve: () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.#timers = this.#timers.filter((item) => item !== timer);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#timers.push(timer);
      this.#schedule();
    });

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setTimeout(() => {
      this.#scheduled = false;
      this.#fire();
    }, 0);
  }

  #fire(): void {
    if (this.#timers.length === 0) return;
    this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
    const timer = this.#timers.shift()!;
    this.#now = Math.max(this.#now, timer.at);
    timer.resolve();
    if (this.#timers.length > 0) this.#schedule();
  }
}
