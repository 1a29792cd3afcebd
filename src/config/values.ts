/** One parser per kind of option value, each refusing bad input with a one-line UsageError. */

import { UsageError } from "./errors.ts";
import { hideUserinfo, quoteValue } from "../text/quote.ts";
import { checkHttps, isLoopbackHost } from "../http/url.ts";

export const AGENT_UUID: RegExp = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function refusal(name: string, rule: string, text: string): UsageError {
  return new UsageError(`${name} must ${rule} (got ${quoteValue(text)})`);
}

/** What a kind of value gives its option: a parser, and the fields `Fixed` that the kind decides. */
export type ValueKind<T, Fixed> = Fixed & { parse(text: string, name: string): T };

/** A value that must not be blank; `then` checks or tidies the rest. */
export function textValue(
  expected: string,
  then = (text: string, _name: string) => text,
): ValueKind<string, { readonly expected: string }> {
  return {
    expected,
    parse(text: string, name: string): string {
      if (text.trim() === "") {
        throw new UsageError(`${name} must be ${expected} (got an empty value)`);
      }
      return then(text, name);
    },
  };
}

export function numberValue(
  limits: { unit: string; default: number; max: number; min?: number },
): ValueKind<number, { type: "number"; valueName: "<n>"; default: number; expected: string }> {
  const expected = `a positive number of ${limits.unit}`;
  const min = limits.min ?? 0;
  const range = min > 0 ? `from ${min} to ${limits.max}` : `up to ${limits.max}`;
  return {
    type: "number",
    valueName: "<n>",
    default: limits.default,
    expected,
    parse(text: string, name: string): number {
      const value = /^(\d+(\.\d*)?|\.\d+)$/.test(text.trim()) ? Number(text) : NaN;
      if (!(value > 0) || value < min || value > limits.max) {
        throw refusal(name, `be ${expected} ${range}, decimals allowed`, text);
      }
      return value;
    },
  } as const;
}

// An on/off variable: true/1/yes/on or false/0/no/off in any case; blank counts as unset.
export function onOff(text: string, name: string): boolean | undefined {
  const word = text.trim().toLowerCase();
  if (word === "") return undefined;
  if (["true", "1", "yes", "on"].includes(word)) return true;
  if (["false", "0", "no", "off"].includes(word)) return false;
  throw refusal(name, "be true or false (also 1/0, yes/no, on/off)", text);
}

export function agentsValue(items: readonly string[], name: string): string[] {
  const seen = new Set<string>();
  for (const agent of items) {
    if (agent.includes(",") && name.startsWith("--")) {
      throw new UsageError(
        `${name} takes one agent UUID; give ${name} once per agent (got ${quoteValue(agent)})`,
      );
    }
    if (!AGENT_UUID.test(agent)) {
      throw refusal(name, "be an agent UUID like 0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10", agent);
    }
    const key = agent.toLowerCase();
    if (seen.has(key)) throw new UsageError(`${name} names agent ${agent} twice`);
    seen.add(key);
  }
  return [...items];
}

// What a CI passes on, as written, in place of a secret it does not have: each reference's form,
// capturing the name it refers to (bounded, so the message stays short), and what to say of it.
// The message names that name, never the value whole: the value is masked as a secret.
const _UNEXPANDED: ReadonlyArray<readonly [RegExp, (ref: string | undefined) => string]> = [
  [
    /^\$\(([\w.-]{1,128})\)$/,
    (ref) =>
      `an Azure Pipelines macro for ${ref} that was never expanded, not a key: no variable ${ref} is defined; define ${ref} as a secret variable of the pipeline and map it in the step's env:`,
  ],
  [
    /^\$\{\{\s*(?:secrets\.([\w-]{1,128})|[\x20-\x7e]*?)\s*\}\}$/,
    (ref) =>
      `a GitHub Actions expression${
        ref === undefined ? "" : ` for secrets.${ref}`
      } that was never evaluated, not a key: only a workflow file's own keys are evaluated; define the secret under Settings → Secrets and variables → Actions and set the variable from it in the step's env:`,
  ],
  [
    /^%([\w.-]{1,128})%$/,
    (ref) =>
      `a TeamCity reference to ${ref} that was never expanded, not a key: no parameter ${ref} is defined; define ${ref} as a password parameter of the build configuration`,
  ],
  [
    /^\$\{?([A-Za-z_]\w{0,127})\}?$/,
    (ref) =>
      `a reference to the variable ${ref} that was never expanded, not a key: ${ref} is not defined where it was written (or was single-quoted); define ${ref} as a secret variable in the CI's settings (GitLab: masked CI/CD variable, Bitbucket: secured variable, Jenkins: withCredentials)`,
  ],
];

export function apiKeyValue(key: string, name: string): string {
  // Before the whitespace rule: `${{ secrets.X }}` has blanks; a trailing newline is not its fault.
  for (const [form, what] of _UNEXPANDED) {
    const found = form.exec(key.trim());
    if (found !== null) throw new UsageError(`${name} is ${what(found[1])} (nothing was sent)`);
  }
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x20\x7f]/.test(key)) {
    throw new UsageError(
      `${name} contains whitespace or control characters (often a trailing newline from the secret store); it must be the key alone`,
    );
  }
  // A header value must be ASCII; fetch would refuse it on every attempt. The key itself is
  // never printed, only where the first foreign character is.
  const foreign = key.search(/[^\x21-\x7e]/) + 1;
  if (foreign > 0) {
    throw new UsageError(
      `${name} must be printable ASCII, as the service issues it, but character ${foreign} of ${key.length} is not (often a typographic quote or dash pasted from a document); copy the key again from Settings → API Keys`,
    );
  }
  return key;
}

/** One rule for a pull request's number, the CI's or `--pull-request`'s. */
export function pullRequestNumber(value: string | null): number | null {
  const text = value?.trim() ?? "";
  if (!/^[1-9]\d*$/.test(text)) return null;
  const number = Number(text);
  return Number.isSafeInteger(number) ? number : null;
}

export function pullRequestValue(text: string, name: string): number {
  const number = pullRequestNumber(text);
  if (number === null) throw refusal(name, "be a pull request number like 42", text);
  return number;
}

/** Fetch's bad ports (https://fetch.spec.whatwg.org/#port-blocking) and 0: refused up front. */
export const FETCH_BLOCKED_PORTS: readonly number[] = [
  "0 1 7 9 11 13 15 17 19 20 21 22 23 25 37 42 43 53 69 77 79 87 95 101 102 103 104 109 110",
  "111 113 115 117 119 123 135 137 139 143 161 179 389 427 465 512 513 514 515 526 530 531",
  "532 540 548 554 556 563 587 601 636 989 990 993 995 1719 1720 1723 2049 3659 4045 4190",
  "5060 5061 6000 6566 6665 6666 6667 6668 6669 6679 6697 10080",
].join(" ").split(" ").map(Number);

/** fetch refuses a URL of about 64 KiB, servers far shorter ones: a longer address is a mistake. */
const MAX_BASE_URL_LENGTH = 2048;

/**
 * Checks a service address by the `--base-url` rules; a path prefix is kept.
 *
 * @throws {UsageError} Naming `name` and what would be valid.
 */
export function parseBaseUrl(text: string, name: string, keyVariable: string): URL {
  if (text === "") throw new UsageError(`${name} must be an https:// URL (got an empty value)`);
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    // As probably meant: no scheme short of its slashes (`https:/h`) or bare slashes (`//h`), and
    // no credentials, which the suggestion must not echo (and would be refused).
    const meant = text.replace(/^(?:[a-z][a-z0-9+.-]*:)?[\\/]+/i, "").replace(/^[^\\/?#]*@/, "");
    // Not even a host: the plain message says what is expected.
    const host = URL.parse(`http://${meant}`)?.hostname ?? "";
    const scheme = isLoopbackHost(host) ? "http" : "https";
    throw new UsageError(
      `${name} must be an https:// URL (http:// for loopback hosts) (got ${quoteValue(text)}${
        host === "" ? "" : `; did you mean ${scheme}://${meant}?`
      })`,
    );
  }
  const url = URL.parse(text);
  if (url === null) throw refusal(name, "be an https:// URL", text);
  const insecure = checkHttps(url, name, hideUserinfo(text));
  if (insecure !== null) throw new UsageError(insecure);
  if (url.username !== "" || url.password !== "") {
    throw new UsageError(
      `${name} must not contain credentials; the key goes in ${keyVariable} (got ${url.protocol}//…@${url.host})`,
    );
  }
  // The service's API lives under /api/v1 of its address, which service-ci adds itself: given
  // again, every request would miss and the 404 would blame the agent.
  const apiPath = /\/api(?:\/v1)?\/{0,}$/i.exec(url.pathname);
  const fixed = `${url.origin}${url.pathname.slice(0, apiPath?.index)}`;
  const rule = url.search !== "" || url.hash !== ""
    ? "not have a query or fragment; give the address and optional path prefix only"
    : text.length > MAX_BASE_URL_LENGTH
    ? `be at most ${MAX_BASE_URL_LENGTH} characters, the address and optional path prefix only`
    : apiPath !== null
    ? `be the service's address without its API path: service-ci adds /api/v1 itself; give ${fixed}`
    : url.port !== "" && FETCH_BLOCKED_PORTS.includes(Number(url.port))
    ? `not use port ${url.port}: fetch never connects to it (one of the Fetch standard's "bad ports", kept for mail, X11, IRC and the like); serve the API on another port`
    : undefined;
  if (rule !== undefined) throw refusal(name, rule, text);
  return url;
}

export const FORGE_TOKEN = {
  type: "string",
  defaultText: "none",
  secret: true,
  parse: (text: string) => text.trim() || undefined,
} as const;

/**
 * A forge's address, judged by forge/target.ts, never with credentials: it is printed (`--dry-run`,
 * warnings), and a password in it would be too. `instead` says what the credentials were for.
 */
export function forgeAddress(instead: string): ValueKind<string | undefined, { type: "string" }> {
  return {
    type: "string",
    parse(text: string, name: string): string | undefined {
      const address = text.trim();
      if (hideUserinfo(address) !== address) {
        throw refusal(name, `not contain credentials: ${instead}`, address);
      }
      return address || undefined;
    },
  } as const;
}
