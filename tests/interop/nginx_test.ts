/**
 * The gate behind nginx (Debian's), as a team puts a service behind a reverse proxy: TLS from a
 * private CA made with openssl, HTTP/2, the service at the root and under a path prefix (`/eval`),
 * and nginx's own 502 and 504 pages while the backend restarts. The gate still reaches its
 * verdict, and says what the proxy answered in one line each, describing its HTML page.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENTS, KEYS, startFakeService } from "../support/fake_service.ts";
import { pki } from "../support/pki.ts";
import { runProgram } from "../support/program.ts";
import { toolTest } from "../support/tools.ts";

/** What the backend does with a connection nginx opens to it. */
type Fault = "pass" | "reset" | "stall";

/**
 * A TCP switch between nginx and the backend: each connection takes the next fault of its
 * script (then `pass`): `reset` closes it unanswered (nginx's 502), `stall` holds it unanswered
 * (nginx's 504, after its `proxy_read_timeout`), as a restarting backend does.
 */
function _startSwitch(backendPort: number, script: readonly Fault[]) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const faults = [...script];
  const held = new Set<Deno.Conn>();
  const handled: Promise<void>[] = [];
  const pipe = async (conn: Deno.Conn) => {
    const fault = faults.shift() ?? "pass";
    held.add(conn);
    if (fault === "reset") {
      held.delete(conn);
      conn.close();
      return;
    }
    if (fault === "stall") return;
    const upstream = await Deno.connect({ hostname: "127.0.0.1", port: backendPort });
    held.add(upstream);
    await Promise.all([
      conn.readable.pipeTo(upstream.writable).catch(() => {}),
      upstream.readable.pipeTo(conn.writable).catch(() => {}),
    ]);
    held.delete(conn);
    held.delete(upstream);
  };
  const accepting = (async () => {
    for await (const conn of listener) handled.push(pipe(conn));
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const conn of held) {
        try {
          conn.close();
        } catch {
          // closed by its pipe
        }
      }
      await accepting.catch(() => {});
      await Promise.allSettled(handled);
    },
  };
}

/**
 * nginx on 127.0.0.1 with TLS and HTTP/2: `/` goes to `rootPort`, `/eval/` to `prefixPort` with
 * the prefix taken off. Its access log has one line per request: protocol, method, URI, status.
 */
async function _startNginx(
  dir: string,
  tls: { readonly cert: string; readonly key: string },
  rootPort: number,
  prefixPort: number,
) {
  await Deno.writeTextFile(join(dir, "server.pem"), tls.cert);
  await Deno.writeTextFile(join(dir, "server.key"), tls.key);
  // nginx cannot be given port 0: a port is drawn, and drawn again if it is taken.
  for (let attempt = 1;; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 40_000);
    const proxied = "proxy_read_timeout 1s; proxy_connect_timeout 1s; proxy_set_header Host $host;";
    await Deno.writeTextFile(
      join(dir, "nginx.conf"),
      `
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
worker_processes 1;
events { worker_connections 64; }
http {
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  log_format gate '$server_protocol $request_method $request_uri $status';
  access_log ${dir}/access.log gate;
  server {
    listen 127.0.0.1:${port} ssl http2;
    ssl_certificate ${dir}/server.pem;
    ssl_certificate_key ${dir}/server.key;
    location / { proxy_pass http://127.0.0.1:${rootPort}; ${proxied} }
    location /eval/ { proxy_pass http://127.0.0.1:${prefixPort}/; ${proxied} }
  }
}
`,
    );
    const child = new Deno.Command("nginx", {
      args: [
        "-p",
        dir,
        "-e",
        join(dir, "error.log"),
        "-c",
        join(dir, "nginx.conf"),
        "-g",
        "daemon off;",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const stop = async () => {
      try {
        child.kill("SIGTERM");
      } catch {
        // already ended
      }
      await child.output();
    };
    // Listening once a TLS handshake there succeeds; an early exit says why.
    const started = Date.now();
    let listening = false;
    while (!listening && Date.now() - started < 10_000) {
      try {
        (await Deno.connect({ hostname: "127.0.0.1", port })).close();
        listening = true;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    if (listening) {
      return {
        url: `https://127.0.0.1:${port}`,
        accessLog: async () =>
          (await Deno.readTextFile(join(dir, "access.log"))).trim().split("\n"),
        [Symbol.asyncDispose]: stop,
      };
    }
    await stop();
    const errors = await Deno.readTextFile(join(dir, "error.log")).catch(() => "");
    if (!/Address already in use/.test(errors) || attempt === 5) {
      throw new Error(`nginx did not start: ${errors}`);
    }
  }
}

toolTest(
  "behind nginx (TLS from a private CA, HTTP/2), at the root and under /eval, the gate reaches its verdict through the 502 and 504 of a backend restart",
  { tools: ["nginx", "openssl"], notOn: ["windows"] },
  async () => {
    const { caPem, serverCert, serverKey } = await pki();
    const dir = await Deno.makeTempDir({ prefix: "service-ci-nginx-" });
    try {
      await using service = await startFakeService();
      const backend = Number(new URL(service.url).port);
      // The trigger goes through; the first reads meet a backend that is down, then one that
      // has not answered yet.
      await using root = _startSwitch(backend, ["pass", "reset", "stall"]);
      await using prefixed = _startSwitch(backend, ["pass", "stall", "reset"]);
      await using nginx = await _startNginx(
        dir,
        { cert: serverCert, key: serverKey },
        root.port,
        prefixed.port,
      );
      const gate = (agent: string, url: string) =>
        runProgram(["--agent", agent, "--ca-cert", caPem, "--timeout-minutes", "1"], {
          env: { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: url, DENO_NO_UPDATE_CHECK: "1" },
        });
      const [passing, failing] = await Promise.all([
        gate(AGENTS.passing, nginx.url),
        gate(AGENTS.failing, `${nginx.url}/eval`),
      ]);
      assert.equal(passing.code, 0, passing.stderr);
      assert.match(passing.stderr, /PASSED/);
      assert.equal(failing.code, 1, failing.stderr);
      assert.match(failing.stderr, /FAILED/);
      for (const result of [passing, failing]) {
        // nginx's pages, described in one line each; never their markup.
        assert.match(
          result.stderr,
          /GET answered 502 Bad Gateway \(an HTML page: a proxy in front of the service\?\)/,
        );
        assert.match(
          result.stderr,
          /GET answered 504 Gateway Time-?out \(an HTML page: a proxy in front of the service\?\)/,
        );
        assert.doesNotMatch(result.stderr, /<html|<center|nginx\//i);
        assert.ok(!(result.stdout + result.stderr).includes(KEYS.ci), "the key was printed");
      }
      const log = await nginx.accessLog();
      assert.ok(log.length >= 8, log.join("\n"));
      for (const line of log) assert.match(line, /^HTTP\/2\.0 (POST|GET) \/(eval\/)?api\/v1\//);
      for (const [prefix, agent] of [["", AGENTS.passing], ["/eval", AGENTS.failing]]) {
        const runs = `${prefix}/api/v1/agents/${agent}/runs`;
        const statuses = log.filter((line) => line.includes(` ${runs}`))
          .map((line) => line.split(" ").at(-1));
        assert.equal(statuses[0], "201", log.join("\n"));
        assert.ok(statuses.includes("502") && statuses.includes("504"), log.join("\n"));
        assert.equal(statuses.at(-1), "200", log.join("\n"));
      }
      // The prefix is nginx's: the service saw the same paths either way, each with the key.
      for (const request of service.requests) {
        assert.match(request.path, /^\/api\/v1\/agents\//);
        assert.equal(request.headers["x-api-key"], KEYS.ci);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
