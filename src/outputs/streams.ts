/**
 * The program's two streams, as every other module sees them: every text masked of the
 * secrets known so far, every line unable to form a CI log command, and a stream that cannot
 * be written (a closed pipe) reported rather than thrown.
 */

import { escapeJsonForLogs, neutralizeText } from "../text/log_commands.ts";
import { maskSecrets } from "../text/sanitize.ts";

/** Each may throw (`BrokenPipe` on a closed pipe). */
export interface Streams {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

/** `TERM=dumb` (Emacs' shell, some CI agents) shows cursor movement and colours as they are. */
export function isCapableTerminal(isTerminal: boolean, term: string | undefined): boolean {
  return isTerminal && term !== "dumb";
}

/**
 * `command` lines are built only by the CI writers (their data escaped by the CI's rules), so they
 * are masked but not neutralised; a `document` is escaped so that it cannot form a command.
 */
export class Output {
  readonly #streams: Streams;
  readonly #secrets: string[] = [];
  readonly secrets: readonly string[] = this.#secrets;
  #commandsOnStderr = false;

  constructor(streams: Streams) {
    this.#streams = streams;
  }

  /** From now on, CI commands go to stderr: stdout holds the `--json` document. */
  commandsToStderr(): void {
    this.#commandsOnStderr = true;
  }

  addSecret(secret: string | undefined): void {
    if (secret !== undefined && secret !== "" && !this.#secrets.includes(secret)) {
      this.#secrets.push(secret);
    }
  }

  stdout(text: string): boolean {
    return _write(this.#streams.stdout, neutralizeText(this.mask(text)));
  }

  /** A closed stderr is ignored: nothing can be told there. */
  stderr(text: string): void {
    _write(this.#streams.stderr, neutralizeText(this.mask(text)));
  }

  /** `line` has no newline; the CI's runner reads both streams. */
  command(line: string, stream?: "stderr"): void {
    const toStderr = stream === "stderr" || this.#commandsOnStderr;
    _write(toStderr ? this.#streams.stderr : this.#streams.stdout, `${this.mask(line)}\n`);
  }

  /** Masked before the escaping, which could otherwise split a secret so the mask misses it. */
  document(json: string): boolean {
    return _write(this.#streams.stdout, escapeJsonForLogs(this.mask(json)));
  }

  /** For files, which do not pass through here. */
  mask(text: string): string {
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
