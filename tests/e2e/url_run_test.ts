/**
 * End to end: "deno run from a URL". The repository is served over HTTP on 127.0.0.1 the way
 * raw.githubusercontent.com serves it (every file as text/plain), and the program is run from
 * there with the documented command (`deno run --no-prompt <runtimePermissions of deno.json>
 * <url>/src/main.ts`; tests/docs/recipes_test.ts checks the docs say exactly that) and an empty
 * DENO_DIR, so every module is downloaded. Also checks that every import in src/ is one a remote
 * run can resolve: relative, `node:`, or `npm:`/`jsr:` with a version.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { AGENTS, defaultAgents, KEYS, startFakeService } from "../support/fake_service.ts";
import { runCommand } from "../support/command.ts";
import { runFromUrl } from "../support/url_run.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const VERSION = (JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)) as { version: string })
  .version;

interface StaticServer extends AsyncDisposable {
  readonly url: string;
  /** Every request: path and answer status. */
  readonly log: Array<{ path: string; status: number }>;
}

/**
 * Serves src/ and deno.json, nothing else, as text/plain (raw.githubusercontent.com's way), or
 * with the given content types for `.ts` and `.json`.
 */
function _serveRepository(
  types: { ts: string; json: string } = {
    ts: "text/plain; charset=utf-8",
    json: "text/plain; charset=utf-8",
  },
): StaticServer {
  const log: Array<{ path: string; status: number }> = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const path = decodeURIComponent(new URL(request.url).pathname);
      const allowed = (path === "/deno.json" || /^\/src\/[\w/]+\.ts$/.test(path)) &&
        !path.includes("..");
      let response: Response;
      try {
        if (!allowed) throw new Deno.errors.NotFound(path);
        response = new Response(await Deno.readFile(`${ROOT}${path.slice(1)}`), {
          headers: { "content-type": path.endsWith(".json") ? types.json : types.ts },
        });
      } catch {
        response = new Response("not found", { status: 404 });
      }
      log.push({ path, status: response.status });
      return response;
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    log,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

Deno.test("run from a URL with an empty cache: the version comes from the remote deno.json", async () => {
  await using repository = _serveRepository();
  const result = await runFromUrl(`${repository.url}/src/main.ts`, ["--version"]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, `service-ci ${VERSION}\nbuilt-in service address: none\n`);
  // Nothing of Deno's own in the log: no download lines, no permission notes.
  assert.equal(result.stderr, "");
  // Downloaded, not read from the checkout: main.ts and deno.json came over HTTP.
  const paths = repository.log.map((entry) => entry.path);
  assert.ok(paths.includes("/src/main.ts") && paths.includes("/deno.json"), paths.join(" "));
  assert.deepEqual(repository.log.filter((entry) => entry.status !== 200), []);
});

Deno.test("run from a URL, no flag beyond deno.json's permissions: a passing gate exits 0, a failing one 1", async () => {
  await using repository = _serveRepository();
  await using service = await startFakeService({ agents: defaultAgents(200) });
  const env = { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: service.url };
  const entry = `${repository.url}/src/main.ts`;

  const passed = await runFromUrl(entry, ["--agent", AGENTS.passing], { env });
  assert.equal(passed.code, 0, passed.stderr);
  assert.match(passed.stderr, /exit 0: 1 gate, 1 passed/);
  const failed = await runFromUrl(entry, ["--agent", AGENTS.failing], { env });
  assert.equal(failed.code, 1, failed.stderr);
  assert.match(failed.stderr, /FAILED/);

  // Each run started from an empty DENO_DIR and fetched the whole program again.
  const mainFetches = repository.log.filter((entry) => entry.path === "/src/main.ts").length;
  assert.equal(mainFetches, 2);
  assert.deepEqual(repository.log.filter((entry) => entry.status !== 200), []);
  const [trigger] = service.requestsOf("POST");
  assert.match(trigger?.headers["user-agent"] ?? "", new RegExp(`^service-ci/${VERSION} \\(`));
});

// docs/install.md, "Running from a mirror": what a mirror must send, checked against Deno itself.
Deno.test("run from a mirror: TypeScript, mp2t, octet-stream and text/plain work; .ts as JavaScript fails", async () => {
  const works = [
    { ts: "application/typescript", json: "application/json" },
    { ts: "video/mp2t", json: "application/json" },
    { ts: "application/octet-stream", json: "application/octet-stream" },
  ];
  for (const types of works) {
    await using repository = _serveRepository(types);
    const result = await runFromUrl(`${repository.url}/src/main.ts`, ["--version"]);
    assert.equal(result.code, 0, `${JSON.stringify(types)}: ${result.stderr}`);
    assert.match(result.stdout, /^service-ci /);
  }
  await using javascript = _serveRepository({ ts: "text/javascript", json: "application/json" });
  const result = await runFromUrl(`${javascript.url}/src/main.ts`, ["--version"]);
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, /SyntaxError/);
});

interface InfoModule {
  readonly specifier: string;
  readonly dependencies?: ReadonlyArray<{ readonly specifier: string }>;
}

Deno.test("every import in src/ is relative, node:, or a versioned npm:/jsr: specifier", async () => {
  const info = ["info", "--json", "--no-config", "src/main.ts"];
  const output = await runCommand(Deno.execPath(), info, { cwd: ROOT, env: { NO_COLOR: "1" } });
  assert.equal(output.code, 0, output.stderr);
  const graph = JSON.parse(output.stdout) as { modules: InfoModule[] };
  const local = graph.modules.filter((module) => module.specifier.startsWith("file:"));
  assert.ok(local.length > 10, `the graph has ${local.length} local modules`);
  const allowed =
    /^(\.\.?\/|node:[a-z_/]+$|npm:(@[^/@]+\/)?[^/@]+@\d[^/]*(\/.*)?$|jsr:@[^/@]+\/[^/@]+@\d)/;
  const offending: string[] = [];
  for (const module of local) {
    const file = fileURLToPath(module.specifier).slice(ROOT.length).replaceAll("\\", "/");
    assert.ok(file.startsWith("src/") || file === "deno.json", `${file} is in the graph`);
    for (const dependency of module.dependencies ?? []) {
      if (!allowed.test(dependency.specifier)) offending.push(`${file}: ${dependency.specifier}`);
    }
  }
  assert.deepEqual(offending, []);

  // deno info sees only literal specifiers; an import() of a computed one would escape it.
  for (const module of local) {
    const text = await Deno.readTextFile(fileURLToPath(module.specifier));
    assert.doesNotMatch(text, /\bimport\s*\(\s*[^"'`\s]/, module.specifier);
    assert.doesNotMatch(text, /\brequire\s*\(/, module.specifier);
  }
});
