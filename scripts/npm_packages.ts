/**
 * Writes the npm packages of a release from the binaries of `deno task compile` (in `dist/`):
 * one package per platform, `@service-ci/cli-<os>-<cpu>`, holding that platform's binary with
 * `os`, `cpu` (and on Linux `libc`) set so npm installs only the one that runs; and the package
 * `service-ci`, whose `service-ci` command is `npm/launcher.cjs` and which lists the platform
 * packages as optionalDependencies. Every version is deno.json's. Run it with
 * `deno task npm-packages`; `--help` lists the options; docs/npm.md says how they are published.
 */

import { parseArgs } from "node:util";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  binaryName,
  binaryPath,
  parseTargets,
  readBuildConfig,
  type Target,
  TARGETS,
} from "./build.ts";

/** The name of the main package, and of the command it installs. */
export const MAIN_PACKAGE = "service-ci";

/** How npm names a target's platform: `process.platform`, `process.arch` and the C library. */
export interface NpmPlatform {
  /** For `os`: `linux`, `darwin` or `win32`. */
  readonly os: string;
  /** For `cpu`: `x64` or `arm64`. */
  readonly cpu: string;
  /** For `libc` (Linux only): the binaries of `deno compile` need glibc. */
  readonly libc?: string;
}

/** The npm platform of every target of {@linkcode TARGETS}. */
export const NPM_PLATFORMS: Readonly<Record<Target, NpmPlatform>> = {
  "x86_64-unknown-linux-gnu": { os: "linux", cpu: "x64", libc: "glibc" },
  "aarch64-unknown-linux-gnu": { os: "linux", cpu: "arm64", libc: "glibc" },
  "x86_64-apple-darwin": { os: "darwin", cpu: "x64" },
  "aarch64-apple-darwin": { os: "darwin", cpu: "arm64" },
  "x86_64-pc-windows-msvc": { os: "win32", cpu: "x64" },
  "aarch64-pc-windows-msvc": { os: "win32", cpu: "arm64" },
};

/** A `package.json` as this script writes it. */
export type Manifest = Readonly<Record<string, unknown>>;

/** What {@linkcode writeNpmPackages} needs. */
export interface WriteOptions {
  /** Where `deno task compile` wrote `<target>/service-ci[.exe]`. */
  readonly dist: string;
  /** The directory that receives one directory per package. */
  readonly out: string;
  /** deno.json's `version`. */
  readonly version: string;
  /** The targets to package; the main package lists exactly these. */
  readonly targets: readonly Target[];
  /** Files copied into every package when they exist, e.g. the repository's `LICENSE`. */
  readonly extraFiles?: readonly string[];
}

const REPOSITORY = "https://github.com/service-ci/service-ci";
const LAUNCHER = fileURLToPath(new URL("../npm/launcher.cjs", import.meta.url));
const COMMON = {
  license: "Apache-2.0",
  homepage: `${REPOSITORY}#readme`,
  // npm publish --provenance requires the repository of the workflow that publishes.
  repository: { type: "git", url: `git+${REPOSITORY}.git` },
  bugs: { url: `${REPOSITORY}/issues` },
};
const USAGE = `Usage: deno task npm-packages [--dist <dir>] [--out <dir>] [--target <target>]...

Writes the npm packages of the release from the binaries in <dist>/<target>/: one
@service-ci/cli-<os>-<cpu> package per target and the service-ci package, one directory each
under <out>, ready for npm publish (platform packages first). Every version is deno.json's.

Options:
  --dist <dir>       where deno task compile wrote the binaries (default: dist)
  --out <dir>        where to write the packages (default: <dist>/npm)
  --target <target>  package only this target (repeatable; default: all)
                     ${TARGETS.join("\n                     ")}
  -h, --help         print this help`;

/**
 * The npm name of a target's package: `@service-ci/cli-<os>-<cpu>`.
 *
 * @example
 * ```ts
 * platformPackageName("aarch64-apple-darwin"); // "@service-ci/cli-darwin-arm64"
 * ```
 */
export function platformPackageName(target: Target): string {
  const { os, cpu } = NPM_PLATFORMS[target];
  return `@service-ci/cli-${os}-${cpu}`;
}

/**
 * The directory a package is written to under `--out`: `service-ci` or `cli-<os>-<cpu>`.
 *
 * @example
 * ```ts
 * packageDirectory("x86_64-pc-windows-msvc"); // "cli-win32-x64"
 * packageDirectory(undefined); // "service-ci"
 * ```
 */
export function packageDirectory(target: Target | undefined): string {
  return target === undefined ? MAIN_PACKAGE : platformPackageName(target).split("/")[1]!;
}

/**
 * The `package.json` of a target's package: its binary in `bin/`, and `os`, `cpu` and `libc`
 * so npm installs it only where the binary runs. It has no `bin` field: the main package's
 * launcher runs the binary.
 *
 * @example
 * ```ts
 * platformManifest("x86_64-unknown-linux-gnu", "1.0.0").cpu; // ["x64"]
 * ```
 */
export function platformManifest(target: Target, version: string): Manifest {
  _checkVersion(version);
  const { os, cpu, libc } = NPM_PLATFORMS[target];
  return {
    name: platformPackageName(target),
    version,
    description: `The service-ci binary for ${os} ${cpu}${
      libc === undefined ? "" : ` (${libc})`
    }; install service-ci, which picks the right one.`,
    ...COMMON,
    os: [os],
    cpu: [cpu],
    ...(libc === undefined ? {} : { libc: [libc] }),
    files: [`bin/${binaryName(target)}`],
    // Yarn's Plug'n'Play must unpack it: a binary cannot run from inside a zip archive.
    preferUnplugged: true,
  };
}

/**
 * The `package.json` of the main package `service-ci`: the `service-ci` command is the
 * launcher, and every given target's package is an optional dependency of exactly `version`.
 *
 * @example
 * ```ts
 * mainManifest("1.0.0", ["aarch64-apple-darwin"]).optionalDependencies;
 * // { "@service-ci/cli-darwin-arm64": "1.0.0" }
 * ```
 */
export function mainManifest(version: string, targets: readonly Target[]): Manifest {
  _checkVersion(version);
  if (targets.length === 0) throw new RangeError("mainManifest() needs at least one target");
  return {
    name: MAIN_PACKAGE,
    version,
    description:
      "Turns an AI evaluation service's quality gate into a CI exit code (0 passed, 1 failed).",
    ...COMMON,
    keywords: ["ci", "quality-gate", "evaluation", "ai"],
    bin: { [MAIN_PACKAGE]: "launcher.cjs" },
    files: ["launcher.cjs"],
    engines: { node: ">=18" },
    optionalDependencies: Object.fromEntries(
      targets.map((target) => [platformPackageName(target), version]),
    ),
  };
}

/**
 * Writes the packages for `options.targets` under `options.out` (replacing earlier ones of the
 * same names) and returns their directories, platform packages first: the order to publish
 * them in. Throws a `TypeError` naming the binary when one is missing from `options.dist`.
 *
 * @example
 * ```ts
 * const dirs = await writeNpmPackages({
 *   dist: "dist",
 *   out: "dist/npm",
 *   version: "1.0.0",
 *   targets: ["x86_64-unknown-linux-gnu"],
 * });
 * // ["dist/npm/cli-linux-x64", "dist/npm/service-ci"]
 * ```
 */
export async function writeNpmPackages(options: WriteOptions): Promise<string[]> {
  for (const target of options.targets) {
    const binary = binaryPath(target, options.dist);
    if (!(await _isFile(binary))) {
      throw new TypeError(
        `no binary for ${target} at ${binary}: run deno task compile first, or package only the built targets with --target`,
      );
    }
  }
  const extras: string[] = [];
  for (const file of options.extraFiles ?? []) {
    if (await _isFile(file)) extras.push(file);
  }
  const written: string[] = [];
  for (const target of [...options.targets, undefined]) {
    const dir = join(options.out, packageDirectory(target));
    await Deno.remove(dir, { recursive: true }).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
    await Deno.mkdir(dir, { recursive: true });
    const manifest = target === undefined
      ? mainManifest(options.version, options.targets)
      : platformManifest(target, options.version);
    await Deno.writeTextFile(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    await Deno.writeTextFile(join(dir, "README.md"), _readme(manifest, target));
    for (const file of extras) await Deno.copyFile(file, join(dir, file.split(/[\\/]/).pop()!));
    if (target === undefined) {
      await Deno.copyFile(LAUNCHER, join(dir, "launcher.cjs"));
      await _makeExecutable(join(dir, "launcher.cjs"));
    } else {
      const binary = join(dir, "bin", binaryName(target));
      await Deno.mkdir(join(dir, "bin"));
      await Deno.copyFile(binaryPath(target, options.dist), binary);
      // npm pack keeps the executable bit, and the launcher runs the file as it is installed.
      await _makeExecutable(binary);
    }
    written.push(dir);
  }
  return written;
}

function _checkVersion(version: string): void {
  if (!/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.test(version)) {
    throw new TypeError(
      `version must be a semantic version such as 1.0.0, as npm requires (got ${
        JSON.stringify(version)
      })`,
    );
  }
}

function _readme(manifest: Manifest, target: Target | undefined): string {
  const docs = `${REPOSITORY}/blob/v${manifest.version}/docs/npm.md`;
  if (target !== undefined) {
    return `# ${manifest.name}\n\nThe service-ci ${manifest.version} binary for ${target}. ` +
      `Do not install it directly: install [service-ci](https://www.npmjs.com/package/service-ci), ` +
      `which depends on the package of every platform and runs the one npm installed ` +
      `([how](${docs})).\n`;
  }
  return `# service-ci\n\nTurns an AI evaluation service's quality gate into a CI exit code: ` +
    `0 passed, 1 failed, 2 usage error, 3 the gate could not be checked, 4 timeout.\n\n` +
    `\`\`\`sh\nSERVICE_API_KEY=… npx --yes service-ci@${manifest.version} --agent <agent-uuid>\n\`\`\`\n\n` +
    `The \`service-ci\` command runs the release binary of your platform, from the optional ` +
    `dependency npm installed for it. See [docs/npm.md](${docs}) and the ` +
    `[README](${REPOSITORY}#readme).\n`;
}

async function _isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

async function _makeExecutable(path: string): Promise<void> {
  if (Deno.build.os !== "windows") await Deno.chmod(path, 0o755);
}

interface _Options {
  readonly dist: string;
  readonly out: string;
  readonly targets: readonly Target[];
  readonly help: boolean;
}

function _parseOptions(args: readonly string[]): _Options {
  const { values } = parseArgs({
    args: [...args],
    options: {
      dist: { type: "string" },
      out: { type: "string" },
      target: { type: "string", multiple: true },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: false,
  });
  for (const name of ["dist", "out"] as const) {
    if (values[name] === "") throw new TypeError(`--${name} must be a directory path (got "")`);
  }
  const targets = parseTargets(values.target);
  const dist = resolve(values.dist ?? "dist");
  return {
    dist,
    out: values.out === undefined ? join(dist, "npm") : resolve(values.out),
    targets,
    help: values.help ?? false,
  };
}

/**
 * Writes the packages with the given command-line arguments and returns the exit code:
 * 0 written, 1 failed (a binary missing), 2 usage error.
 *
 * @example
 * ```ts
 * const code = await main(["--dist", "dist", "--target", "x86_64-unknown-linux-gnu"]);
 * ```
 */
export async function main(args: readonly string[]): Promise<number> {
  let options: _Options;
  try {
    options = _parseOptions(args);
  } catch (error) {
    console.error(`npm-packages: ${error instanceof Error ? error.message : String(error)}`);
    console.error("run `deno task npm-packages --help` for the options");
    return 2;
  }
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  try {
    const root = fileURLToPath(new URL("..", import.meta.url));
    const config = readBuildConfig(await Deno.readTextFile(join(root, "deno.json")));
    const dirs = await writeNpmPackages({
      dist: options.dist,
      out: options.out,
      version: config.version,
      targets: options.targets,
      extraFiles: [join(root, "LICENSE")],
    });
    for (const dir of dirs) console.error(`npm-packages: wrote ${dir}`);
    return 0;
  } catch (error) {
    console.error(`npm-packages: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
