/**
 * `run()` with every effect faked, for tests: virtual time (no real waiting), an in-memory
 * service, in-memory report files with injected failures, and streams that can be closed.
 */

import type { ReportFile, RunEffects } from "../../src/effects.ts";
import { FakeTime } from "./fake_time.ts";

/** The agent every harness run uses. */
export const AGENT = "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10";
/** The API key every harness run uses. */
export const KEY = "sk_test_run_0123456789";

/** How the in-memory service answers reads of the run. */
export type Read = { status: string; passed?: unknown; extra?: Record<string, unknown> } | "hang";

/** A faked invocation, and what it did. */
export interface Harness {
  readonly effects: RunEffects;
  readonly files: Map<string, string>;
  readonly stdout: string[];
  readonly stderr: string[];
  readonly requests: string[];
  /** The programs run, as `runCommand` got them. */
  readonly commands: { program: string; args: string[]; stdin: string | undefined }[];
  readonly interrupt: AbortController;
  /** The virtual time every wait runs on. */
  readonly time: FakeTime;
}

/** What the faked service and effects do. */
export interface HarnessOptions {
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly reads?: readonly Read[];
  /** Paths whose open fails, and paths whose writes fail. */
  readonly failOpen?: readonly string[];
  /** Paths the up-front check refuses, with the problem it gives. */
  readonly badPaths?: Readonly<Record<string, string>>;
  readonly failWrite?: readonly string[];
  readonly stdoutClosed?: boolean;
  readonly stderrClosed?: boolean;
  /** Called on each request, after it is recorded. */
  readonly onRequest?: (method: string, harness: Harness) => void;
  readonly fetchThrows?: unknown;
  /** What `runCommand` resolves with; default `undefined` (not on PATH). */
  readonly commandExitCode?: number;
  /** The trigger's answer body; default a run `run_1` with a dashboard link. */
  readonly trigger?: Record<string, unknown>;
  /** The virtual time to run on; default a new one. Give it to fake servers that hang on it. */
  readonly time?: FakeTime;
}

/** A JSON answer of the fake service. */
export function serviceJson(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

/** Makes the effects of one faked invocation. */
export function harness(options: HarnessOptions = {}): Harness {
  const time = options.time ?? new FakeTime();
  const files = new Map<string, string>();
  const stdout: string[] = [];
  const stderr: string[] = [];
  const requests: string[] = [];
  const commands: { program: string; args: string[]; stdin: string | undefined }[] = [];
  const interrupt = new AbortController();
  const reads = [...(options.reads ?? [{ status: "completed", passed: true }])];
  const env: Record<string, string> = {
    SERVICE_API_KEY: KEY,
    SERVICE_BASE_URL: "https://service.example",
    ...options.env,
  };
  const service: typeof fetch = (input, init) => {
    const method = init?.method ?? "GET";
    requests.push(
      `${method} ${new URL(input instanceof Request ? input.url : input).pathname}`,
    );
    options.onRequest?.(method, harness);
    if (options.fetchThrows !== undefined) return Promise.reject(options.fetchThrows);
    if (method === "POST") {
      return Promise.resolve(
        serviceJson(
          201,
          options.trigger ?? { run_id: "run_1", url: "https://dash.example/r/1" },
        ),
      );
    }
    const read = reads.length > 1 ? reads.shift()! : reads[0]!;
    if (read === "hang") {
      return new Promise((_, reject) => {
        const signal = init?.signal;
        signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
    }
    // An answer about the run that was read, as the service's is.
    const path = new URL(input instanceof Request ? input.url : input).pathname;
    const runId = decodeURIComponent(path.split("/").pop()!);
    return Promise.resolve(serviceJson(200, {
      run_id: runId,
      ...read.extra,
      status: read.status,
      ...("passed" in read ? { results: { gate: { passed: read.passed } } } : {}),
    }));
  };
  const noProxy: typeof fetch = () => Promise.reject(new TypeError("no proxy here"));
  const harness: Harness = {
    files,
    stdout,
    stderr,
    requests,
    commands,
    interrupt,
    time,
    effects: {
      args: options.args ?? ["--agent", AGENT],
      env: { get: (name) => env[name] },
      files: {
        readTextFile: () => Promise.reject(new Deno.errors.NotFound("no such file")),
        checkReportPath: (path, _append) => Promise.resolve(options.badPaths?.[path] ?? null),
        openReportFile: (path, append) => {
          if (options.failOpen?.includes(path)) {
            return Promise.reject(new Error("Is a directory (os error 21)"));
          }
          const start = append ? files.get(path) ?? "" : "";
          files.set(path, start);
          const file: ReportFile = {
            write: (text) => {
              if (options.failWrite?.includes(path)) {
                return Promise.reject(new Error("No space left on device (os error 28)"));
              }
              files.set(path, files.get(path)! + text);
              return Promise.resolve();
            },
            rewind: () => {
              files.set(path, start);
              return Promise.resolve();
            },
            close: () => Promise.resolve(),
            // As the real one: an appended file goes back to what it held, a created one goes.
            discard: () => {
              if (append) files.set(path, start);
              else files.delete(path);
              return Promise.resolve();
            },
          };
          return Promise.resolve(file);
        },
      },
      console: {
        stdout: (text) => {
          if (options.stdoutClosed) throw new Deno.errors.BrokenPipe("Broken pipe (os error 32)");
          stdout.push(text);
        },
        stderr: (text) => {
          if (options.stderrClosed) throw new Deno.errors.BrokenPipe("Broken pipe (os error 32)");
          stderr.push(text);
        },
        stderrIsTerminal: false,
      },
      interrupt: interrupt.signal,
      // The service's fetch is the one made with its certificates (run.ts); the forges have none.
      http: { makeFetch: (setup) => "caCerts" in setup ? service : noProxy, timeout: time.timeout },
      clock: {
        monotonic: time.monotonic,
        now: () => Date.UTC(2026, 10, 23),
        sleep: time.sleep,
        timeout: time.timeout,
      },
      programs: {
        git: () => Promise.resolve(undefined),
        runCommand: (program, args, { stdin }) => {
          commands.push({ program, args: [...args], stdin });
          const code = options.commandExitCode;
          return Promise.resolve(
            code === undefined
              ? { kind: "not-run", reason: "not on PATH" }
              : { kind: "exited", code },
          );
        },
      },
      random: () => 0.5,
      uuid: () => "00000000-0000-4000-8000-000000000000",
      cwd: "/work",
    },
  };
  return harness;
}
