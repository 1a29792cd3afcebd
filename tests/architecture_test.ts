/**
 * The structure carries the rules (docs/architecture.md): the pipeline names no CI, every output
 * goes through one interface, and timers live in one module. Each check reads the source, with
 * comments removed, so prose may still name what code must not.
 */

import assert from "node:assert/strict";

const SRC = new URL("../src/", import.meta.url);

async function sourceFiles(dir = SRC): Promise<URL[]> {
  const files: URL[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) files.push(...await sourceFiles(url));
    else if (entry.name.endsWith(".ts")) files.push(url);
  }
  return files.sort((a, b) => a.href.localeCompare(b.href));
}

/** The code of a file without its comments (strings are kept). */
function code(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ""))
    .split("\n")
    .map((line) => line.replace(/^\s*\/\/.*$/, ""))
    .join("\n");
}

function relative(url: URL): string {
  return url.href.slice(SRC.href.length - "src/".length);
}

const CI_NAMES = /github|gitlab|azure|teamcity|buildkite|bitbucket|jenkins|circleci/i;

Deno.test("the pipeline (run.ts, gates.ts, outputs/mod.ts, outputs/output.ts) names no CI in its code", async () => {
  for (const name of ["run.ts", "gates.ts", "outputs/mod.ts", "outputs/output.ts"]) {
    const text = code(await Deno.readTextFile(new URL(name, SRC)));
    const lines = text.split("\n").filter((line) => CI_NAMES.test(line));
    assert.deepEqual(lines, [], `src/${name} names a CI`);
  }
});

Deno.test("only outputs/ci/native.ts chooses a CI's writer, and every writer is a NativeWriter", async () => {
  const choosers: string[] = [];
  for (const file of await sourceFiles()) {
    const text = code(await Deno.readTextFile(file));
    if (/create(Github|Azure|Teamcity|Gitlab|Buildkite|Bitbucket)Writer\(/.test(text)) {
      if (
        !/^src\/outputs\/ci\/(github|azure|teamcity|gitlab|buildkite|bitbucket)\.ts$/.test(
          relative(file),
        )
      ) {
        choosers.push(relative(file));
      }
    }
  }
  assert.deepEqual(choosers, ["src/outputs/ci/native.ts"]);
  const native = await Deno.readTextFile(new URL("outputs/ci/native.ts", SRC));
  for (
    const ci of [
      "github_actions",
      "azure_pipelines",
      "teamcity",
      "gitlab",
      "buildkite",
      "bitbucket",
    ]
  ) {
    assert.ok(native.includes(`case "${ci}":`), `outputs/ci/native.ts has no writer for ${ci}`);
  }
});

Deno.test("no module but src/platform/clock.ts uses a raw timer, the request timer included", async () => {
  const users: string[] = [];
  for (const file of await sourceFiles()) {
    if (relative(file) === "src/platform/clock.ts") continue;
    const text = code(await Deno.readTextFile(file));
    if (/\b(setTimeout|setInterval)\s*\(|\bAbortSignal\.timeout\s*\(/.test(text)) {
      users.push(relative(file));
    }
  }
  assert.deepEqual(users, []);
});

Deno.test("run.ts stays a short pipeline", async () => {
  const lines = (await Deno.readTextFile(new URL("run.ts", SRC))).split("\n").length;
  assert.ok(lines <= 200, `src/run.ts has ${lines} lines`);
});

Deno.test("the comment stripper keeps code and drops comments (so the checks above can fail)", () => {
  assert.deepEqual(code("// github\nconst a = 1; /* gitlab */\n").trim(), "const a = 1;");
  assert.ok(CI_NAMES.test(code('const provider = "github_actions";')));
});

Deno.test("docs/architecture.md's worked examples (an output, a CI) type-check against the code", async () => {
  const doc = await Deno.readTextFile(new URL("../docs/architecture.md", import.meta.url));
  const blocks = [...doc.matchAll(/^( *)```ts\n([\s\S]*?)^\1```$/gm)].map(([, indent, body]) =>
    body!.split("\n").map((line) => line.slice(indent!.length)).join("\n")
  );
  // The output's example names no path (it is src/outputs/verdict_file.ts); the others say theirs.
  const paths = blocks.map((block) =>
    /^\/\/ (src\/\S+\.ts)/.exec(block)?.[1] ?? "src/outputs/verdict_file.ts"
  );
  assert.deepEqual(paths, [
    "src/outputs/verdict_file.ts",
    "src/ci/providers.ts",
    "src/outputs/ci/semaphore.ts",
  ]);
  const root = new URL("../", import.meta.url);
  const dir = await Deno.makeTempDir({ prefix: "architecture-" });
  try {
    const files = blocks.map((block, index) => {
      const home = new URL(paths[index]!, root);
      return {
        file: `${dir}/example_${index}.ts`,
        text: block.replace(
          /from "(\.{1,2}\/[^"]+)"/g,
          (_, path) => `from "${new URL(path, home).href}"`,
        ),
      };
    });
    for (const { file, text } of files) await Deno.writeTextFile(file, text);
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "check",
        "--quiet",
        "--config",
        new URL("../deno.json", import.meta.url).pathname,
        ...files.map(({ file }) => file),
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(code, 0, new TextDecoder().decode(stderr));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const outputs = await Deno.readTextFile(new URL("outputs/mod.ts", SRC));
  assert.ok(
    outputs.includes("export async function chooseOutputs("),
    "the doc names chooseOutputs",
  );
});

Deno.test("each option is spelled in one place in src/: its flag and variable appear in no other module's code", async () => {
  const { OPTIONS } = await import("../src/config/options.ts");
  const names = Object.values(OPTIONS as Record<string, { flag?: string; variable?: string }>)
    .flatMap((option) => [option.flag && `--${option.flag}`, option.variable])
    .filter((name): name is string => Boolean(name));
  assert.ok(names.length > 20, `${names.length} names`);
  const found: string[] = [];
  for (const file of await sourceFiles()) {
    if (relative(file) === "src/config/options.ts") continue;
    const text = code(await Deno.readTextFile(file));
    for (const name of names) {
      const pattern = new RegExp(`${name.replaceAll("-", "\\-")}(?![\\w-])`);
      if (pattern.test(text)) found.push(`${relative(file)}: ${name}`);
    }
  }
  assert.deepEqual(found, []);
});

// SECURITY.md, "Where the key goes": each way of handling the key's value, and the files that may.
const KEY_HANDLING: ReadonlyArray<readonly [RegExp, readonly string[]]> = [
  // Its value read from Config or the client's options (its source and its spec are not).
  [/(?<!OPTIONS|sources)\.apiKey\b(?!\.variable)/, ["src/run.ts", "src/service/client.ts"]],
  [/\bapiKeyValue\b/, ["src/config/options.ts", "src/config/values.ts"]],
  [/\bsecretValues\b/, ["src/config/load.ts", "src/run.ts"]],
  // The dry run shows the header's name with "***".
  [/X-API-Key/i, ["src/outputs/dry_run.ts", "src/service/client.ts"]],
];

Deno.test("the API key's value is handled only on its documented path (SECURITY.md)", async () => {
  const texts = await Promise.all(
    (await sourceFiles()).map(async (
      file,
    ) => [relative(file), code(await Deno.readTextFile(file))]),
  );
  for (const [pattern, files] of KEY_HANDLING) {
    const found = texts.filter(([, text]) => pattern.test(text!)).map(([file]) => file);
    assert.deepEqual(found, files, String(pattern));
  }
  const security = await Deno.readTextFile(new URL("../SECURITY.md", import.meta.url));
  const path = security.slice(security.indexOf("**Where the key goes"));
  for (const file of new Set(KEY_HANDLING.flatMap(([, files]) => files))) {
    if (file !== "src/outputs/dry_run.ts" && file !== "src/config/options.ts") {
      assert.ok(path.includes(`\`${file}\``), `SECURITY.md names ${file} on the key's path`);
    }
  }
});

Deno.test("every variable src/ reads by name is declared: in the option table, a CI provider's list or a writer's, and so among ENV_VARIABLES", async () => {
  const { ENV_VARIABLES } = await import("../src/ci/detect.ts");
  const undeclared: string[] = [];
  let seen = 0;
  for (const file of await sourceFiles()) {
    const text = code(await Deno.readTextFile(file));
    const names = [
      ...text.matchAll(/\b(?:read|env|io\.env|readEnv)\(\s*"([A-Z][A-Z0-9_]*)"/g),
      ...text.matchAll(/\benv\[\s*"([A-Z][A-Z0-9_]*)"\s*\]/g),
    ].map((match) => match[1]!);
    for (const name of new Set(names)) {
      seen++;
      if (!ENV_VARIABLES.includes(name)) undeclared.push(`${relative(file)}: ${name}`);
    }
  }
  assert.ok(seen > 50, `only ${seen} reads found: the patterns no longer match the code`);
  assert.deepEqual(undeclared, []);
  // The only reader of the process's environment is main.ts, and it asks only for ENV_VARIABLES.
  const readers: string[] = [];
  for (const file of await sourceFiles()) {
    if (/Deno\.env\.(get|toObject)\(/.test(code(await Deno.readTextFile(file)))) {
      readers.push(relative(file));
    }
  }
  assert.deepEqual(readers, ["src/main.ts"]);
});

// Every module another src/ module imports, statically (types included) or with import().
async function importGraph(): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  for (const file of await sourceFiles()) {
    const text = code(await Deno.readTextFile(file));
    const targets = [
      ...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)"(\.{1,2}\/[^"]+\.ts)"/g),
    ].map((match) => relative(new URL(match[1]!, file)));
    graph.set(relative(file), [...new Set(targets)].sort());
  }
  return graph;
}

// The first cycle found, as the modules around it, or null.
function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string): string[] | null => {
    state.set(node, "open");
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === "open") return [...stack.slice(stack.indexOf(next)), next];
      if (state.get(next) === undefined) {
        const found = visit(next);
        if (found !== null) return found;
      }
    }
    stack.pop();
    state.set(node, "done");
    return null;
  };
  for (const node of graph.keys()) {
    if (state.get(node) === undefined) {
      const found = visit(node);
      if (found !== null) return found;
    }
  }
  return null;
}

/**
 * src/'s layers from the bottom up: a module imports only from its own folder and those below
 * it. The pipeline (`gates.ts`, `run.ts`) stands on every folder, `main.ts` on all of it, and
 * `effects.ts`, types only, is below everything.
 */
const LAYERS: readonly string[] = [
  "effects.ts",
  "text",
  "http",
  "platform",
  "config",
  "ci",
  "service",
  "report",
  "forge",
  "outputs",
  "gates.ts",
  "run.ts",
  "main.ts",
];

/** Each import that points up the layers, as `from → to (layer → layer)`. */
function upwardImports(graph: Map<string, string[]>): string[] {
  const layer = (file: string) => LAYERS.indexOf(file.slice("src/".length).split("/")[0]!);
  return [...graph].flatMap(([from, targets]) =>
    targets.filter((to) => layer(to) > layer(from)).map((to) =>
      `${from} → ${to} (${LAYERS[layer(from)]} imports ${LAYERS[layer(to)]}, which is above it)`
    )
  );
}

Deno.test("every import in src/ points down the layers: text, http, platform, config, ci, service, report, forge, outputs, the pipeline", async () => {
  const graph = await importGraph();
  const unknown = [...graph.keys()].filter((file) =>
    !LAYERS.includes(file.slice("src/".length).split("/")[0]!)
  );
  assert.deepEqual(unknown, [], "every folder and top-level file of src/ has a layer");
  assert.deepEqual(upwardImports(graph), []);
});

Deno.test("upwardImports() names an import that points up, one line each (so the check above can fail)", async () => {
  const graph = new Map(await importGraph());
  graph.set("src/text/sanitize.ts", [
    ...graph.get("src/text/sanitize.ts")!,
    "src/config/load.ts",
  ]);
  assert.deepEqual(upwardImports(graph), [
    "src/text/sanitize.ts → src/config/load.ts (text imports config, which is above it)",
  ]);
});

Deno.test("findCycle() finds a cycle through a type-only import, and none in a tree", () => {
  assert.deepEqual(
    findCycle(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]]])),
    ["a", "b", "c", "a"],
  );
  assert.equal(findCycle(new Map([["a", ["b", "c"]], ["b", ["c"]], ["c", []]])), null);
});

Deno.test("src/ has no import cycle, type-only imports and import() included", async () => {
  assert.equal(findCycle(await importGraph()), null);
});

// The writers are the files of outputs/ci/ but the chooser and the interface they share.
const _WRITER_SHARED = ["native.ts", "native_io.ts"];

/** Each CI writer's imports of another CI writer, as `a → b`. */
function writerCrossings(graph: Map<string, string[]>): string[] {
  const writers = [...graph.keys()].filter((file) =>
    file.startsWith("src/outputs/ci/") && !_WRITER_SHARED.includes(file.slice(15))
  );
  return writers.flatMap((writer) =>
    (graph.get(writer) ?? []).filter((target) => writers.includes(target))
      .map((target) => `${writer} → ${target}`)
  );
}

Deno.test("no CI's writer imports another CI's writer", async () => {
  const graph = await importGraph();
  const writers = [...graph.keys()].filter((file) => file.startsWith("src/outputs/ci/"));
  assert.ok(writers.length >= 8, `the writers were not found: ${writers.join(", ")}`);
  assert.deepEqual(writerCrossings(graph), []);
});

Deno.test("writerCrossings() finds a writer that imports another (so the check above can fail)", async () => {
  const graph = await importGraph();
  const planted = new Map(graph);
  planted.set("src/outputs/ci/gitlab.ts", [
    ...graph.get("src/outputs/ci/gitlab.ts")!,
    "src/outputs/ci/github.ts",
  ]);
  assert.deepEqual(writerCrossings(planted), [
    "src/outputs/ci/gitlab.ts → src/outputs/ci/github.ts",
  ]);
});

Deno.test("no module in src/ re-exports another's names: each is imported from its home", async () => {
  const found: string[] = [];
  for (const file of await sourceFiles()) {
    for (const line of code(await Deno.readTextFile(file)).split("\n")) {
      if (/^export (type )?\{[^}]*\}( from\b|;)/.test(line)) {
        found.push(`${relative(file)}: ${line}`);
      }
      if (/^export \* from\b/.test(line)) found.push(`${relative(file)}: ${line}`);
    }
  }
  assert.deepEqual(found, []);
});

Deno.test("docs/architecture.md's folder map names every folder of src/ with its true file count, and the top holds only the entry, the pipeline, the gates and the effects", async () => {
  const doc = await Deno.readTextFile(new URL("../docs/architecture.md", import.meta.url));
  const map = doc.split("\n## The folders\n")[1]?.split("\n## ")[0] ?? "";
  const rows = [...map.matchAll(/^(src\/\S*\/)\s+(\d+) files?:/gm)];
  const counts: Record<string, number> = {};
  for (const file of (await sourceFiles()).map(relative)) {
    const dir = file.slice(0, file.lastIndexOf("/") + 1);
    counts[dir] = (counts[dir] ?? 0) + 1;
  }
  const { "src/": top, ...folders } = counts;
  assert.equal(top, 4, "only main.ts, run.ts, gates.ts and effects.ts at the top of src/");
  assert.deepEqual(Object.fromEntries(rows.map(([, dir, count]) => [dir, Number(count)])), folders);
  assert.ok(doc.split("\n").length <= 200, "docs/architecture.md is one page (200 lines)");
});

Deno.test("a forge is named in code only in its own file of src/forge/ (github.ts, gitlab.ts, bitbucket.ts): the rest of the folder and the forge outputs name none", async () => {
  const found: string[] = [];
  for (const file of await sourceFiles()) {
    const path = relative(file);
    if (/^src\/forge\/(github|gitlab|bitbucket)\.ts$/.test(path)) continue;
    if (!/^src\/(forge\/|outputs\/(statuses|pr_comment|dry_run|mod)\.ts)/.test(path)) continue;
    const lines = code(await Deno.readTextFile(file)).split("\n");
    lines.forEach((line, index) => {
      if (/GitHub|GitLab|Bitbucket/.test(line)) found.push(`${path}:${index + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, []);
});

Deno.test("no file of src/ is over 400 lines, and comments are at most 15 % of src/'s non-blank lines", async () => {
  let nonBlank = 0;
  let comments = 0;
  const long: string[] = [];
  for (const file of await sourceFiles()) {
    const text = await Deno.readTextFile(file);
    const lines = text.replace(/\n$/, "").split("\n");
    if (lines.length > 400) long.push(`${relative(file)}: ${lines.length} lines`);
    const kept = code(text).split("\n");
    lines.forEach((line, index) => {
      if (line.trim() === "") return;
      nonBlank++;
      if ((kept[index] ?? "").trim() === "") comments++;
    });
  }
  assert.deepEqual(long, []);
  assert.ok(
    comments / nonBlank <= 0.15,
    `comments are ${(100 * comments / nonBlank).toFixed(1)} %`,
  );
});
