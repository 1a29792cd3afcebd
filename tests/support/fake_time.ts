/**
 * Virtual time for tests that drive waits: a clock and a sleep that never really wait. Time
 * jumps to the earliest pending sleep whenever the program has nothing else to do (between
 * macrotasks), so a 30-minute timeout takes milliseconds and ends the same way every run.
 * Real I/O (a request to a loopback service) takes macrotasks too: {@linkcode FakeTime.hold}
 * stops time while it is under way, so no wait ends before an answer that comes at once. A fake
 * server that will not answer says so with {@linkcode FakeTime.hang}: held work that is known to
 * hang does not stop time, so a request timer ends it on virtual time, without a real wait.
 */

import type { Clock } from "../../src/effects.ts";

// A piece of real work under way that stops virtual time; a request says which one it is, so that
// the fake server that will not answer it can say so (FakeTime.hang).
interface _Held {
  readonly request: HeldRequest | undefined;
  // The request's: once it aborts, the client has given up, and the work stops time again until
  // its rejection has arrived, hanging or not.
  readonly signal: AbortSignal | undefined;
  hanging: boolean;
}

/** Which request a piece of held work is: its method, and its URL or path. */
export interface HeldRequest {
  readonly method: string;
  /** An absolute URL; or, from a server that sees only that, the path and query. */
  readonly url: string;
}

interface _Timer {
  readonly at: number;
  readonly seq: number;
  readonly resolve: () => void;
}

/** The run's {@linkcode Clock} on virtual time: its waits and its request timers. */
export class FakeTime implements Clock {
  #now = 0;
  readonly #start = Date.now();
  #seq = 0;
  #timers: _Timer[] = [];
  #scheduled = false;
  readonly #held = new Set<_Held>();

  /** The virtual time, in milliseconds. */
  readonly monotonic = (): number => this.#now;

  /**
   * Wall-clock time on the virtual clock, in milliseconds since the epoch: the real time when
   * this was made, plus the virtual time since.
   */
  readonly now = (): number => this.#start + this.#now;

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

  /**
   * A signal that aborts with a `TimeoutError` after `ms` of virtual time, as
   * `AbortSignal.timeout` does after real time: a request times out without a real wait.
   */
  readonly timeout = (ms: number): AbortSignal => {
    const timer = new AbortController();
    this.sleep(ms, new AbortController().signal).then(() =>
      timer.abort(new DOMException("Signal timed out.", "TimeoutError"))
    );
    return timer.signal;
  };

  /**
   * Stops virtual time until `work` settles: a request to a real loopback service, and reading
   * its answer, take no virtual time, as an answer that comes at once would. `signal` is the
   * request's: once it aborts, the work can no longer be marked as hanging.
   */
  async hold<T>(work: Promise<T>, request?: HeldRequest, signal?: AbortSignal): Promise<T> {
    const held: _Held = { request, signal, hanging: false };
    this.#held.add(held);
    try {
      return await work;
    } finally {
      this.#held.delete(held);
      this.#schedule();
    }
  }

  /**
   * `fetcher` with every request held ({@linkcode FakeTime.hold}) until its answer has arrived
   * whole, body included: a real loopback exchange takes no virtual time, so neither its request
   * timer nor any other wait ends during it.
   */
  heldFetch(fetcher: typeof fetch): typeof fetch {
    return (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      const method = init?.method ?? (input instanceof Request ? input.method : "GET");
      return this.hold(
        (async () => {
          const response = await fetcher(input, init);
          // Deno 2.9's clone() drops headers that were never read.
          void response.headers;
          await response.clone().arrayBuffer().catch(() => {});
          return response;
        })(),
        { method: method.toUpperCase(), url },
        init?.signal ?? (input instanceof Request ? input.signal : undefined),
      );
    };
  }

  /**
   * Marks the held request `request` (held by {@linkcode FakeTime.heldFetch}) as hanging until
   * `settled` settles: a fake server's answer that comes only once the client gives up. While
   * every piece of held work hangs, time moves on, as it would for a service that does not answer;
   * the mark goes as soon as the client gives up (its signal aborts), and time stops again until
   * the request's rejection has reached the client, however late the event loop delivers it.
   */
  async hang<T>(settled: Promise<T>, request: HeldRequest): Promise<T> {
    const held = [...this.#held].find((each) =>
      !each.hanging && !each.signal?.aborted && each.request !== undefined &&
      _same(each.request, request)
    );
    if (held !== undefined) {
      held.hanging = true;
      this.#schedule();
    }
    try {
      return await settled;
    } finally {
      if (held !== undefined) held.hanging = false;
    }
  }

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
    for (const held of this.#held) if (_stopsTime(held)) return;
    this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
    const timer = this.#timers.shift()!;
    this.#now = Math.max(this.#now, timer.at);
    timer.resolve();
    if (this.#timers.length > 0) this.#schedule();
  }
}

// Held work stops time unless it hangs with its request still wanted.
function _stopsTime(held: _Held): boolean {
  return !held.hanging || held.signal?.aborted === true;
}

// Whether the server's view of a request (a path, or a URL) is the client's request.
function _same(client: HeldRequest, server: HeldRequest): boolean {
  if (client.method !== server.method.toUpperCase()) return false;
  if (client.url === server.url) return true;
  const url = new URL(client.url);
  return `${url.pathname}${url.search}` === server.url;
}
