/**
 * A forward proxy on loopback for the tests of what goes through one: the runner's requests
 * (tests/e2e/network_test.ts) and install.sh's downloads (tests/ship/install_test.ts).
 */

/** A forward proxy on 127.0.0.1 that logs what it is asked for. Use with `await using`. */
export interface TestProxy extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The first line of each connection's first request, e.g. `CONNECT localhost:4433 HTTP/1.1`. */
  readonly requests: readonly string[];
  /** How many connections it accepted. */
  readonly connections: number;
  /** Every byte clients sent after that first request's head (tunnel contents), as latin1. */
  relayed(): string;
}

/**
 * Starts a proxy. `relay` answers `CONNECT host:port` with 200 and pipes both ways, and forwards
 * an absolute-form `GET http://host:port/…` as it came (servers must accept absolute form);
 * only loopback targets are relayed, anything else gets 502. `close` closes every connection
 * as soon as it is accepted. `refuse` answers every request with 407, whatever credentials came.
 */
export function startProxy(mode: "relay" | "close" | "refuse"): TestProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const requests: string[] = [];
  const sockets = new Set<Deno.Conn>();
  const handlers: Promise<void>[] = [];
  let connections = 0;
  let relayed = "";
  const latin1 = new TextDecoder("latin1");
  const encoder = new TextEncoder();

  const handle = async (conn: Deno.Conn) => {
    const head = await _readHead(conn);
    if (head === undefined) return;
    const line = head.text.split("\r\n")[0] ?? "";
    requests.push(line);
    if (mode === "refuse") {
      await conn.write(encoder.encode(
        'HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic realm="proxy"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n',
      ));
      return;
    }
    const connect = /^CONNECT ([^\s:]+):(\d+) HTTP\/1\.[01]$/.exec(line);
    const absolute = /^[A-Z]+ http:\/\/([^\s/:]+):(\d+)\/\S* HTTP\/1\.[01]$/.exec(line);
    const target = connect ?? absolute;
    if (target === null || !["localhost", "127.0.0.1"].includes(target[1]!)) {
      await conn.write(encoder.encode("HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n"));
      return;
    }
    const upstream = await Deno.connect({ hostname: "127.0.0.1", port: Number(target[2]) });
    sockets.add(upstream);
    if (connect !== null) {
      await conn.write(encoder.encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
    } else {
      await upstream.write(encoder.encode(`${head.text}\r\n\r\n`));
    }
    relayed += latin1.decode(head.rest);
    if (head.rest.length > 0) await upstream.write(head.rest);
    const tap = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        relayed += latin1.decode(chunk);
        controller.enqueue(chunk);
      },
    });
    await Promise.allSettled([
      conn.readable.pipeThrough(tap).pipeTo(upstream.writable),
      upstream.readable.pipeTo(conn.writable),
    ]);
  };

  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        connections++;
        if (mode === "close") {
          conn.close();
          continue;
        }
        sockets.add(conn);
        handlers.push(handle(conn).catch(() => {}).finally(() => _close(conn)));
      }
    } catch {
      // The listener was closed.
    }
  })();

  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    requests,
    get connections() {
      return connections;
    },
    relayed: () => relayed,
    async [Symbol.asyncDispose]() {
      _close(listener);
      await accepting;
      for (const socket of sockets) _close(socket);
      await Promise.allSettled(handlers);
    },
  };
}

/** Reads up to the end of a request's head; `rest` is whatever came after it. */
async function _readHead(
  conn: Deno.Conn,
): Promise<{ text: string; rest: Uint8Array } | undefined> {
  const buffer = new Uint8Array(16 * 1024);
  let bytes = new Uint8Array(0);
  while (bytes.length < 64 * 1024) {
    const n = await conn.read(buffer);
    if (n === null) return undefined;
    const next = new Uint8Array(bytes.length + n);
    next.set(bytes);
    next.set(buffer.subarray(0, n), bytes.length);
    bytes = next;
    const text = new TextDecoder("latin1").decode(bytes);
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0) return { text: text.slice(0, end), rest: bytes.subarray(end + 4) };
  }
  return undefined;
}

function _close(resource: { close(): void }): void {
  try {
    resource.close();
  } catch {
    // Already closed.
  }
}
