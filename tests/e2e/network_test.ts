/**
 * End to end on restricted networks: the real entry point, with deno.json's permissions, against
 * the fake service over HTTPS with a private CA (made here with openssl), and through a proxy
 * written here.
 *
 * What Deno 2.9.6's fetch does, as found while writing these tests:
 * - It reads HTTPS_PROXY / HTTP_PROXY / NO_PROXY (and the lowercase forms) itself, in Rust, with
 *   no --allow-env check (a run without them in --allow-env still used the proxy and DENO_CERT);
 *   the runner's code reads none of them but NO_PROXY, set for a moment (src/http/fetch.ts, src/main.ts).
 * - It does NOT exempt loopback: `https://localhost:<port>` and `https://127.0.0.1:<port>` both go
 *   through HTTPS_PROXY as `CONNECT <host>:<port> HTTP/1.1`, so loopback is a fair stand-in for a
 *   remote service here. Only NO_PROXY bypasses the proxy, matched on the URL's host as written
 *   (NO_PROXY=localhost for `https://localhost:…`, NO_PROXY=127.0.0.1 for `https://127.0.0.1:…`).
 * - `http://` URLs use HTTP_PROXY (never HTTPS_PROXY), sent in absolute form
 *   (`POST http://127.0.0.1:<port>/… HTTP/1.1`); over plain http the proxy sees every header,
 *   which is why the runner accepts http:// only for loopback hosts, and sends those straight
 *   to the host whatever the proxy variables say (src/http/fetch.ts, src/main.ts).
 * - A proxy that answers 407 to `CONNECT` fails the fetch with "client error (Connect): proxy
 *   authentication required"; to an absolute-form request its 407 is the answer's status.
 * - `deno run` itself (not the runner) checks for a newer Deno at dl.deno.land, through the same
 *   proxy; DENO_NO_UPDATE_CHECK=1 turns that off, so the proxy here sees only the runner's traffic.
 * - A certificate that does not verify fails the fetch with "invalid peer certificate:
 *   UnknownIssuer" (or NotValidForName, …). The runner does not retry that: the same certificate
 *   would meet every retry, so it exits 3 at once with a hint to use --ca-cert (src/service/client.ts,
 *   kind `tls`). A proxy that drops connections is a network error and is retried.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type Pki, pki } from "../support/pki.ts";
import { startProxy } from "../support/proxy.ts";
import { AGENTS, type FakeService, KEYS, startFakeService } from "../support/fake_service.ts";
import { type ProgramResult, runProgram } from "../support/program.ts";
import { REFUSED_PORT, REFUSED_URL } from "../support/refused_address.ts";
import { onPath, toolTest } from "../support/tools.ts";

const HAVE_OPENSSL = onPath("openssl");
const SHORT_TIMEOUT = ["--timeout-minutes", "0.05"];

/** A test that needs openssl: skipped where it is missing, failed with a clear message in CI. */
function tlsTest(name: string, fn: (pki: Pki) => Promise<void>): void {
  toolTest(name, { tools: ["openssl"] }, async () => {
    await fn(await pki());
  });
}

async function httpsService(pki: Pki): Promise<FakeService> {
  return await startFakeService({ tls: { cert: pki.serverCert, key: pki.serverKey } });
}

function env(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SERVICE_API_KEY: KEYS.ci,
    SERVICE_BASE_URL: url,
    DENO_NO_UPDATE_CHECK: "1",
    ...extra,
  };
}

/** The service's URL with `127.0.0.1` instead of `localhost` (the certificate names both). */
function byAddress(service: FakeService): string {
  return service.url.replace("//localhost:", "//127.0.0.1:");
}

function hostPort(url: string): string {
  return new URL(url).host;
}

/** Nothing secret, and no stack trace, in anything the program printed. */
function assertClean(result: ProgramResult): void {
  const output = result.stdout + result.stderr;
  assert.ok(!output.includes(KEYS.ci), "the API key was printed");
  assert.doesNotMatch(output, /PRIVATE KEY/);
  assert.doesNotMatch(output, /^\s+at /m, "a stack trace was printed");
  assert.doesNotMatch(output, /internal error/);
}

/** Runs a passing and a failing gate at once and checks both verdicts. */
async function assertVerdicts(
  url: string,
  args: readonly string[],
  extra: Record<string, string> = {},
): Promise<void> {
  const [passing, failing] = await Promise.all([
    runProgram(["--agent", AGENTS.passing, ...args], { env: env(url, extra) }),
    runProgram(["--agent", AGENTS.failing, ...args], { env: env(url, extra) }),
  ]);
  assert.equal(passing.code, 0, passing.stderr);
  assert.match(passing.stderr, /PASSED/);
  assert.equal(failing.code, 1, failing.stderr);
  assert.match(failing.stderr, /FAILED \(run run_\d+\)/);
  assertClean(passing);
  assertClean(failing);
}

// --- TLS with a private CA -------------------------------------------------------------------

tlsTest(
  "without the private CA the certificate is refused at once: exit 3, one line with a hint, nothing sent",
  async (pki) => {
    await using service = await httpsService(pki);
    const started = Date.now();
    const result = await runProgram(["--agent", AGENTS.passing, "--timeout-minutes", "1"], {
      env: env(service.url),
    });
    assert.equal(result.code, 3, result.stderr);
    assert.ok(Date.now() - started < 20_000, "not retried until the timeout");
    assert.doesNotMatch(result.stderr, /attempt \d/);
    assert.match(
      result.stderr,
      /^agent \S+: NOT CHECKED: the TLS certificate of \S+ was refused: .*invalid peer certificate: UnknownIssuer.*\(fix: trust the service's CA with --ca-cert/m,
    );
    assertClean(result);
    // The handshake failed before any request: the key never went over the untrusted connection.
    assert.equal(service.requests.length, 0);
  },
);

tlsTest(
  "--ca-cert <pem> trusts the private CA: a passing gate exits 0, a failing one 1",
  async (pki) => {
    await using service = await httpsService(pki);
    await assertVerdicts(service.url, ["--ca-cert", pki.caPem]);
    await assertVerdicts(byAddress(service), ["--ca-cert", pki.caPem]);
    assert.equal(service.requestsOf("POST").length, 4);
  },
);

tlsTest("SERVICE_CA_CERT trusts the private CA like --ca-cert", async (pki) => {
  await using service = await httpsService(pki);
  await assertVerdicts(service.url, [], { SERVICE_CA_CERT: pki.caPem });
});

tlsTest("DENO_CERT, Deno's own variable, trusts the private CA without --ca-cert", async (pki) => {
  await using service = await httpsService(pki);
  await assertVerdicts(service.url, [], { DENO_CERT: pki.caPem });
});

// macOS and Windows keep their system store elsewhere; only Linux reads SSL_CERT_FILE.
if (Deno.build.os === "linux") {
  tlsTest(
    "DENO_TLS_CA_STORE=system trusts what the system store trusts (here SSL_CERT_FILE, read by the system store)",
    async (pki) => {
      await using service = await httpsService(pki);
      // On Linux the system store is the OpenSSL-style bundle, which SSL_CERT_FILE can name.
      const store = { SSL_CERT_FILE: pki.caPem };
      await assertVerdicts(service.url, [], { DENO_TLS_CA_STORE: "system", ...store });
      await assertVerdicts(service.url, [], { DENO_TLS_CA_STORE: "mozilla,system", ...store });
      // Without DENO_TLS_CA_STORE, only Deno's bundled roots count: the same CA is refused.
      const refused = await runProgram(["--agent", AGENTS.passing], {
        env: env(service.url, store),
      });
      assert.equal(refused.code, 3, refused.stderr);
    },
  );
}

tlsTest(
  "--ca-cert adds to the trusted roots: another CA in --ca-cert keeps DENO_CERT's CA trusted",
  async (pki) => {
    await using service = await httpsService(pki);
    await assertVerdicts(service.url, ["--ca-cert", pki.otherCaPem], { DENO_CERT: pki.caPem });
  },
);

tlsTest(
  "--ca-cert naming a missing, unreadable, non-PEM or malformed file exits 2 with one line naming --ca-cert, before any request",
  async (pki) => {
    await using service = await httpsService(pki);
    const notPem = join(pki.dir, "openssl.cnf");
    const keyOnly = join(pki.dir, "server.key");
    const malformed = join(pki.dir, "malformed.pem");
    await Deno.writeTextFile(
      malformed,
      "-----BEGIN CERTIFICATE-----\n!!not base64!!\n-----END CERTIFICATE-----\n",
    );
    const cases: Array<[string, string, RegExp]> = [
      ["a missing file", join(pki.dir, "missing.pem"), /can be read .*missing\.pem/],
      ["a directory", pki.dir, /can be read/],
      ["a file that is not PEM", notPem, /holds none/],
      ["a private key, no certificate", keyOnly, /holds none/],
      ["a malformed certificate", malformed, /valid certificates .*malformed\.pem/],
    ];
    for (const [what, path, reason] of cases) {
      for (
        const [how, args, extra] of [
          ["--ca-cert", ["--ca-cert", path], {}],
          ["SERVICE_CA_CERT", [], { SERVICE_CA_CERT: path }],
        ] as const
      ) {
        const result = await runProgram(["--agent", AGENTS.passing, ...args], {
          env: env(service.url, extra),
        });
        assert.equal(result.code, 2, `${what} in ${how}: ${result.stderr}`);
        const lines = result.stderr.trimEnd().split("\n");
        assert.equal(lines.length, 1, result.stderr);
        assert.match(lines[0]!, /^service-ci: --ca-cert\/SERVICE_CA_CERT must name a PEM file/);
        assert.match(lines[0]!, reason, `${what} in ${how}`);
        assertClean(result);
      }
    }
    assert.equal(service.requests.length, 0);
  },
);

// --- Proxies ---------------------------------------------------------------------------------

tlsTest(
  "HTTPS_PROXY (or https_proxy) tunnels every request with CONNECT to the service, which the proxy cannot read",
  async (pki) => {
    await using service = await httpsService(pki);
    for (
      const [variable, url] of [["HTTPS_PROXY", service.url], ["https_proxy", byAddress(service)]]
    ) {
      await using proxy = startProxy("relay");
      const result = await runProgram(["--agent", AGENTS.passing, "--ca-cert", pki.caPem], {
        env: env(url!, { [variable!]: proxy.url }),
      });
      assert.equal(result.code, 0, result.stderr);
      assert.ok(proxy.requests.length >= 1, `${variable}: the proxy saw nothing`);
      for (const request of proxy.requests) {
        assert.equal(request, `CONNECT ${hostPort(url!)} HTTP/1.1`);
      }
      // Inside the tunnel is TLS: neither the key nor the API path passes the proxy in clear.
      assert.ok(!proxy.relayed().includes(KEYS.ci));
      assert.ok(!proxy.relayed().includes("/api/v1/agents/"));
      assertClean(result);
    }
    assert.ok(service.requestsOf("GET").length >= 2);
  },
);

tlsTest("NO_PROXY naming the service's host bypasses the proxy", async (pki) => {
  await using service = await httpsService(pki);
  await using proxy = startProxy("relay");
  for (const [url, noProxy] of [[service.url, "localhost"], [byAddress(service), "127.0.0.1"]]) {
    const result = await runProgram(["--agent", AGENTS.failing, "--ca-cert", pki.caPem], {
      env: env(url!, { HTTPS_PROXY: proxy.url, NO_PROXY: noProxy! }),
    });
    assert.equal(result.code, 1, result.stderr);
  }
  assert.equal(proxy.connections, 0, `the proxy saw ${JSON.stringify(proxy.requests)}`);
  assert.equal(service.requestsOf("POST").length, 2);
});

Deno.test("a plain-http loopback service is never reached through a proxy: the proxy sees nothing, the service gets every request", async () => {
  await using proxy = startProxy("relay");
  await using v4 = await startFakeService();
  const services: Array<[string, FakeService]> = [
    [v4.url, v4],
    [v4.url.replace("//127.0.0.1:", "//localhost:"), v4],
  ];
  // [::1] where this machine has IPv6 loopback.
  await using v6 = _hasIpv6Loopback() ? await startFakeService({ hostname: "::1" }) : undefined;
  if (v6 !== undefined) services.push([v6.url.replace("//::1:", "//[::1]:"), v6]);
  const results = await Promise.all(
    services.map(([url]) =>
      // Bounded: through a proxy (the fault this tests for) a run would retry for a minute.
      runProgram(["--agent", AGENTS.passing, "--timeout-minutes", "0.5"], {
        // Every variable Deno reads, in both spellings, names the recording proxy.
        env: env(url, {
          HTTP_PROXY: proxy.url,
          http_proxy: proxy.url,
          ALL_PROXY: proxy.url,
          all_proxy: proxy.url,
        }),
      })
    ),
  );
  for (const [index, result] of results.entries()) {
    assert.equal(result.code, 0, `${services[index]![0]}: ${result.stderr}`);
    assertClean(result);
  }
  assert.equal(proxy.connections, 0, `the proxy saw ${JSON.stringify(proxy.requests)}`);
  for (const service of new Set(services.map(([, service]) => service))) {
    assert.ok(service.requestsOf("POST").length >= 1);
    for (const request of service.requests) assert.equal(request.headers["x-api-key"], KEYS.ci);
  }
});

function _hasIpv6Loopback(): boolean {
  try {
    Deno.listen({ hostname: "::1", port: 0 }).close();
    return true;
  } catch {
    return false;
  }
}

Deno.test("a proxy that refuses its credentials (407) stops the run at once: exit 3, one line naming the variable, never the password", async () => {
  await using proxy = startProxy("refuse");
  const password = "pr0xy-S3cret-pw";
  const withCredentials = proxy.url.replace("http://", `http://ci-user:${password}@`);
  for (const variable of ["HTTPS_PROXY", "https_proxy"]) {
    const before = proxy.connections;
    // The proxy answers before any name is resolved: the service's host need not exist.
    const result = await runProgram(["--agent", AGENTS.passing, "--timeout-minutes", "0.5"], {
      env: env("https://service.example", { [variable]: withCredentials }),
    });
    assert.equal(result.code, 3, `${variable}: ${result.stderr}`);
    // One attempt: not retried as a network fault.
    assert.equal(proxy.connections - before, 1, JSON.stringify(proxy.requests));
    const lines = result.stderr.split("\n").filter((line) => /\b407\b/.test(line));
    assert.equal(lines.length, 1, result.stderr);
    assert.match(
      lines[0]!,
      /the proxy in HTTPS_PROXY\/ALL_PROXY refused the credentials it was given \(407 Proxy Authentication Required\)/,
    );
    const output = result.stdout + result.stderr;
    assert.ok(!output.includes(password), output);
    assert.ok(!output.includes("ci-user"), output);
    assert.doesNotMatch(output, /trying for up to|attempt \d/);
    assertClean(result);
  }
  assert.deepEqual(proxy.requests, [
    "CONNECT service.example:443 HTTP/1.1",
    "CONNECT service.example:443 HTTP/1.1",
  ]);
});

Deno.test(
  "a proxy that closes every connection: each retry is one network-error line, and the timeout exits 4",
  async (t) => {
    await using proxy = startProxy("close");
    const keys = HAVE_OPENSSL ? await pki() : undefined;
    await using tls = keys === undefined ? undefined : await httpsService(keys);
    const cases: Array<
      { what: string; args: string[]; env: Record<string, string>; says: RegExp }
    > = [{
      // Nothing is resolved or sent before the tunnel: the service's host need not exist.
      what: "https to a remote host through HTTPS_PROXY",
      args: [],
      env: env("https://service.example", { HTTPS_PROXY: proxy.url }),
      says: /client error \(Connect\): unexpected eof while tunneling/,
    }];
    if (keys !== undefined && tls !== undefined) {
      cases.push({
        what: "https through HTTPS_PROXY",
        args: ["--ca-cert", keys.caPem],
        env: env(tls.url, { HTTPS_PROXY: proxy.url }),
        says: /client error \(Connect\): unexpected eof while tunneling/,
      });
    }
    const results = await Promise.all(
      cases.map((item) =>
        runProgram(["--agent", AGENTS.passing, ...SHORT_TIMEOUT, ...item.args], { env: item.env })
      ),
    );
    for (const [index, item] of cases.entries()) {
      await t.step(item.what, () => {
        const result = results[index]!;
        assert.equal(result.code, 4, result.stderr);
        const faults = result.stderr.split("\n").filter((line) =>
          line.includes("trigger failed: network error")
        );
        assert.ok(faults.length >= 1, result.stderr);
        for (const line of faults) {
          // The cause leads the line; the URL, already shown above, is left out.
          assert.match(line, /^agent \S+: trigger failed: network error: fetch failed: /);
          assert.match(line, item.says);
          assert.doesNotMatch(line, /error sending request/);
        }
        // The timeout's own line names the fault that kept the run from starting.
        assert.match(
          result.stderr,
          /TIMED OUT: the timeout of 3 s ran out before the run was triggered; last fault: network error: /,
        );
        assertClean(result);
      });
    }
    assert.ok(proxy.connections >= cases.length);
    assert.equal(tls?.requests.length ?? 0, 0);
  },
);

tlsTest(
  "a certificate issued for another name says so at once: exit 3, the names, nothing sent",
  async (pki) => {
    // The certificate names 127.0.0.1 and localhost; 127.0.0.2 is loopback too, but not named.
    let requests = 0;
    await using server = Deno.serve({
      hostname: "127.0.0.2",
      port: 0,
      cert: pki.serverCert,
      key: pki.serverKey,
      onListen: () => {},
    }, () => {
      requests++;
      return new Response("{}");
    });
    const url = `https://127.0.0.2:${server.addr.port}`;
    const result = await runProgram(["--agent", AGENTS.passing, "--ca-cert", pki.caPem], {
      env: env(url),
    });
    assert.equal(result.code, 3, result.stderr);
    assert.match(
      result.stderr,
      /NOT CHECKED: the TLS certificate of 127\.0\.0\.2:\d+ is not valid for the name 127\.0\.0\.2 \(it names .*\) \(fix: give --base-url the host name the certificate was issued for/,
    );
    assert.doesNotMatch(result.stderr, /attempt \d/);
    assertClean(result);
    assert.equal(requests, 0);
  },
);

Deno.test("nothing listening at the address: the first line says connection refused, names the address and what to check", async () => {
  const port = REFUSED_PORT;
  const url = REFUSED_URL;
  // The 30 s give-up is tested on virtual time in tests/run_test.ts; here a short timeout ends it.
  const result = await runProgram(["--agent", AGENTS.passing, "--timeout-minutes", "0.05"], {
    env: env(url),
  });
  assert.equal(result.code, 4, result.stderr);
  const first = result.stderr.split("\n").find((line) => line.includes("failed"));
  assert.equal(
    first,
    `agent ${AGENTS.passing}: trigger failed: connection refused by 127.0.0.1:${port} (from SERVICE_BASE_URL): check the address and its port, that the service is up, and any proxy in HTTP_PROXY/ALL_PROXY; trying for up to 30 s, next in ${
      /next in (\d+\.\d s)$/.exec(first ?? "")?.[1]
    }`,
  );
  assert.match(result.stderr, /last fault: connection refused by 127\.0\.0\.1/);
  assert.doesNotMatch(result.stderr, /tcp connect error|client error \(Connect\)|os error/);
  assertClean(result);
});

Deno.test("a proxy that refuses reads as the service's refusal in Deno's words: the line names the proxy variable as a suspect", async () => {
  const result = await runProgram(["--agent", AGENTS.passing, "--timeout-minutes", "0.02"], {
    env: env("https://service.example", { HTTPS_PROXY: REFUSED_URL }),
  });
  assert.equal(result.code, 4, result.stderr);
  assert.match(
    result.stderr,
    /trigger failed: connection refused by service\.example \(from SERVICE_BASE_URL\): .*and any proxy in HTTPS_PROXY\/ALL_PROXY; trying for up to 30 s/,
  );
  assertClean(result);
});

Deno.test("an address on a port fetch never connects to is a usage error: exit 2, nothing sent", async () => {
  const result = await runProgram(["--agent", AGENTS.passing], {
    env: env("http://127.0.0.1:6000"),
  });
  assert.equal(result.code, 2, result.stderr);
  assert.match(
    result.stderr,
    /SERVICE_BASE_URL must not use port 6000: fetch never connects to it/,
  );
  assert.doesNotMatch(result.stderr, /Requests to port|attempt \d/);
});
