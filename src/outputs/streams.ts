/**
 * The two streams as every module sees them: masked of the secrets known so far, unable to form a
 * CI log command, a closed pipe reported not thrown, and --verbose's one inert line per exchange.
 */

import type { Clock, Exchange, ExchangeLog, Streams } from "../effects.ts";
import { escapeJsonForLogs, neutralizeLine, neutralizeText } from "../text/log_commands.ts";
import { maskSecrets, sanitize } from "../text/sanitize.ts";
import { PROVIDERS } from "../ci/providers.ts";

/** `TERM=dumb` (Emacs' shell, some CI agents) shows cursor movement and colours as they are. */
export function isCapableTerminal(isTerminal: boolean, term: string | undefined): boolean {
  return isTerminal && term !== "dumb";
}

/**
 * `command` lines are built only by the CI writers (their data escaped by the CI's rules), so they
 * are masked but not neutralised; a `document` is escaped so that it cannot form a command.
 */
export class Output {
  readonly #secrets: string[] = [];
  readonly secrets: readonly string[] = this.#secrets;
  #commandsOnStderr = false;

  constructor(private readonly streams: Streams) {}

  /** From now on, CI commands go to stderr: stdout holds the `--json` document. */
  commandsToStderr(): void {
    this.#commandsOnStderr = true;
  }

  addSecret(secret: string | undefined): void {
    if (secret && !this.#secrets.includes(secret)) this.#secrets.push(secret);
  }

  stdout(text: string): boolean {
    return _write(this.streams.stdout, neutralizeText(this.mask(text)));
  }

  /** A closed stderr is ignored: nothing can be told there. */
  stderr(text: string): void {
    _write(this.streams.stderr, neutralizeText(this.mask(text)));
  }

  /** `line` has no newline; the CI's runner reads both streams. */
  command(line: string, stream?: "stderr"): void {
    const toStderr = stream === "stderr" || this.#commandsOnStderr;
    _write(toStderr ? this.streams.stderr : this.streams.stdout, `${this.mask(line)}\n`);
  }

  /** Masked before the escaping, which could otherwise split a secret so the mask misses it. */
  document(json: string): boolean {
    return _write(this.streams.stdout, escapeJsonForLogs(this.mask(json)));
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

/** `verbose` is `undefined` when not given, so the CI's debug switch decides. */
export function exchangeLog(
  output: Output,
  verbose: boolean | undefined,
  provider: string,
  env: Readonly<Record<string, string | undefined>>,
  clock: Pick<Clock, "monotonic">,
): ExchangeLog | undefined {
  const ci = PROVIDERS.find((each) => each.id === provider)?.debug;
  const debug = ci !== undefined && ci.on(env[ci.variable]?.trim() ?? "");
  if (!(verbose ?? debug)) return undefined;
  const format = debug ? ci.format : "plain";
  return {
    monotonic: clock.monotonic,
    tell: (exchange) => {
      const line = exchangeLine(exchange, output.secrets);
      if (format === "plain") output.stderr(`service-ci: ${line}\n`);
      // Our own command: its data is inert already (exchangeLine), `%` escaped for GitHub.
      else if (format === "github") {
        output.command(`::debug::${line.replaceAll("%", "%25")}`, "stderr");
      } else output.command(`##[debug]${line}`, "stderr");
    },
  };
}

export function exchangeLine(exchange: Exchange, secrets: readonly string[]): string {
  const clean = (text: string, maxLength: number) => sanitize(text, { secrets, maxLength });
  const status = exchange.status === null ? "no answer" : String(exchange.status);
  const ms = Math.round(exchange.durationMs);
  const parts = [
    `${exchange.method} ${clean(exchange.host + exchange.path, 300)} → ${status} in ${ms} ms`,
    `attempt ${exchange.attempt}`,
    ...(exchange.requestId === null ? [] : [`request id ${clean(exchange.requestId, 100)}`]),
    ...(exchange.errorBody === null || exchange.status === null || exchange.status < 400
      ? []
      : [`body: ${clean(exchange.errorBody, 200) || "(empty)"}`]),
  ];
  return neutralizeLine(maskSecrets(parts.join(", "), secrets));
}
