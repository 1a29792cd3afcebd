#!/usr/bin/env node
// The `service-ci` command of the npm package: runs the release binary that this platform's
// package (one of this package's optionalDependencies, installed by npm only where its os, cpu
// and libc match) holds, and ends the way the binary ended. Plain CommonJS with no dependencies,
// so it runs on any supported Node.js as it is. How it behaves is described in docs/npm.md.
"use strict";

const { spawn } = require("node:child_process");
const { constants } = require("node:os");

// Every platform package is named <PREFIX><process.platform>-<process.arch>.
const PREFIX = "@service-ci/cli-";
// service-ci's own code for "nothing was sent: fix the setup" (usage or configuration error).
const EXIT_SETUP = 2;
const FORWARDED = ["SIGINT", "SIGTERM"];

function fail(message) {
  process.stderr.write(`service-ci: ${message}\n`);
  process.exit(EXIT_SETUP);
}

// Whether this Linux runs musl (Alpine), for which no package is built: the report names the
// glibc version only where glibc is loaded.
function isMusl() {
  if (process.platform !== "linux") return false;
  const header = process.report && process.report.getReport().header;
  return !!header && !header.glibcVersionRuntime;
}

// The line for a machine no package is built for, naming those that are.
function unsupported(key, supported) {
  return fail(
    `no service-ci build for ${key}${isMusl() ? " with musl libc" : ""}; supported: ${
      supported.map((name) => name.startsWith("linux-") ? `${name} (glibc)` : name).join(", ")
    }`,
  );
}

function main() {
  const key = `${process.platform}-${process.arch}`;
  const names = Object.keys(require("./package.json").optionalDependencies || {});
  const supported = names.filter((name) => name.startsWith(PREFIX)).map((name) =>
    name.slice(PREFIX.length)
  );
  if (!supported.includes(key)) return unsupported(key, supported);
  let binary;
  try {
    binary = require.resolve(
      `${PREFIX}${key}/bin/service-ci${process.platform === "win32" ? ".exe" : ""}`,
    );
  } catch {
    // npm 9.4+ leaves out the glibc package on musl (its "libc"); elsewhere it was omitted.
    if (isMusl()) return unsupported(key, supported);
    return fail(
      `${PREFIX}${key} is not installed (npm leaves optional dependencies out with --omit=optional or --no-optional); reinstall service-ci with them`,
    );
  }

  const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
  // The binary stops cleanly on SIGINT and SIGTERM (exit 130, 143); a signal sent to this
  // process alone (a CI runner cancelling the job) must reach it too. On Windows Ctrl-C reaches
  // every process of the console, the binary included, and child.kill() would end it at once
  // instead: there the launcher only keeps running until the binary has stopped.
  const forward = process.platform === "win32" ? () => {} : (signal) => child.kill(signal);
  for (const signal of FORWARDED) process.on(signal, forward);
  child.on("error", (error) => {
    // An older npm installs the glibc package on musl too; its binary cannot start there.
    if (isMusl()) unsupported(key, supported);
    fail(`cannot run ${binary}: ${error.message}`);
  });
  child.on("exit", (code, signal) => {
    for (const name of FORWARDED) process.removeListener(name, forward);
    if (signal === null) process.exit(code === null ? EXIT_SETUP : code);
    // End by the same signal, so the caller sees what the binary saw; where Node.js does not
    // die of it (SIGPIPE is ignored, SIGUSR1 starts the inspector), exit as a shell reports it.
    process.kill(process.pid, signal);
    process.exit(128 + (constants.signals[signal] || 0));
  });
}

main();
