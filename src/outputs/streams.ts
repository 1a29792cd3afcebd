/**
 * The program's two streams, as every other module sees them: every text masked of the
 * secrets known so far, every line unable to form a CI log command, and a stream that cannot
 * be written (a closed pipe) reported rather than thrown.
 */

import { escapeJsonForLogs, neutralizeText } from "../text/log_commands.ts";
import { maskSecrets } from "../text/sanitize.ts";

/** The raw streams; each may throw (e.g. `BrokenPipe` on a closed pipe). */
export interface Streams {
  /** Writes to the program's stdout. */
  readonly stdout: (text: string) => void;
  /** Writes to the program's stderr. */
  readonly stderr: (text: string) => void;
}

/**
 * Whether a stream is a terminal that takes a live status line and colours: one that is a
 * terminal and not `TERM=dumb` (Emacs' shell, some CI agents' pseudo-terminals), which shows
 * cursor movement and colour codes as they are. There, the console writes plain lines.
 *
 * @example
 * ```ts
 * isCapableTerminal(true, "xterm-256color"); // true
 * isCapableTerminal(true, "dumb"); // false
 * ```
 */
export function isCapableTerminal(isTerminal: boolean, term: string | undefined): boolean {
  return isTerminal && term !== "dumb";
}

/**
 * The program's output. `stdout` and `stderr` carry ordinary text; `command` carries one of our
 * own CI log command lines, which only the CI writers build (their data escaped by the CI's
 * rules), so it is masked but not neutralised; `document` carries a JSON document, masked and
 * then escaped so that it cannot form a command while it parses to the same value.
 */
export class Output {
  readonly #streams: Streams;
  readonly #secrets: string[] = [];
  #commandsOnStderr = false;

  /** Wraps `streams`. */
  constructor(streams: Streams) {
    this.#streams = streams;
  }

  /** From now on, CI commands go to stderr: stdout holds the `--json` document. */
  commandsToStderr(): void {
    this.#commandsOnStderr = true;
  }

  /**
   * Masks `secret` in everything written from now on (ignored when empty).
   *
   * @example
   * ```ts
   * const output = new Output({ stdout: () => {}, stderr: () => {} });
   * output.addSecret("sk_live_123");
   * ```
   */
  addSecret(secret: string | undefined): void {
    if (secret !== undefined && secret !== "" && !this.#secrets.includes(secret)) {
      this.#secrets.push(secret);
    }
  }

  /** The secrets masked so far: the API key and the forge tokens. */
  get secrets(): readonly string[] {
    return this.#secrets;
  }

  /** Writes text to stdout; false when stdout could not take it. */
  stdout(text: string): boolean {
    return _write(this.#streams.stdout, neutralizeText(this.#mask(text)));
  }

  /** Writes text to stderr. A closed stderr is ignored: nothing can be told there. */
  stderr(text: string): void {
    _write(this.#streams.stderr, neutralizeText(this.#mask(text)));
  }

  /**
   * Writes one of our own CI command lines (without its newline) to the command stream: stdout,
   * or stderr when stdout holds the `--json` document or `stream` says so. The CI's runner
   * reads both.
   */
  command(line: string, stream?: "stderr"): void {
    const toStderr = stream === "stderr" || this.#commandsOnStderr;
    _write(toStderr ? this.#streams.stderr : this.#streams.stdout, `${this.#mask(line)}\n`);
  }

  /**
   * Writes a JSON document (`--json`) to stdout; false when stdout could not take it. The secrets
   * are masked before the escaping, which could otherwise split one so the mask misses it.
   */
  document(json: string): boolean {
    return _write(this.#streams.stdout, escapeJsonForLogs(this.#mask(json)));
  }

  /** Masks the known secrets in `text` (for files, which do not pass through here). */
  mask(text: string): string {
    return this.#mask(text);
  }

  #mask(text: string): string {
    return maskSecrets(text, this.#secrets);
  }
}

function _write(stream: (text: string) => void, text: string): boolean {
  try {
    stream(text);
    return true;
  } catch {
    return false;
  }
}
