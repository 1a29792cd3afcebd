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
// The ways to run service-ci without this package, for a machine it has no binary for.
const ELSEWHERE = "the release binary (install.sh of the GitHub release), the container image " +
  "ghcr.io/service-ci/ci, or Deno (deno run jsr:@service-ci/service-ci)";

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

// The line for a machine no package is built for, naming those that are (this package's
// optionalDependencies, written from the release's target list) and the other ways to run it.
function unsupported(key, supported) {
  const { homepage } = require("./package.json");
  return fail(
    `no service-ci build on npm for ${key}${isMusl() ? " with musl libc" : ""}; supported: ${
      supported.map((name) => name.startsWith("linux-") ? `${name} (glibc)` : name).join(", ")
    }; instead use ${ELSEWHERE}${homepage ? `: ${homepage}` : ""}`,
  );
}

// The signals that stop the binary cleanly (it prints the runs it leaves going, exits 130 or 143)
// and what the launcher does with each. Elsewhere a signal may be sent to this process alone (a CI
// runner cancelling the job), so it is passed on; one that comes before the binary has started
// is passed on once it has. On Windows Ctrl-C and Ctrl-Break are console events that reach every
// process of the console, the binary included, and child.kill() would terminate the binary at
// once instead: there the launcher only holds them, so that it does not end before the binary has
// stopped, and then exits with the binary's code.
function forwarding() {
  if (process.platform === "win32") {
    return { signals: ["SIGINT", "SIGBREAK"], on: () => {}, started: () => {} };
  }
  let child;
  const early = [];
  return {
    // SIGHUP too: the binary stops on it as on SIGTERM, and Node.js would otherwise end the
    // launcher by it and leave the binary running without its reports.
    signals: ["SIGINT", "SIGTERM", "SIGHUP"],
    on: (signal) => child === undefined ? early.push(signal) : child.kill(signal),
    started: (started) => {
      child = started;
      for (const signal of early) child.kill(signal);
    },
  };
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

  // Listening before the binary starts: a signal right after, before this process had listened,
  // would end the launcher and leave the binary running.
  const forward = forwarding();
  for (const signal of forward.signals) process.on(signal, forward.on);
  // Inherited stdio keeps the binary on this console (libuv hides a console only when no stdio
  // is inherited), which is how Ctrl-C reaches it on Windows.
  const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
  forward.started(child);
  child.on("error", (error) => {
    // An older npm installs the glibc package on musl too; its binary cannot start there.
    if (isMusl()) unsupported(key, supported);
    fail(`cannot run ${binary}: ${error.message}`);
  });
  child.on("exit", (code, signal) => {
    for (const name of forward.signals) process.removeListener(name, forward.on);
    if (signal === null) process.exit(code === null ? EXIT_SETUP : code);
    // End by the same signal, so the caller sees what the binary saw; where Node.js does not
    // die of it (SIGPIPE is ignored, SIGUSR1 starts the inspector), exit as a shell reports it.
    process.kill(process.pid, signal);
    process.exit(128 + (constants.signals[signal] || 0));
  });
}

main();
