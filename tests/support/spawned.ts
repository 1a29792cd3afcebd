/**
 * A server a test starts as a process of its own (a Python service, Python's `http.server`), on
 * 127.0.0.1: ready once its standard output says its port.
 */

/** A running server. Use with `await using`: it is killed, and waited for, when the test ends. */
export interface SpawnedServer extends AsyncDisposable {
  readonly port: number;
  /** Every line it has written to standard output so far. */
  lines(): readonly string[];
}

/** How to start it, and how it says it listens. */
export interface ServerCommand {
  readonly program: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  /** Matched against its standard output so far; the first group is the port. */
  readonly port: RegExp;
  /** Run after the process has ended, when it is disposed of or failed to start. */
  readonly cleanUp?: () => Promise<void>;
}

/**
 * Starts `command.program` with Python's output unbuffered and no bytecode written beside the
 * scripts, and reads its standard output all along, so that it never blocks on a full pipe.
 *
 * @example
 * ```ts
 * await using server = await spawnServer({
 *   program: "python3",
 *   args: ["-m", "http.server", "--bind", "127.0.0.1", "0"],
 *   port: /Serving HTTP on 127\.0\.0\.1 port (\d+)/,
 * });
 * console.log(server.port); // 41234
 * ```
 *
 * @throws {Error} With what it wrote to standard error, if it ended or did not say its port
 * within 20 s.
 */
export async function spawnServer(command: ServerCommand): Promise<SpawnedServer> {
  const shown = [command.program, ...command.args].join(" ");
  const child = new Deno.Command(command.program, {
    args: [...command.args],
    ...(command.cwd === undefined ? {} : { cwd: command.cwd }),
    env: { PYTHONDONTWRITEBYTECODE: "1", PYTHONUNBUFFERED: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  let errors = "";
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (errors += chunk) }),
  );
  const port = Promise.withResolvers<number>();
  // What it wrote until it said its port.
  let seen: string | undefined = "";
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({
      write(chunk) {
        const text = (lines.pop() ?? "") + chunk;
        lines.push(...text.split("\n"));
        if (seen === undefined) return;
        seen += chunk;
        const said = command.port.exec(seen);
        if (said === null) return;
        port.resolve(Number(said[1]));
        seen = undefined;
      },
    }),
  );
  const stop = async () => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already ended.
    }
    await Promise.all([child.status, stdout.catch(() => {}), stderr.catch(() => {})]);
    await command.cleanUp?.();
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${shown} did not start: ${errors}`)), 20_000);
  });
  try {
    const ended = child.status.then(async (status) => {
      await Promise.all([stdout.catch(() => {}), stderr.catch(() => {})]);
      throw new Error(`${shown} ended with exit ${status.code}: ${errors}`);
    });
    return {
      port: await Promise.race([port.promise, late, ended]),
      lines: () => lines,
      [Symbol.asyncDispose]: stop,
    };
  } catch (error) {
    await stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
