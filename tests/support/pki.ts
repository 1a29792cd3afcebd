/**
 * A private PKI made with openssl for the TLS tests: the runner against the fake service over
 * HTTPS (tests/e2e/network_test.ts) and against nginx (tests/interop/nginx_test.ts).
 */

import { join } from "node:path";
import { runCommand } from "./command.ts";

/** Files of a private PKI: a CA, a server certificate it signed, and an unrelated second CA. */
export interface Pki {
  readonly dir: string;
  readonly caPem: string;
  readonly otherCaPem: string;
  readonly serverCert: string;
  readonly serverKey: string;
}

let pkiPromise: Promise<Pki> | undefined;

/**
 * Makes the PKI once per test file, with openssl, in a temp dir removed when the tests end.
 *
 * @example
 * ```ts
 * const { caPem, serverCert, serverKey } = await pki();
 * ```
 */
export function pki(): Promise<Pki> {
  pkiPromise ??= _makePki();
  return pkiPromise;
}

async function _makePki(): Promise<Pki> {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-pki-" });
  globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
  // A config file rather than -addext, so that LibreSSL (macOS) reads it too.
  await Deno.writeTextFile(
    join(dir, "openssl.cnf"),
    [
      "[req]",
      "distinguished_name = dn",
      "[dn]",
      "[ca]",
      "basicConstraints = critical, CA:TRUE",
      "keyUsage = critical, keyCertSign, cRLSign",
      "subjectKeyIdentifier = hash",
      "[server]",
      "subjectAltName = IP:127.0.0.1, DNS:localhost",
      "basicConstraints = critical, CA:FALSE",
      "keyUsage = critical, digitalSignature, keyEncipherment",
      "extendedKeyUsage = serverAuth",
      "authorityKeyIdentifier = keyid",
      "",
    ].join("\n"),
  );
  const ca = async (name: string) =>
    await _openssl(dir, [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "2",
      "-subj",
      `/CN=service-ci ${name}`,
      "-config",
      "openssl.cnf",
      "-extensions",
      "ca",
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.pem`,
    ]);
  await Promise.all([
    ca("test-ca"),
    ca("other-ca"),
    _openssl(dir, [
      "req",
      "-new",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-subj",
      "/CN=localhost",
      "-config",
      "openssl.cnf",
      "-keyout",
      "server.key",
      "-out",
      "server.csr",
    ]),
  ]);
  await _openssl(dir, [
    "x509",
    "-req",
    "-days",
    "2",
    "-in",
    "server.csr",
    "-CA",
    "test-ca.pem",
    "-CAkey",
    "test-ca.key",
    "-CAcreateserial",
    "-extfile",
    "openssl.cnf",
    "-extensions",
    "server",
    "-out",
    "server.pem",
  ]);
  return {
    dir,
    caPem: join(dir, "test-ca.pem"),
    otherCaPem: join(dir, "other-ca.pem"),
    serverCert: await Deno.readTextFile(join(dir, "server.pem")),
    serverKey: await Deno.readTextFile(join(dir, "server.key")),
  };
}

async function _openssl(cwd: string, args: readonly string[]): Promise<void> {
  const output = await runCommand("openssl", args, { cwd });
  if (output.code !== 0) throw new Error(`openssl ${args[0]} failed: ${output.stderr.trim()}`);
}
