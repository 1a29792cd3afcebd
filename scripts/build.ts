/**
 * Builds the release files: one `deno compile` binary per target, an archive of each, the
 * binary's SBOM (`service-ci-<version>.cdx.json`, see scripts/sbom.ts) and `SHA256SUMS` of
 * them all. Run it with `deno task compile`; `--help` lists the options.
 *
 * The permissions are deno.json's default permission set (`-P`) and, with `--quiet`, the log
 * level (see {@linkcode RUNTIME_FLAGS}); nothing else is baked into the binary: no certificate,
 * no CA store, no environment. The version reaches the binary
 * because `src/config/version.ts` imports deno.json.
 *
 * `.tar.gz` archives are written by `tar -czf`. `.zip` archives (Windows) are written by the
 * small deflate-based writer below, so a build needs no `zip` program on any OS.
 */

import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { crc32, deflateRawSync } from "node:zlib";
import {
  bakeDefaultBaseUrl,
  checkDefaultBaseUrl,
  DEFAULT_BASE_URL_MODULE,
  type RequestedDefaultBaseUrl,
  requestedDefaultBaseUrl,
} from "./default_base_url.ts";
import { permissionFlags } from "./permissions.ts";
import { sbomName, sbomOfEntry } from "./sbom.ts";

/**
 * Every target a release is built for, in `deno compile --target` spelling. This is the one
 * list: scripts/install.sh, scripts/action.sh and the release workflow are checked against it
 * (tests/ship/install_test.ts, tests/ship/action_test.ts, tests/ship/workflows_test.ts).
 */
export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
  // Accepted by `deno compile --target` since Deno 2.9.3 (denoland/deno#36004).
  "aarch64-pc-windows-msvc",
] as const;

/** One of {@linkcode TARGETS}. */
export type Target = typeof TARGETS[number];

/**
 * The targets a `--target` option (repeatable) names, in order and once each; all of
 * {@linkcode TARGETS} when it was not given.
 *
 * @example
 * ```ts
 * parseTargets(["aarch64-apple-darwin", "aarch64-apple-darwin"]); // ["aarch64-apple-darwin"]
 * ```
 *
 * @throws {TypeError} Naming `--target` and the valid targets.
 */
export function parseTargets(given: readonly string[] | undefined): Target[] {
  const targets: Target[] = [];
  for (const target of given ?? TARGETS) {
    if (!(TARGETS as readonly string[]).includes(target)) {
      throw new TypeError(
        `--target must be one of ${TARGETS.join(", ")} (got ${JSON.stringify(target)})`,
      );
    }
    if (!targets.includes(target as Target)) targets.push(target as Target);
  }
  return targets;
}

/** What {@linkcode compileArgs} needs besides the target. */
export interface CompileOptions {
  /** The program's entry module, e.g. `src/main.ts`. */
  readonly entry: string;
  /** The directory that receives `<target>/service-ci`, e.g. `dist`. */
  readonly outDir: string;
  /**
   * `false` passes `--no-check`: for the tests of this script only, which compile a stub entry
   * point. A release build keeps `deno compile`'s type check (the default, `true`).
   */
  readonly check?: boolean;
}

/** The two values of deno.json a build reads. */
export interface BuildConfig {
  /** `version`: the release's version, e.g. `1.0.0`. */
  readonly version: string;
  /** The default permission set, spelled as the `--allow-*` flags it grants. */
  readonly permissions: readonly string[];
}

/** One file of a `.zip` archive. */
export interface ZipEntry {
  /** The name inside the archive (no directories are written). */
  readonly name: string;
  /** The file's bytes. */
  readonly data: Uint8Array;
  /** The time recorded for the file. */
  readonly modified: Date;
}

// Signs, in the error part of `deno compile`'s stderr, that the base runtime could not be fetched.
const RUNTIME_DOWNLOAD_FAILURE = /dl\.deno\.land|Failed downloading|error sending request|denort/i;
// deno-lint-ignore no-control-regex
const ANSI_ESCAPE = /\x1b\[[0-9;]*m/g;
const ZIP_LIMIT = 0xffff_ffff;
const USAGE = `Usage: deno task compile [--target <target>]... [--out <dir>] [--dry-run]
                          [--no-check]

Builds service-ci with deno compile, archives each binary, writes the binary's SBOM
(CycloneDX JSON) and SHA256SUMS.

Options:
  --target <target>  build only this target (repeatable; default: all)
                     ${TARGETS.join("\n                     ")}
  --out <dir>        where to write <target>/service-ci, the archives, the SBOM and SHA256SUMS
                     (default: dist)
  --default-base-url <url>
                     the service address the binaries use when no --base-url or
                     SERVICE_BASE_URL is given (default: $SERVICE_DEFAULT_BASE_URL;
                     none when both are empty); checked by the --base-url rules
  --dry-run          print the commands, run nothing
  --no-check         compile without type-checking (for the tests of this script only: a
                     release build keeps the check)
  -h, --help         print this help`;

/**
 * Reads the version and the default permission set from deno.json's text. Throws a `TypeError`
 * naming the key at fault when one is missing or malformed.
 *
 * @example
 * ```ts
 * readBuildConfig('{"version": "1.0.0", "permissions": {"default": {"net": true}}}');
 * // { version: "1.0.0", permissions: ["--allow-net"] }
 * ```
 */
export function readBuildConfig(denoJson: string): BuildConfig {
  const config: unknown = JSON.parse(denoJson);
  if (typeof config !== "object" || config === null) {
    throw new TypeError("deno.json must hold a JSON object");
  }
  const { version } = config as Record<string, unknown>;
  if (typeof version !== "string" || version === "") {
    throw new TypeError(`deno.json "version" must be a non-empty string (got ${version})`);
  }
  return { version, permissions: permissionFlags(denoJson) };
}

/**
 * The binary's file name for a target: `service-ci.exe` on Windows, `service-ci` elsewhere.
 *
 * @example
 * ```ts
 * binaryName("x86_64-pc-windows-msvc"); // "service-ci.exe"
 * ```
 */
export function binaryName(target: Target): string {
  return target.includes("windows") ? "service-ci.exe" : "service-ci";
}

/**
 * Where the binary for a target is written: `<outDir>/<target>/service-ci[.exe]`, always with
 * `/` separators (Windows accepts them too).
 *
 * @example
 * ```ts
 * binaryPath("aarch64-apple-darwin", "dist"); // "dist/aarch64-apple-darwin/service-ci"
 * ```
 */
export function binaryPath(target: Target, outDir: string): string {
  return `${outDir.replace(/[\\/]+$/, "")}/${target}/${binaryName(target)}`;
}

/**
 * The flags a compiled binary runs with, which {@linkcode compileArgs} bakes in: deno.json's
 * default permission set (`-P`, the one source of the permissions), `--no-prompt`, and
 * `--quiet`. `deno compile` stores the log level in the binary, which starts its logger with it
 * and resolves the `--allow-run` names at every start; without `--quiet` a binary on a machine
 * without `buildkite-agent` prints "Info Failed to resolve 'buildkite-agent' for allow-run"
 * into the user's CI log each run. (Deno's source, github.com/denoland/deno:
 * `cli/lib/standalone/binary.rs` `Metadata.log_level`, `cli/rt/lib.rs` `init_logging`,
 * `runtime/permissions/lib.rs` `resolve_allow_run`.) tests/ship/build_test.ts runs `src/main.ts`
 * under `deno run` with exactly these flags and expects a silent stderr.
 *
 * @example
 * ```ts
 * RUNTIME_FLAGS; // ["-P", "--no-prompt", "--quiet"]
 * ```
 */
export const RUNTIME_FLAGS: readonly string[] = ["-P", "--no-prompt", "--quiet"];

/**
 * The arguments after `deno` that compile the program for one target: the
 * {@linkcode RUNTIME_FLAGS}, the target and the output path. Nothing else is granted or baked
 * in (no `-A`, no certificate, no `.env`).
 *
 * @example
 * ```ts
 * compileArgs("x86_64-unknown-linux-gnu", { entry: "src/main.ts", outDir: "dist" });
 * // ["compile", "-P", "--no-prompt", "--quiet", "--target", "x86_64-unknown-linux-gnu",
 * //  "--output", "dist/x86_64-unknown-linux-gnu/service-ci", "src/main.ts"]
 * ```
 */
export function compileArgs(target: Target, options: CompileOptions): string[] {
  return [
    "compile",
    ...RUNTIME_FLAGS,
    ...(options.check === false ? ["--no-check"] : []),
    "--target",
    target,
    "--output",
    binaryPath(target, options.outDir),
    options.entry,
  ];
}

/**
 * The release archive's file name: `service-ci-<version>-<target>.tar.gz`, `.zip` on Windows.
 *
 * @example
 * ```ts
 * archiveName("1.0.0", "x86_64-pc-windows-msvc"); // "service-ci-1.0.0-x86_64-pc-windows-msvc.zip"
 * ```
 */
export function archiveName(version: string, target: Target): string {
  if (version === "" || /[\s\\/]/.test(version)) {
    throw new TypeError(
      `version must be non-empty, without spaces or slashes (got ${JSON.stringify(version)})`,
    );
  }
  return `service-ci-${version}-${target}${target.includes("windows") ? ".zip" : ".tar.gz"}`;
}

/**
 * One line of `SHA256SUMS` as `sha256sum` writes it (text mode): `<hex>  <file>`.
 *
 * @example
 * ```ts
 * sha256sumsLine("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "a.tar.gz");
 * // "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  a.tar.gz"
 * ```
 */
export function sha256sumsLine(hex: string, fileName: string): string {
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new TypeError(`hex must be 64 lowercase hex digits (got ${JSON.stringify(hex)})`);
  }
  if (fileName === "" || /[\n\r\\/]/.test(fileName)) {
    throw new TypeError(
      `fileName must be a bare file name, without line breaks or slashes (got ${
        JSON.stringify(fileName)
      })`,
    );
  }
  return `${hex}  ${fileName}`;
}

/**
 * Whether `deno compile` failed because it could not download its base runtime (`denort`),
 * judged from the error part of its stderr (the progress lines before it name the download
 * host even when the download works).
 *
 * @example
 * ```ts
 * isRuntimeDownloadFailure("error: ... error sending request for url (https://dl.deno.land/...)"); // true
 * ```
 */
export function isRuntimeDownloadFailure(stderr: string): boolean {
  const text = stderr.replace(ANSI_ESCAPE, "");
  const errorAt = text.search(/^error\b/im);
  return RUNTIME_DOWNLOAD_FAILURE.test(errorAt === -1 ? text : text.slice(errorAt));
}

/**
 * Writes a `.zip` archive holding the given files at its root, each deflated (or stored when
 * deflating does not make it smaller). Throws a `RangeError` for files of 4 GiB or more,
 * which would need ZIP64.
 *
 * @example
 * ```ts
 * const bytes = zipArchive([
 *   { name: "hello.txt", data: new TextEncoder().encode("hi"), modified: new Date() },
 * ]);
 * ```
 */
export function zipArchive(entries: readonly ZipEntry[]): Uint8Array {
  const locals: Uint8Array[] = [];
  const centrals: Uint8Array[] = [];
  let offset = 0;
  for (const entry of entries) {
    if (entry.data.length >= ZIP_LIMIT) {
      throw new RangeError(`${entry.name} is too large for a zip archive without ZIP64`);
    }
    const name = new TextEncoder().encode(entry.name);
    const deflated = deflateRawSync(entry.data);
    const stored = deflated.length >= entry.data.length;
    const body = stored ? entry.data : new Uint8Array(deflated);
    const fields = {
      method: stored ? 0 : 8,
      ..._dosDateTime(entry.modified),
      crc: crc32(entry.data),
      compressedSize: body.length,
      size: entry.data.length,
    };
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true);
    _writeCommonFields(local, 4, fields);
    local.setUint16(26, name.length, true);
    locals.push(new Uint8Array(local.buffer), name, body);

    const central = new DataView(new ArrayBuffer(46));
    central.setUint32(0, 0x02014b50, true);
    central.setUint16(4, 20, true); // made by: version 2.0
    _writeCommonFields(central, 6, fields);
    central.setUint16(28, name.length, true);
    central.setUint32(42, offset, true);
    centrals.push(new Uint8Array(central.buffer), name);
    offset += 30 + name.length + body.length;
  }
  const centralSize = centrals.reduce((sum, part) => sum + part.length, 0);
  if (offset + centralSize >= ZIP_LIMIT) {
    throw new RangeError("the files are too large for a zip archive without ZIP64");
  }
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, entries.length, true);
  end.setUint16(10, entries.length, true);
  end.setUint32(12, centralSize, true);
  end.setUint32(16, offset, true);
  return _concat([...locals, ...centrals, new Uint8Array(end.buffer)]);
}

interface _ZipFields {
  readonly method: number;
  readonly time: number;
  readonly date: number;
  readonly crc: number;
  readonly compressedSize: number;
  readonly size: number;
}

// The fields the local header and the central directory share, from "version needed" on.
function _writeCommonFields(view: DataView, at: number, fields: _ZipFields): void {
  view.setUint16(at, 20, true); // version needed: 2.0 (deflate)
  view.setUint16(at + 2, 0x0800, true); // names are UTF-8
  view.setUint16(at + 4, fields.method, true);
  view.setUint16(at + 6, fields.time, true);
  view.setUint16(at + 8, fields.date, true);
  view.setUint32(at + 10, fields.crc, true);
  view.setUint32(at + 14, fields.compressedSize, true);
  view.setUint32(at + 18, fields.size, true);
}

// MS-DOS date and time (UTC, two-second resolution, years 1980–2107).
function _dosDateTime(when: Date): { time: number; date: number } {
  const year = Math.min(Math.max(when.getUTCFullYear(), 1980), 2107);
  return {
    time: (when.getUTCHours() << 11) | (when.getUTCMinutes() << 5) | (when.getUTCSeconds() >> 1),
    date: ((year - 1980) << 9) | ((when.getUTCMonth() + 1) << 5) | when.getUTCDate(),
  };
}

function _concat(parts: readonly Uint8Array[]): Uint8Array {
  const result = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    result.set(part, at);
    at += part.length;
  }
  return result;
}

function _shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

async function _sha256Hex(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

async function _exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

interface _Options {
  readonly targets: readonly Target[];
  readonly out: string | undefined;
  readonly dryRun: boolean;
  readonly check: boolean;
  readonly help: boolean;
  readonly defaultBaseUrl: RequestedDefaultBaseUrl | undefined;
}

function _parseOptions(args: readonly string[]): _Options {
  const { values } = parseArgs({
    args: [...args],
    options: {
      target: { type: "string", multiple: true },
      out: { type: "string" },
      "dry-run": { type: "boolean" },
      "no-check": { type: "boolean" },
      "default-base-url": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: false,
  });
  const targets = parseTargets(values.target);
  if (values.out === "") throw new TypeError('--out must be a directory path (got "")');
  return {
    targets,
    out: values.out,
    dryRun: values["dry-run"] ?? false,
    check: !(values["no-check"] ?? false),
    help: values.help ?? false,
    // The variable is read where it is granted (deno task compile); the image build passes the
    // flag instead.
    defaultBaseUrl: requestedDefaultBaseUrl(
      { name: "--default-base-url", value: values["default-base-url"] },
      (name) =>
        Deno.permissions.querySync({ name: "env", variable: name }).state === "granted"
          ? Deno.env.get(name)
          : undefined,
    ),
  };
}

// Runs a command in the repository; returns its exit code and what it wrote to stderr.
async function _run(
  command: string,
  args: readonly string[],
  cwd: string,
): Promise<{ code: number; stderr: string }> {
  try {
    const output = await new Deno.Command(command, {
      args: [...args],
      cwd,
      stdin: "null",
      stdout: "inherit",
      stderr: "piped",
    }).output();
    return { code: output.code, stderr: new TextDecoder().decode(output.stderr) };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new Error(`${command} is needed for the build and was not found on PATH`);
    }
    throw error;
  }
}

async function _build(options: _Options, root: string): Promise<number> {
  const denoJson = await Deno.readTextFile(resolve(root, "deno.json"));
  const config = readBuildConfig(denoJson);
  // An invalid address fails the build here, before anything is compiled.
  const defaultBaseUrl = options.defaultBaseUrl === undefined
    ? undefined
    : checkDefaultBaseUrl(options.defaultBaseUrl.url, options.defaultBaseUrl.source);
  if (options.dryRun) {
    console.log(
      defaultBaseUrl === undefined
        ? `# no built-in service address (--default-base-url and SERVICE_DEFAULT_BASE_URL are empty)`
        : `(built-in) set DEFAULT_BASE_URL = ${
          JSON.stringify(defaultBaseUrl)
        } in ${DEFAULT_BASE_URL_MODULE}`,
    );
    return await _compileAll(options, root, config, denoJson);
  }
  const restore = defaultBaseUrl === undefined
    ? undefined
    : await bakeDefaultBaseUrl(root, defaultBaseUrl);
  try {
    return await _compileAll(options, root, config, denoJson);
  } finally {
    await restore?.();
  }
}

async function _compileAll(
  options: _Options,
  root: string,
  config: BuildConfig,
  denoJson: string,
): Promise<number> {
  // Paths are relative to the repository, where every command runs; --out is taken from
  // where the script was called.
  const outDir = options.out === undefined ? "dist" : resolve(options.out);
  const extras: string[] = [];
  for (const file of ["README.md", "LICENSE"]) {
    if (await _exists(resolve(root, file))) extras.push(file);
  }
  const archives: string[] = [];

  for (const target of options.targets) {
    const args = compileArgs(target, {
      entry: "src/main.ts",
      outDir,
      check: options.check,
    });
    const binary = binaryPath(target, outDir);
    const targetDir = binary.slice(0, binary.lastIndexOf("/"));
    const archive = archiveName(config.version, target);
    const archivePath = `${outDir}/${archive}`;
    const members = [binaryName(target), ...extras];
    archives.push(archive);

    if (options.dryRun) {
      console.log(["deno", ...args].map(_shellQuote).join(" "));
      for (const file of extras) console.log(`cp ${file} ${_shellQuote(`${targetDir}/${file}`)}`);
      console.log(
        archive.endsWith(".zip")
          ? `(built-in zip) ${_shellQuote(archivePath)} ${
            members.map((file) => _shellQuote(`${targetDir}/${file}`)).join(" ")
          }`
          : ["tar", "-czf", archivePath, "-C", targetDir, ...members].map(_shellQuote).join(" "),
      );
      continue;
    }

    const compiled = await _run(Deno.execPath(), args, root);
    if (compiled.code !== 0) {
      if (isRuntimeDownloadFailure(compiled.stderr)) {
        console.error(
          `build: cannot download the Deno base runtime for ${target} (no access to Deno's download host); set DENORT_BIN to a local denort binary or build on a machine with internet access`,
        );
      } else {
        console.error(compiled.stderr.trimEnd());
        console.error(`build: deno compile failed for ${target} (exit code ${compiled.code})`);
      }
      return 1;
    }
    if (compiled.stderr.trim() !== "") console.error(compiled.stderr.trimEnd());
    for (const file of extras) {
      await Deno.copyFile(resolve(root, file), resolve(root, targetDir, file));
    }

    if (archive.endsWith(".zip")) {
      const entries: ZipEntry[] = [];
      for (const file of members) {
        const path = resolve(root, targetDir, file);
        const modified = (await Deno.stat(path)).mtime ?? new Date();
        entries.push({ name: file, data: await Deno.readFile(path), modified });
      }
      await Deno.writeFile(resolve(root, archivePath), zipArchive(entries));
    } else {
      const tar = await _run("tar", ["-czf", archivePath, "-C", targetDir, ...members], root);
      if (tar.code !== 0) {
        console.error(`build: tar could not write ${archivePath}: ${tar.stderr.trim()}`);
        return 1;
      }
    }
    console.error(`build: wrote ${archivePath}`);
  }

  // One SBOM for every target: the modules are the same, and so is the runtime's version.
  const sbom = sbomName(config.version);
  const sbomPath = `${outDir}/${sbom}`;
  const sums = `${outDir}/SHA256SUMS`;
  if (options.dryRun) {
    console.log(`(built-in sbom) deno info --json src/main.ts > ${_shellQuote(sbomPath)}`);
    console.log(
      `(built-in sha256) ${[...archives, sbom].map(_shellQuote).join(" ")} > ${_shellQuote(sums)}`,
    );
    return 0;
  }
  const license = (JSON.parse(denoJson) as { license?: unknown }).license;
  const document = await sbomOfEntry("src/main.ts", {
    root,
    version: config.version,
    ...(typeof license === "string" ? { license } : {}),
  });
  await Deno.writeTextFile(resolve(root, sbomPath), `${JSON.stringify(document, null, 2)}\n`);
  console.error(`build: wrote ${sbomPath}`);

  const lines: string[] = [];
  for (const archive of [...archives, sbom].toSorted()) {
    lines.push(sha256sumsLine(await _sha256Hex(resolve(root, outDir, archive)), archive));
  }
  await Deno.writeTextFile(resolve(root, sums), `${lines.join("\n")}\n`);
  console.error(`build: wrote ${sums}`);
  return 0;
}

/**
 * Runs the build with the given command-line arguments and returns the exit code:
 * 0 built, 1 the build failed, 2 usage error.
 *
 * @example
 * ```ts
 * const code = await main(["--target", "x86_64-unknown-linux-gnu", "--dry-run"]);
 * ```
 */
export async function main(args: readonly string[]): Promise<number> {
  let options: _Options;
  try {
    options = _parseOptions(args);
  } catch (error) {
    console.error(`build: ${error instanceof Error ? error.message : String(error)}`);
    console.error("run `deno task compile --help` for the options");
    return 2;
  }
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  try {
    return await _build(options, fileURLToPath(new URL("..", import.meta.url)));
  } catch (error) {
    console.error(`build: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
