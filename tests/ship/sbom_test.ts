/**
 * Tests scripts/sbom.ts: the SBOM of the real program is a valid CycloneDX 1.6 document (checked
 * with the CycloneDX project's own JSON schemas and ajv), names the Deno runtime and every
 * module compiled in with its SHA-256, has the serial number actions/attest requires (a UUIDv5 of
 * its content), and is the same from run to run.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { Ajv, type AnySchemaObject } from "npm:ajv@8.17.1";
import addFormatsModule from "npm:ajv-formats@3.0.1";
import _cyclonedxPackage from "npm:@cyclonedx/cyclonedx-library@10.3.0/package.json" with {
  type: "json",
};
import {
  cyclonedxSbom,
  type DenoInfo,
  SBOM_NAMESPACE,
  type SbomDocument,
  sbomOfEntry,
  sbomSerialNumber,
  uuidV5,
} from "../../scripts/sbom.ts";
import { runCommand } from "../support/command.ts";
import { sha256Hex } from "../support/release.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(/[\\/]$/, "");
const VERSION = "1.2.3";

// ajv-formats is CommonJS: its default export arrives as the module or as its `default`.
const addFormats = addFormatsModule.default ?? addFormatsModule;

// The schemas ship with the CycloneDX library (res/schema/), found beside its package.json.
const SCHEMAS = new URL(
  "res/schema/",
  import.meta.resolve("npm:@cyclonedx/cyclonedx-library@10.3.0/package.json"),
);

function _schema(name: string): AnySchemaObject {
  return JSON.parse(Deno.readTextFileSync(new URL(name, SCHEMAS)));
}

// Set up as the CycloneDX library sets up its own JsonStrictValidator: the bom schema refers
// to the SPDX, JSF and cryptography schemas by their SNAPSHOT addresses.
function _cyclonedxValidator() {
  const schemas: Record<string, AnySchemaObject> = {};
  for (const name of ["spdx", "jsf-0.82", "cryptography-defs"]) {
    schemas[`http://cyclonedx.org/schema/${name}.SNAPSHOT.schema.json`] = _schema(
      `${name}.SNAPSHOT.schema.json`,
    );
  }
  const ajv = new Ajv({ strict: false, allErrors: true, schemas });
  addFormats(ajv);
  ajv.addFormat("idn-email", /^[^\s@]+@[^\s@]+$/);
  ajv.addFormat("iri-reference", true);
  return ajv.compile(_schema("bom-1.6.SNAPSHOT.schema.json"));
}

const validate = _cyclonedxValidator();

function _assertValid(document: unknown): void {
  assert.ok(validate(document), JSON.stringify(validate.errors, null, 2));
}

// Every bom-ref a dependency names is a component's (or the program's).
function _assertRefsResolve(document: SbomDocument): void {
  const refs = new Set([
    document.metadata.component["bom-ref"],
    ...document.components.map((component) => component["bom-ref"]),
  ]);
  assert.equal(refs.size, document.components.length + 1, "bom-refs are unique");
  for (const dependency of document.dependencies) {
    assert.ok(refs.has(dependency.ref), dependency.ref);
    for (const ref of dependency.dependsOn) assert.ok(refs.has(ref), `${dependency.ref} → ${ref}`);
  }
}

Deno.test("the SBOM of src/main.ts is a valid CycloneDX 1.6 document", async () => {
  const document = await sbomOfEntry("src/main.ts", { root: ROOT, version: VERSION });
  _assertValid(document);
  _assertRefsResolve(document);
  assert.equal(document.metadata.component.name, "service-ci");
  assert.equal(document.metadata.component.version, VERSION);
});

Deno.test("the validator the SBOM is checked with rejects a malformed SBOM", async () => {
  const document = await sbomOfEntry("src/main.ts", { root: ROOT, version: VERSION });
  const [runtime, first, ...rest] = document.components;
  const broken = {
    ...document,
    components: [runtime, { ...first, hashes: [{ alg: "SHA-256", content: "not hex" }] }, ...rest],
  };
  assert.equal(validate(broken), false);
  assert.equal(validate({ ...document, bomFormat: "SPDX" }), false);
  assert.equal(validate({ ...document, components: [{ ...runtime, type: "runtime" }] }), false);
});

Deno.test("the SBOM names the Deno runtime the binary embeds, at this Deno's version", async () => {
  const document = await sbomOfEntry("src/main.ts", { root: ROOT, version: VERSION });
  const runtime = document.components.find((component) => component.type === "platform");
  assert.equal(runtime?.name, "deno");
  assert.equal(runtime?.version, Deno.version.deno);
  assert.equal(runtime?.purl, `pkg:github/denoland/deno@v${Deno.version.deno}`);
  const program = document.dependencies.find((dependency) => dependency.ref === "service-ci");
  assert.deepEqual(program?.dependsOn, ["deno-runtime", "src/main.ts"]);
});

Deno.test("the SBOM lists every module under src/ with the SHA-256 of its file", async () => {
  const document = await sbomOfEntry("src/main.ts", { root: ROOT, version: VERSION });
  const files = document.components.filter((component) => component.type === "file");
  const names = files.map((component) => component.name);
  assert.ok(names.includes("src/main.ts") && names.includes("deno.json"), String(names));
  for (const name of names) assert.ok(name === "deno.json" || name.startsWith("src/"), name);
  for (const file of files) {
    const bytes = await Deno.readFile(`${ROOT}/${file.name}`);
    assert.deepEqual(file.hashes, [{ alg: "SHA-256", content: await sha256Hex(bytes) }]);
  }
  // The runtime has no third-party dependencies, so there is no library.
  assert.ok(!document.components.some((component) => component.type === "library"));
});

Deno.test("the SBOM is the same bytes from run to run (no timestamp; a serial number from its content)", async () => {
  const first = await sbomOfEntry("src/main.ts", { root: ROOT, version: VERSION });
  const second = await sbomOfEntry("src/main.ts", { root: ROOT, version: VERSION });
  assert.equal(JSON.stringify(first), JSON.stringify(second));
  assert.ok(!("timestamp" in first.metadata));
  assert.equal(first.serialNumber, await sbomSerialNumber(first));
  const other = await sbomOfEntry("src/main.ts", { root: ROOT, version: "1.2.4" });
  assert.notEqual(other.serialNumber, first.serialNumber);
});

// actions/attest v4.2.2 (1e69f48acb82d1966a394da916b4c1698aa569d6), src/sbom.ts, checkIsCycloneDX:
// a CycloneDX document is one with bomFormat, serialNumber and specVersion; anything else is
// "Unsupported SBOM format" and the attestation step fails.
function _attestAcceptsCycloneDX(document: Record<string, unknown>): boolean {
  return !!(document.bomFormat && document.serialNumber && document.specVersion);
}

Deno.test("actions/attest accepts the SBOM as CycloneDX: bomFormat, serialNumber, specVersion", async () => {
  const document = await sbomOfEntry("src/main.ts", { root: ROOT, version: VERSION });
  assert.ok(_attestAcceptsCycloneDX({ ...document }));
  assert.match(
    document.serialNumber,
    /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
  );
  const { serialNumber: _, ...without } = document;
  assert.ok(!_attestAcceptsCycloneDX(without));
  // The CycloneDX schema holds the serial number to RFC 4122's urn:uuid form too.
  assert.equal(
    validate({ ...document, serialNumber: "3cb20bdc-3105-5b04-bd36-716dff4073f9" }),
    false,
  );
});

Deno.test("uuidV5() gives RFC 9562's UUIDs, and the SBOM namespace is the repository's", async () => {
  const url = "6ba7b811-9dad-11d1-80b4-00c04fd430c8";
  assert.equal(
    await uuidV5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com"),
    "2ed6657d-e927-568b-95e1-2665a8aea6a2",
  );
  assert.equal(await uuidV5(url, "https://github.com/service-ci/service-ci"), SBOM_NAMESPACE);
  await assert.rejects(() => uuidV5("not a uuid", "x"), TypeError);
});

// A graph with an npm package that has a dependency, resolved twice with different peers.
const NPM_GRAPH: DenoInfo = {
  roots: ["file:///repo/src/main.ts"],
  modules: [
    {
      kind: "esm",
      specifier: "file:///repo/src/main.ts",
      local: "/repo/src/main.ts",
      dependencies: [
        { specifier: "npm:@scope/lib@1.0.0", npmPackage: "@scope/lib@1.0.0_peer@2.0.0" },
        { specifier: "node:util", code: { specifier: "node:util" } },
      ],
    },
    { kind: "npm", specifier: "npm:/@scope/lib@1.0.0", npmPackage: "@scope/lib@1.0.0_peer@2.0.0" },
    { kind: "node", specifier: "node:util" },
  ],
  npmPackages: {
    "@scope/lib@1.0.0_peer@2.0.0": {
      name: "@scope/lib",
      version: "1.0.0",
      dependencies: ["helper@3.1.4", "peer@2.0.0"],
    },
    "helper@3.1.4": { name: "helper", version: "3.1.4", dependencies: [] },
    "peer@2.0.0": { name: "peer", version: "2.0.0", dependencies: [] },
    "unused@9.9.9": { name: "unused", version: "9.9.9", dependencies: [] },
  },
};
const NPM_OPTIONS = {
  version: VERSION,
  denoVersion: "2.9.6",
  root: "/repo",
  sha256: { "file:///repo/src/main.ts": "a".repeat(64) },
  license: "Apache-2.0",
};

Deno.test("cyclonedxSbom() lists the npm packages imported and theirs, by purl, and no others", async () => {
  const document = await cyclonedxSbom(NPM_GRAPH, NPM_OPTIONS);
  _assertValid(document);
  _assertRefsResolve(document);
  const libraries = document.components.filter((component) => component.type === "library");
  assert.deepEqual(libraries.map((library) => library.purl), [
    "pkg:npm/%40scope/lib@1.0.0",
    "pkg:npm/helper@3.1.4",
    "pkg:npm/peer@2.0.0",
  ]);
  const main = document.dependencies.find((dependency) => dependency.ref === "src/main.ts");
  // node:util is part of the runtime.
  assert.deepEqual(main?.dependsOn, ["deno-runtime", "pkg:npm/%40scope/lib@1.0.0"]);
  assert.deepEqual(document.metadata.component.licenses, [{ expression: "Apache-2.0" }]);
});

Deno.test("cyclonedxSbom() names the module whose SHA-256 is missing", async () => {
  await assert.rejects(
    () => cyclonedxSbom(NPM_GRAPH, { ...NPM_OPTIONS, sha256: {} }),
    (error: unknown) =>
      error instanceof TypeError && error.message.includes("file:///repo/src/main.ts has none"),
  );
});

Deno.test("scripts/sbom.ts run on its own prints the bytes build.ts writes for this version", async () => {
  const { version, license } = JSON.parse(await Deno.readTextFile(`${ROOT}/deno.json`)) as {
    version: string;
    license?: string;
  };
  const printed = await runCommand(Deno.execPath(), [
    "run",
    "--allow-read",
    "--allow-run",
    `${ROOT}/scripts/sbom.ts`,
  ]);
  assert.equal(printed.code, 0, printed.stderr);
  // build.ts passes deno.json's licence when it has one, as the script does.
  const expected = await sbomOfEntry("src/main.ts", {
    root: ROOT,
    version,
    ...(license === undefined ? {} : { license }),
  });
  assert.equal(printed.stdout, `${JSON.stringify(expected, null, 2)}\n`);
});
