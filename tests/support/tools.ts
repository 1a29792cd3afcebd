/**
 * Finds programs on PATH, and registers tests that need them: on a machine without one such a
 * test is ignored, saying in its name what is missing and how to install it; in CI (CI=true) it
 * runs and fails, so a runner without the program cannot pass by skipping.
 */

import { delimiter, join } from "node:path";

/** An operating system as `Deno.build.os` names it. */
export type Os = typeof Deno.build.os;

/**
 * Where `program` is on PATH, or `undefined`. On Windows `<program>.exe` is found too.
 *
 * @example
 * ```ts
 * const sh = which("sh") ?? "sh";
 * ```
 */
export function which(program: string): string | undefined {
  const names = Deno.build.os === "windows" ? [`${program}.exe`, program] : [program];
  for (const dir of (Deno.env.get("PATH") ?? "").split(delimiter)) {
    if (dir === "") continue;
    for (const name of names) {
      const path = join(dir, name);
      try {
        if (Deno.statSync(path).isFile) return path;
      } catch {
        // not in this directory
      }
    }
  }
  return undefined;
}

/**
 * Whether `program` is on PATH.
 *
 * @example
 * ```ts
 * const checker = onPath("sha256sum") ? "sha256sum" : "shasum";
 * ```
 */
export function onPath(program: string): boolean {
  return which(program) !== undefined;
}

/** A program a test needs: one name, or names of which any one will do (`["curl", "wget"]`). */
export type Tool = string | readonly string[];

/** Options of {@linkcode needsTools} and {@linkcode toolTest}. */
export interface ToolOptions {
  /** The programs the test runs. */
  readonly tools: readonly Tool[];
  /** The only operating systems the test runs on; default every one. */
  readonly onlyOn?: readonly Os[];
  /** Operating systems the test does not run on; default none. */
  readonly notOn?: readonly Os[];
}

/** What {@linkcode needsTools} found: the `Deno.test` fields that depend on the machine. */
export interface ToolNeeds {
  /** The tools not on PATH, each as `a` or `a or b`. */
  readonly missing: readonly string[];
  /** For `Deno.test`'s `ignore`: another OS, or a missing tool outside CI. */
  readonly ignore: boolean;
  /**
   * For the end of the test's name: where a missing tool is why the test is ignored, what is
   * missing and how to install it, as ` (skipped: xmllint not found; apt-get install
   * libxml2-utils)`; otherwise empty.
   */
  readonly nameSuffix: string;
  /** Throws, naming what is missing, where a tool is missing (a test that runs anyway in CI). */
  assertFound(): void;
}

// The Debian/Ubuntu package of each program whose package has another name.
const _COREUTILS = "sha256sum od date mktemp uname cat rm sleep tr cut mkdir cp chmod mv".split(
  " ",
);
const _APT_PACKAGES: Readonly<Record<string, string>> = {
  xmllint: "libxml2-utils",
  sh: "dash",
  awk: "mawk",
  ...Object.fromEntries(_COREUTILS.map((program) => [program, "coreutils"])),
};

function _installHint(missing: readonly (readonly string[])[]): string {
  const packages = new Set(missing.map(([first]) => _APT_PACKAGES[first!] ?? first!));
  return `apt-get install ${[...packages].join(" ")}`;
}

/**
 * Looks up the programs a test needs, once, when the test is registered.
 *
 * @example
 * ```ts
 * const needs = needsTools({ tools: ["sh", ["curl", "wget"]], notOn: ["windows"] });
 * Deno.test({ name: `install.sh runs${needs.nameSuffix}`, ignore: needs.ignore, fn: () => {
 *   needs.assertFound();
 * } });
 * ```
 */
export function needsTools(options: ToolOptions): ToolNeeds {
  const missingTools = options.tools
    .map((tool): readonly string[] => typeof tool === "string" ? [tool] : tool)
    .filter((choices) => !choices.some(onPath));
  const missing = missingTools.map((choices) => choices.join(" or "));
  const os = Deno.build.os;
  const otherOs = (options.onlyOn !== undefined && !options.onlyOn.includes(os)) ||
    (options.notOn?.includes(os) ?? false);
  const hint = missing.length > 0 ? _installHint(missingTools) : "";
  const absent = missing.length > 0 ? `${missing.join(", ")} not found` : null;
  const needs = needsPart(absent, hint, `this test needs ${missing.join(", ")} on PATH`);
  return {
    ...needs,
    missing,
    ignore: otherOs || needs.ignore,
    nameSuffix: otherOs ? "" : needs.nameSuffix,
  };
}

/**
 * What a test needs that is not a program on PATH (a Python module, an npm package, a tool at a
 * path of its own), by the same rule as {@linkcode needsTools}: ignored outside CI with one line in
 * the test's name, failing in CI. `absent` says what is missing, or is `null` when it is there;
 * `hint` how to get it; `needed`, for the failure, what the test needs (default `absent`).
 *
 * @example
 * ```ts
 * const flask = new Deno.Command("python3", { args: ["-c", "import flask"] }).outputSync().success;
 * const needs = needsPart(flask ? null : "python3 cannot import flask", "apt-get install python3-flask");
 * Deno.test({ name: `a gate on Flask${needs.nameSuffix}`, ignore: needs.ignore, fn: () => {
 *   needs.assertFound();
 * } });
 * ```
 */
export function needsPart(absent: string | null, hint: string, needed = absent): ToolNeeds {
  const skip = absent !== null && Deno.env.get("CI") !== "true";
  return {
    missing: absent === null ? [] : [absent],
    ignore: skip,
    nameSuffix: skip ? ` (skipped: ${absent}; ${hint})` : "",
    assertFound() {
      if (absent !== null) throw new Error(`CI=true but ${needed} (${hint})`);
    },
  };
}

/**
 * Registers a test that needs programs on PATH (see {@linkcode needsTools}).
 *
 * @example
 * ```ts
 * toolTest("action.yml passes yamllint", { tools: ["yamllint"], notOn: ["windows"] }, async () => {
 *   // run yamllint
 * });
 * ```
 */
export function toolTest(
  name: string,
  options: ToolOptions,
  fn: (t: Deno.TestContext) => void | Promise<void>,
): void {
  const needs = needsTools(options);
  Deno.test({
    name: `${name}${needs.nameSuffix}`,
    ignore: needs.ignore,
    fn: async (t) => {
      needs.assertFound();
      await fn(t);
    },
  });
}

/**
 * What `scripts/direct-api.sh` needs besides `sh`, as its header says (python3 and jq are optional).
 *
 * @example
 * ```ts
 * const needs = needsTools({ tools: ["sh", ...DIRECT_API_TOOLS], notOn: ["windows"] });
 * ```
 */
export const DIRECT_API_TOOLS: readonly string[] = [
  "curl",
  "awk",
  "sed",
  "tr",
  "od",
  "date",
  "mktemp",
  "uname",
  "rm",
  "sleep",
];

/** Which JSON reader `scripts/direct-api.sh` uses: python3, jq, or its own (neither on PATH). */
export type DirectApiReader = "python3" | "jq" | "own";

/**
 * A PATH of a temporary directory holding `sh`, {@linkcode DIRECT_API_TOOLS} and the program of
 * `reader` alone (never git; python3 as its real executable, not a version manager's shim), so
 * the script reads JSON with `reader`; removed when the test process ends. The tools must be on
 * PATH.
 *
 * @example
 * ```ts
 * const path = await directApiPath("own");
 * ```
 */
export function directApiPath(reader: DirectApiReader): Promise<string> {
  _paths[reader] ??= (async () => {
    const bin = await Deno.makeTempDir({ prefix: `direct-api-${reader}-` });
    const links = ["sh", ...DIRECT_API_TOOLS].map((tool) => [tool, which(tool)!]);
    if (reader === "jq") links.push(["jq", which("jq")!]);
    if (reader === "python3") {
      const output = await new Deno.Command("python3", {
        args: ["-c", "import sys; print(sys.executable)"],
        stdout: "piped",
      }).output();
      links.push(["python3", new TextDecoder().decode(output.stdout).trim()]);
    }
    for (const [name, target] of links) await Deno.symlink(target!, `${bin}/${name}`);
    globalThis.addEventListener("unload", () => Deno.removeSync(bin, { recursive: true }));
    return bin;
  })();
  return _paths[reader];
}
const _paths: Partial<Record<DirectApiReader, Promise<string>>> = {};

/** A script's virtual clock: see {@linkcode virtualClock}. */
export interface VirtualClock extends AsyncDisposable {
  /** A directory to put first on the script's PATH: its `date` and `sleep`. */
  readonly bin: string;
  /** The clock, in milliseconds since the epoch (for the fake services). */
  now(): number;
}

/**
 * Virtual time for a shell script: a directory holding a `date` that prints the clock's seconds
 * (it knows only `+%s`) and a `sleep` that moves the clock on instead of waiting, both awk
 * programs. A script with them first on its PATH runs its waits, backoffs and deadline at once,
 * and the same way however loaded the machine is; `now` gives the fake services the same clock.
 * It starts at the real time.
 *
 * @example
 * ```ts
 * await using clock = await virtualClock();
 * const env = { PATH: `${clock.bin}:${await directApiPath("own")}` };
 * ```
 */
export async function virtualClock(): Promise<VirtualClock> {
  const bin = await Deno.makeTempDir({ prefix: "direct-api-clock-" });
  const clock = `${bin}/clock`;
  await Deno.writeTextFile(clock, `${Date.now()}\n`);
  const program = (body: string) =>
    `#!${which("awk")} -f\nBEGIN {\n  getline t < "${clock}"\n${body}\n}\n`;
  await Deno.writeTextFile(
    `${bin}/date`,
    program(`  if (ARGV[1] != "+%s") exit 64\n  printf "%.0f\\n", int(t / 1000)`),
    { mode: 0o755 },
  );
  await Deno.writeTextFile(
    `${bin}/sleep`,
    program(
      `  if (ARGV[1] !~ /^[0-9]*\\.?[0-9]+$/) exit 1\n  printf "%.0f\\n", t + ARGV[1] * 1000 > "${clock}"`,
    ),
    { mode: 0o755 },
  );
  return {
    bin,
    // sleep rewrites the clock in place: a read between its truncation and its one write sees an
    // empty file, and reads again.
    now: () => {
      for (;;) {
        const time = Number(Deno.readTextFileSync(clock));
        if (time > 0) return time;
      }
    },
    [Symbol.asyncDispose]: () => Deno.remove(bin, { recursive: true }),
  };
}
