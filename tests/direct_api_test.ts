/**
 * What tests/contract_table_test.ts does not show of scripts/direct-api.sh: its three JSON
 * readers (python3, jq, its own in awk) read the same documents the same way, duplicates on the
 * verdict's path included; the key is in no process's arguments; its own failures never exit 1;
 * and it stays short, shellcheck-clean and in step with src/service/verdict.ts and deno.json.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCommand } from "./support/command.ts";
import { startProxy } from "./support/proxy.ts";
import { AGENTS, defaultAgents, KEYS, startFakeService } from "./support/fake_service.ts";
import { assertShellcheckPasses } from "./support/shellcheck.ts";
import { ENDED_WITHOUT_VERDICT, FINISHED, IN_PROGRESS } from "../src/service/verdict.ts";
import {
  DIRECT_API_TOOLS,
  directApiPath,
  type DirectApiReader,
  needsTools,
  toolTest,
  type VirtualClock,
  virtualClock,
} from "./support/tools.ts";

const SCRIPT = fileURLToPath(new URL("../scripts/direct-api.sh", import.meta.url));
const SCRIPT_TEXT = Deno.readTextFileSync(SCRIPT);
const DENO_JSON = JSON.parse(
  Deno.readTextFileSync(new URL("../deno.json", import.meta.url)),
) as { version: string };
const READERS: readonly DirectApiReader[] = ["own", "python3", "jq"];

/** The program the script holds in `name='…'` (its programs hold no single quote). */
function _program(name: string): string {
  const found = new RegExp(`^${name}='([^']*)'$`, "m").exec(SCRIPT_TEXT);
  assert.ok(found, `${name} is in the script`);
  return found[1]!;
}

Deno.test("direct-api.sh stays short enough to audit: at most 400 lines", () => {
  assert.ok(SCRIPT_TEXT.split("\n").length - 1 <= 400);
});

Deno.test("direct-api.sh declares the version of deno.json", () => {
  assert.match(
    SCRIPT_TEXT,
    new RegExp(`^VERSION=${DENO_JSON.version.replaceAll(".", "\\.")}$`, "m"),
  );
});

Deno.test("direct-api.sh's status lists are src/service/verdict.ts's", () => {
  const body = /\nstate\(\) \{\n([\s\S]*?)\n\}\n/.exec(SCRIPT_TEXT)?.[1];
  assert.ok(body, "state() is in the script");
  const lists = new Map<string, string[]>();
  // `    queued | pending | …) state=going ;;`, the state on the same line or the next.
  for (const [, statuses, state] of body.matchAll(/^ {4}([a-z_ |]+)\)\s*state=(\w+)/gm)) {
    lists.set(state!, statuses!.split("|").map((status) => status.trim()));
  }
  const sorted = (statuses: Iterable<string>) => [...statuses].sort();
  assert.deepEqual(sorted(lists.get("going") ?? []), sorted(IN_PROGRESS));
  assert.deepEqual(sorted(lists.get("ended") ?? []), sorted(ENDED_WITHOUT_VERDICT));
  assert.deepEqual(sorted(lists.get("finished") ?? []), sorted(FINISHED));
});

toolTest(
  "direct-api.sh passes shellcheck as POSIX sh",
  { tools: ["shellcheck"], notOn: ["windows"] },
  async () => {
    await assertShellcheckPasses([SCRIPT]);
  },
);

// ---- the readers -------------------------------------------------------------------------------

const PATHS = /^paths='([^']*)'$/m.exec(SCRIPT_TEXT)?.[1] ?? "";

/**
 * Documents every reader must read alike: `twice` where a member on the verdict's path is given
 * twice. jq and python3 also accept some text that is not JSON (NaN, `01`, a raw tab in a
 * string); the corpus holds only what the JSON grammar decides.
 */
const CORPUS: ReadonlyArray<{ readonly text: string; readonly twice?: boolean }> = [
  { text: '{"run_id":"r1","status":"queued","agent_id":"AB-12"}' },
  { text: '{"status":"completed","results":{"gate":{"passed":false,"passed":true}}}', twice: true },
  { text: '{"results":{"gate":{"passed":false,"pass\\u0065d":true}}}', twice: true },
  { text: '{"results":{"gate":{"passed":false},"gate":{"passed":true}}}', twice: true },
  { text: '{"results":{"gate":{"passed":true}},"results":7}', twice: true },
  { text: '{"status":"a","st\\u0061tus":"b"}', twice: true },
  { text: '{"run_id":"a","run_id":"b"}', twice: true },
  { text: '{"agent_id":"a","agent_id":"a"}', twice: true },
  // Repeated off the verdict's path: the last one counts, as in every reader.
  {
    text: '{"x":{"a":1,"a":2},"results":{"gate":{"passed":true,"rule":1,"rule":2}},"message":"m"}',
  },
  { text: '{"gate":{"passed":true},"gate":{"passed":false},"results":{"passed":true}}' },
  { text: '{"results":[{"gate":{"passed":true}}],"status":"Done","url":null}' },
  { text: '{"results":{"gate":{"passed":"true"}},"status":15,"run_id":7}' },
  { text: '{"results":{"gate":null},"status":true,"detail":"d","message":"m","error":"e"}' },
  {
    text:
      '{"status":"In-Progress","url":"http://x/\\"y\\"\\\\z","message":"caf\\u00e9 \\u2603 ok"}',
  },
  { text: '{"error":{"code":"Quality_Gate_Missing","message":"no gate"}}' },
  { text: ' {\n "status" : "ok" ,\t"results" : { "gate" : { "passed" :true } } }\r\n' },
  { text: '{"a":{"b":{"c":[1,2,{"d":"}"}]}},"results":{"gate":{"passed":false}}}' },
  { text: '{"status":"ok","n":-1.5e3,"e":{},"f":[]}' },
  { text: "{}" },
  { text: "" },
  { text: "<html>passed: true</html>" },
  { text: '{"status":"ok",}' },
  { text: '{"status":tru}' },
  { text: '{"status":"ok"' },
  { text: '{"status":"ok"} {"status":"again"}' },
  { text: '["status"]' },
  { text: '"status"' },
  { text: '{"status":"\\x"}' },
];

/** What every reader must print for `text`, through the script's show stage. */
function _expected(text: string, twice: boolean): string[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return ["doc\tother"];
  }
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    return ["doc\tother"];
  }
  const lines = [`doc\t${twice ? "twice" : "object"}`];
  for (const path of PATHS.split(" ")) {
    let value: unknown = document;
    for (const name of path.split(".")) {
      const holder = value as Record<string, unknown>;
      const inObject = typeof value === "object" && value !== null && !Array.isArray(value);
      value = inObject && Object.hasOwn(holder, name) ? holder[name] : _MISSING;
    }
    if (value === _MISSING) continue;
    const type = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
    let shown = ["object", "array"].includes(type) ? "" : JSON.stringify(value);
    if (type === "string") shown = value as string;
    if (path === "agent_id" || path === "status") shown = shown.toLowerCase();
    if (path === "status") shown = shown.replace(/[- ]/g, "_");
    lines.push(`${path}\t${type}\t${shown}`);
  }
  return lines;
}
const _MISSING = Symbol("missing");

/** The command read_answer runs for `reader`: its branch of the `case $reader in` there. */
function _readCommand(reader: DirectApiReader): string {
  const body = /\nread_answer\(\) \{\n([\s\S]*?)\n\}\n/.exec(SCRIPT_TEXT)?.[1] ?? "";
  const found = new RegExp(`^ {4}${reader}\\) (.+) ;;$`, "m").exec(body);
  assert.ok(found, `read_answer has a branch for ${reader}`);
  return found[1]!;
}

async function _read(reader: DirectApiReader, text: string): Promise<string[]> {
  const path = await directApiPath(reader);
  const child = new Deno.Command(join(path, "sh"), {
    args: ["-c", _readCommand(reader)],
    env: {
      PATH: path,
      LC_ALL: "C",
      paths: PATHS,
      ...Object.fromEntries(
        ["read_py", "read_jq", "read_awk", "decode_awk", "show_awk", "shown_awk"].map((name) => [
          name,
          _program(name),
        ]),
      ),
    },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const output = new TextDecoder().decode((await child.output()).stdout);
  const lines = output.replace(/\n$/, "").split("\n");
  // jq prints nothing for text it cannot parse; the script reads that as other too.
  return lines.join("") === "" ? ["doc\tother"] : lines;
}

for (const reader of READERS) {
  const needs = needsTools({
    tools: ["sh", ...DIRECT_API_TOOLS, ...(reader === "own" ? [] : [reader])],
    notOn: ["windows"],
  });
  Deno.test({
    name: `the ${reader === "own" ? "script's own" : reader} JSON reader reads what JSON.parse ` +
      `reads, refuses what it refuses, and sees a member of the verdict's path given twice` +
      needs.nameSuffix,
    ignore: needs.ignore,
    fn: async () => {
      needs.assertFound();
      for (const { text, twice = false } of CORPUS) {
        const read = await _read(reader, text);
        // What follows "twice" is never read: the script stops there.
        const expected = _expected(text, twice);
        assert.deepEqual(twice ? read.slice(0, 1) : read, twice ? ["doc\ttwice"] : expected, text);
      }
    },
  });
}

// ---- whole runs --------------------------------------------------------------------------------

/** Runs the script with `reader`, every tool on its PATH logging its arguments to `log`. */
async function _runLogged(reader: DirectApiReader, clock: VirtualClock, url: string, log: string) {
  const tools = await directApiPath(reader);
  const logged = await Deno.makeTempDir({ prefix: "direct-api-logged-" });
  const sh = await Deno.realPath(join(tools, "sh"));
  try {
    for await (const entry of Deno.readDir(tools)) {
      const real = await Deno.realPath(join(tools, entry.name));
      await Deno.writeTextFile(
        join(logged, entry.name),
        `#!${sh}\nprintf '%s\\n' "$0 $*" >>${log}\nexec ${real} "$@"\n`,
        { mode: 0o755 },
      );
    }
    const cwd = await Deno.makeTempDir({ prefix: "direct-api-cwd-" });
    try {
      return await runCommand(join(logged, "sh"), [SCRIPT, "--agent", AGENTS.passing], {
        cwd,
        env: { PATH: `${clock.bin}:${logged}`, SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: url },
        clearEnv: true,
      });
    } finally {
      await Deno.remove(cwd, { recursive: true });
    }
  } finally {
    await Deno.remove(logged, { recursive: true });
  }
}

for (const reader of READERS) {
  const needs = needsTools({
    tools: ["sh", ...DIRECT_API_TOOLS, ...(reader === "own" ? [] : [reader])],
    notOn: ["windows"],
  });
  Deno.test({
    name: `with ${reader === "own" ? "its own JSON reader" : reader}, direct-api.sh sends the ` +
      `key in the X-API-Key header only, never in a process's arguments${needs.nameSuffix}`,
    ignore: needs.ignore,
    fn: async () => {
      needs.assertFound();
      await using clock = await virtualClock();
      await using service = await startFakeService({
        agents: defaultAgents(3_000),
        now: clock.now,
      });
      const log = await Deno.makeTempFile({ prefix: "direct-api-argv-" });
      try {
        const result = await _runLogged(reader, clock, service.url, log);
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stderr, new RegExp(`JSON read with ${reader}\\)`));
        const commands = await Deno.readTextFile(log);
        assert.match(commands, /curl .*--header @/);
        assert.ok(!commands.includes(KEYS.ci), "the key is in a command line");
        assert.ok(service.requests.length >= 2);
        for (const request of service.requests) {
          assert.equal(request.headers["x-api-key"], KEYS.ci);
          assert.ok(!request.path.includes(KEYS.ci));
        }
      } finally {
        await Deno.remove(log);
      }
    },
  });
}

const NEEDS = needsTools({ tools: ["sh", ...DIRECT_API_TOOLS], notOn: ["windows"] });

Deno.test({
  name:
    `direct-api.sh reaches a plain-http loopback service straight, never through a proxy variable${NEEDS.nameSuffix}`,
  ignore: NEEDS.ignore,
  fn: async () => {
    NEEDS.assertFound();
    await using service = await startFakeService({ agents: defaultAgents(0) });
    await using proxy = startProxy("relay");
    const path = await directApiPath("own");
    const result = await runCommand(join(path, "sh"), [SCRIPT, "--agent", AGENTS.passing], {
      env: {
        PATH: path,
        SERVICE_API_KEY: KEYS.ci,
        SERVICE_BASE_URL: service.url,
        http_proxy: proxy.url,
        HTTP_PROXY: proxy.url,
        ALL_PROXY: proxy.url,
      },
      clearEnv: true,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(proxy.connections, 0, `the proxy saw ${JSON.stringify(proxy.requests)}`);
    assert.ok(service.requests.length >= 2);
  },
});

Deno.test({
  name: `direct-api.sh's own failures exit 3, never 1: 1 is only a failed gate${NEEDS.nameSuffix}`,
  ignore: NEEDS.ignore,
  fn: async () => {
    NEEDS.assertFound();
    await using service = await startFakeService({ agents: defaultAgents(0) });
    const path = await directApiPath("own");
    const stubs = await Deno.makeTempDir({ prefix: "direct-api-stubs-" });
    try {
      // A date that fails: the script's clock, read under set -e after the trap is set.
      await Deno.writeTextFile(join(stubs, "date"), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
      for (
        const [env, message] of [
          [{ TMPDIR: "/nonexistent/direct-api" }, /mktemp/],
          [{ PATH: `${stubs}:${path}` }, /stopped by an unexpected error/],
        ] as const
      ) {
        const result = await runCommand(join(path, "sh"), [SCRIPT, "--agent", AGENTS.failing], {
          env: { PATH: path, SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: service.url, ...env },
          clearEnv: true,
        });
        assert.equal(result.code, 3, result.stderr);
        assert.match(result.stderr, message);
        assert.match(result.stderr, /the gate was not checked/);
        assert.doesNotMatch(result.stderr, /FAILED/);
      }
    } finally {
      await Deno.remove(stubs, { recursive: true });
    }
  },
});
