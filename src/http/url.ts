/** Where a secret may be sent: https anywhere, plain http only to this machine. */

/** As `URL.hostname` spells it. Plain http:// only here: anyone on the path would read headers. */
export function isLoopbackHost(hostname: string): boolean {
  return /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i.test(hostname);
}

/** What is wrong with `url` (from the variable `name`) as a token's address, or `null`. */
export function tokenUrlProblem(url: string, name: string): string | null {
  if (!URL.canParse(url)) return `${name} is not a URL (got ${JSON.stringify(url)})`;
  const parsed = new URL(url);
  if (parsed.username !== "" || parsed.password !== "") {
    return `${name} must not contain credentials`;
  }
  return checkHttps(parsed, name, `${parsed.protocol}//${parsed.host}`);
}

/** What is wrong with `url` as an address a secret is sent to, or `null`. */
export function checkHttps(url: URL, name: string, given: string = url.href): string | null {
  if (url.protocol === "https:") return null;
  if (url.protocol !== "http:") {
    return `${name} must be an https:// URL (got ${JSON.stringify(given)})`;
  }
  if (isLoopbackHost(url.hostname)) return null;
  const got = JSON.stringify(given);
  return `${name} must use https:// for a remote host; plain http:// is only allowed for localhost, 127.0.0.0/8 and [::1] (got ${got})`;
}
