/**
 * Describes what a service-ci binary is made of as a CycloneDX 1.6 SBOM (JSON): the Deno
 * runtime `deno compile` embeds, and every module compiled in, each with its SHA-256, read
 * from `deno info --json` of the entry module. `scripts/build.ts` writes it next to the
 * archives as `service-ci-<version>.cdx.json`.
 *
 * The SBOM has no timestamp, and its serial number is a UUIDv5 of its own content, so the same
 * source and Deno give the same bytes, and a reviewer can rebuild it and compare: run from a
 * checkout of the release's tag, `deno run --allow-read --allow-run scripts/sbom.ts` prints what
 * the release published. (actions/attest refuses a CycloneDX document without `serialNumber`.)
 */

import { relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The parts of `deno info --json` output that an SBOM reads. */
export interface DenoInfo {
  /** The entry modules' specifiers. */
  readonly roots: readonly string[];
  /** Every module of the graph. */
  readonly modules: readonly DenoInfoModule[];
  /** npm packages by `name@version` (the lock file's, not only the graph's). */
  readonly npmPackages?: Readonly<Record<string, DenoInfoNpmPackage>>;
}

/** One module of {@linkcode DenoInfo}. */
export interface DenoInfoModule {
  /** `esm`, `asserted` (JSON), `npm`, `node` (a built-in) or `external`. */
  readonly kind: string;
  /** Its specifier, e.g. `file:///repo/src/main.ts`, `npm:/yaml@2.6.1`, `node:util`. */
  readonly specifier: string;
  /** Where its text is on disk (local files and cached remote modules). */
  readonly local?: string;
  /** Its npm package, `name@version`, for `kind: "npm"`. */
  readonly npmPackage?: string;
  /** What it imports. */
  readonly dependencies?: readonly {
    readonly specifier: string;
    readonly code?: { readonly specifier?: string };
    readonly type?: { readonly specifier?: string };
    readonly npmPackage?: string;
  }[];
}

/** One npm package of {@linkcode DenoInfo}. */
export interface DenoInfoNpmPackage {
  /** The package's name, e.g. `@scope/name`. */
  readonly name: string;
  /** Its exact version. */
  readonly version: string;
  /** The `name@version` keys of the packages it depends on. */
  readonly dependencies: readonly string[];
}

/** What {@linkcode cyclonedxSbom} needs besides the module graph. */
export interface SbomOptions {
  /** service-ci's version, from deno.json. */
  readonly version: string;
  /** The Deno version whose runtime the binary embeds, e.g. `2.9.6`. */
  readonly denoVersion: string;
  /** The repository's directory: local modules are named by their path relative to it. */
  readonly root: string;
  /** The SHA-256 (lowercase hex) of each local module's file, by specifier. */
  readonly sha256: Readonly<Record<string, string>>;
  /** deno.json's `license` (an SPDX expression), when it has one. */
  readonly license?: string;
}

/** A CycloneDX 1.6 component, as far as {@linkcode cyclonedxSbom} writes one. */
export interface SbomComponent {
  /** `application` (the program), `platform` (the runtime), `file` (a module), `library`. */
  readonly type: "application" | "platform" | "file" | "library";
  /** The name other parts of the SBOM refer to it by. */
  readonly "bom-ref": string;
  /** A module's path in the repository, or a package's or program's name. */
  readonly name: string;
  /** The exact version, where it has one. */
  readonly version?: string;
  /** What it is, in a sentence. */
  readonly description?: string;
  /** Its package URL, e.g. `pkg:npm/yaml@2.6.1`. */
  readonly purl?: string;
  /** The SHA-256 of a module's file. */
  readonly hashes?: readonly { readonly alg: "SHA-256"; readonly content: string }[];
  /** The program's licence, as an SPDX expression. */
  readonly licenses?: readonly { readonly expression: string }[];
  /** Where to read more about it. */
  readonly externalReferences?: readonly { readonly type: string; readonly url: string }[];
}

/** A CycloneDX 1.6 JSON document, as far as {@linkcode cyclonedxSbom} writes one. */
export interface SbomDocument {
  /** Always `CycloneDX`. */
  readonly bomFormat: "CycloneDX";
  /** The CycloneDX version the document follows. */
  readonly specVersion: "1.6";
  /** `urn:uuid:` and the UUIDv5 of the rest of the document (see {@linkcode sbomSerialNumber}). */
  readonly serialNumber: string;
  /** The document's revision; a release writes one. */
  readonly version: 1;
  /** What wrote the SBOM, and what it describes: the service-ci program. */
  readonly metadata: {
    readonly tools: { readonly components: readonly SbomComponent[] };
    readonly component: SbomComponent;
  };
  /** The runtime, the modules and the npm packages in the binary. */
  readonly components: readonly SbomComponent[];
  /** Which component needs which, by `bom-ref`. */
  readonly dependencies: readonly { readonly ref: string; readonly dependsOn: readonly string[] }[];
}

const RUNTIME_REF = "deno-runtime";
const PROGRAM_REF = "service-ci";

/**
 * Builds the SBOM of the binary compiled from the graph `info` (`deno info --json` of the
 * entry module): the program, the Deno runtime it embeds, each module (a `file` with its
 * SHA-256) and each npm package (a `library` with its purl), and which imports which.
 * Built-in `node:` modules are part of the runtime. Its `serialNumber` is derived from the rest
 * ({@linkcode sbomSerialNumber}). Rejects with a `TypeError` naming the module whose SHA-256 is
 * missing from `options.sha256`.
 *
 * @example
 * ```ts
 * const sbom = await cyclonedxSbom(
 *   {
 *     roots: ["file:///repo/src/main.ts"],
 *     modules: [{ kind: "esm", specifier: "file:///repo/src/main.ts", local: "/repo/src/main.ts" }],
 *   },
 *   {
 *     version: "1.0.0",
 *     denoVersion: "2.9.6",
 *     root: "/repo",
 *     sha256: { "file:///repo/src/main.ts": "0".repeat(64) },
 *   },
 * );
 * sbom.components.map((component) => component.name); // ["deno", "src/main.ts"]
 * ```
 */
export async function cyclonedxSbom(
  info: DenoInfo,
  options: SbomOptions,
): Promise<SbomDocument> {
  const runtime: SbomComponent = {
    type: "platform",
    "bom-ref": RUNTIME_REF,
    name: "deno",
    version: options.denoVersion,
    description: "The Deno runtime (denort) that deno compile embeds in the binary",
    purl: `pkg:github/denoland/deno@v${options.denoVersion}`,
    externalReferences: [{ type: "website", url: "https://deno.com" }],
  };
  const modules: SbomComponent[] = [];
  const refs = new Map<string, string>();
  for (const module of info.modules) {
    if (module.kind === "node") {
      refs.set(module.specifier, RUNTIME_REF);
    } else if (module.kind === "npm" && module.npmPackage !== undefined) {
      refs.set(module.specifier, _npmPurl(module.npmPackage));
    } else if (module.kind === "esm" || module.kind === "asserted") {
      const hash = options.sha256[module.specifier];
      if (hash === undefined || !/^[0-9a-f]{64}$/.test(hash)) {
        throw new TypeError(
          `options.sha256 must hold the SHA-256 of every module; ${module.specifier} has ${
            hash === undefined ? "none" : JSON.stringify(hash)
          }`,
        );
      }
      const name = _moduleName(module.specifier, options.root);
      refs.set(module.specifier, name);
      modules.push({
        type: "file",
        "bom-ref": name,
        name,
        hashes: [{ alg: "SHA-256", content: hash }],
      });
    }
  }

  // Keyed by purl: one package resolved with two sets of peers is one component.
  const npm = new Map([..._npmClosure(info)].map(([key, value]) => [_npmPurl(key), value]));
  const libraries = [...npm.keys()].toSorted().map((purl): SbomComponent => {
    const npmPackage = npm.get(purl)!;
    return {
      type: "library",
      "bom-ref": purl,
      name: npmPackage.name,
      version: npmPackage.version,
      purl,
    };
  });

  const dependencies: { ref: string; dependsOn: string[] }[] = [{
    ref: PROGRAM_REF,
    dependsOn: [RUNTIME_REF, ...info.roots.flatMap((root) => refs.get(root) ?? [])],
  }, { ref: RUNTIME_REF, dependsOn: [] }];
  for (const module of info.modules) {
    const ref = refs.get(module.specifier);
    if (ref === undefined || ref === RUNTIME_REF || module.kind === "npm") continue;
    const dependsOn = new Set<string>();
    for (const dependency of module.dependencies ?? []) {
      if (dependency.npmPackage !== undefined) {
        dependsOn.add(_npmPurl(dependency.npmPackage));
        continue;
      }
      const target = refs.get(dependency.code?.specifier ?? dependency.type?.specifier ?? "");
      if (target !== undefined) dependsOn.add(target);
    }
    dependencies.push({ ref, dependsOn: [...dependsOn].toSorted() });
  }
  for (const purl of [...npm.keys()].toSorted()) {
    dependencies.push({
      ref: purl,
      dependsOn: [...new Set(npm.get(purl)!.dependencies.map(_npmPurl))].toSorted(),
    });
  }

  const { bomFormat, specVersion, ...rest }: Omit<SbomDocument, "serialNumber"> = {
    bomFormat: "CycloneDX",
    specVersion: "1.6",
    version: 1,
    metadata: {
      tools: {
        components: [{
          type: "application",
          "bom-ref": "sbom-generator",
          name: "scripts/sbom.ts",
          description: "service-ci's SBOM writer, reading deno info --json",
        }],
      },
      component: {
        type: "application",
        "bom-ref": PROGRAM_REF,
        name: "service-ci",
        version: options.version,
        purl: `pkg:github/service-ci/service-ci@v${options.version}`,
        ...(options.license === undefined ? {} : { licenses: [{ expression: options.license }] }),
      },
    },
    components: [
      runtime,
      ...modules.toSorted((a, b) => a.name < b.name ? -1 : 1),
      ...libraries,
    ],
    dependencies: dependencies.toSorted((a, b) => a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0),
  };
  const serialNumber = await sbomSerialNumber({ bomFormat, specVersion, ...rest });
  return { bomFormat, specVersion, serialNumber, ...rest };
}

/**
 * The namespace of the SBOMs' serial numbers: the UUIDv5 of the repository's address in the
 * URL namespace of RFC 9562, `uuidV5(URL_NAMESPACE, "https://github.com/service-ci/service-ci")`.
 */
export const SBOM_NAMESPACE = "3cb20bdc-3105-5b04-bd36-716dff4073f9";

/**
 * The serial number of an SBOM: `urn:uuid:` and the UUIDv5 (name-based, SHA-1) of its JSON text
 * without `serialNumber`, in {@linkcode SBOM_NAMESPACE}. The same content has the same serial
 * number, so the SBOM stays reproducible; any change to the content changes it.
 *
 * @example
 * ```ts
 * const serial = await sbomSerialNumber({ bomFormat: "CycloneDX", specVersion: "1.6" });
 * serial.startsWith("urn:uuid:"); // true
 * ```
 */
export async function sbomSerialNumber(document: object): Promise<string> {
  const { serialNumber: _, ...content } = document as { serialNumber?: unknown };
  return `urn:uuid:${await uuidV5(SBOM_NAMESPACE, JSON.stringify(content))}`;
}

/**
 * A name-based UUID, version 5 (RFC 9562 §5.5): SHA-1 of the namespace's 16 bytes and the
 * name's UTF-8 bytes, cut to 16 bytes, with the version and variant bits set.
 *
 * @example
 * ```ts
 * // RFC 9562's DNS namespace and the name of its example.
 * await uuidV5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com");
 * // "2ed6657d-e927-568b-95e1-2665a8aea6a2"
 * ```
 */
export async function uuidV5(namespace: string, name: string): Promise<string> {
  const hex = namespace.replaceAll("-", "");
  if (!/^[0-9a-f]{32}$/i.test(hex)) {
    throw new TypeError(
      `namespace must be a UUID such as 6ba7b810-9dad-11d1-80b4-00c04fd430c8 (got "${namespace}")`,
    );
  }
  const nameBytes = new TextEncoder().encode(name);
  const input = new Uint8Array(16 + nameBytes.length);
  for (let i = 0; i < 16; i++) input[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  input.set(nameBytes, 16);
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-1", input)).slice(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const out = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${out.slice(0, 8)}-${out.slice(8, 12)}-${out.slice(12, 16)}-${out.slice(16, 20)}-${
    out.slice(20)
  }`;
}

/** What {@linkcode sbomOfEntry} needs besides the entry module. */
export interface EntrySbomOptions {
  /** The repository's directory, where `deno info` runs. */
  readonly root: string;
  /** service-ci's version, from deno.json. */
  readonly version: string;
  /** deno.json's `license`, when it has one. */
  readonly license?: string;
}

/**
 * Runs `deno info --json` on `entry` with the Deno running this script (the one that
 * compiles the binary), hashes every module file, and returns the SBOM of the binary
 * compiled from it (see {@linkcode cyclonedxSbom}).
 *
 * @example
 * ```ts
 * const sbom = await sbomOfEntry("src/main.ts", { root: Deno.cwd(), version: "1.0.0" });
 * ```
 */
export async function sbomOfEntry(
  entry: string,
  options: EntrySbomOptions,
): Promise<SbomDocument> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: options.root,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (output.code !== 0) {
    throw new Error(
      `deno info --json ${entry} failed (exit code ${output.code}): ${
        new TextDecoder().decode(output.stderr).trim()
      }`,
    );
  }
  const info = JSON.parse(new TextDecoder().decode(output.stdout)) as DenoInfo;
  const sha256: Record<string, string> = {};
  for (const module of info.modules) {
    if (module.local !== undefined && (module.kind === "esm" || module.kind === "asserted")) {
      sha256[module.specifier] = await _sha256Hex(await Deno.readFile(module.local));
    }
  }
  return await cyclonedxSbom(info, {
    version: options.version,
    denoVersion: Deno.version.deno,
    root: options.root,
    sha256,
    ...(options.license === undefined ? {} : { license: options.license }),
  });
}

/**
 * The SBOM's file name in a release: `service-ci-<version>.cdx.json`.
 *
 * @example
 * ```ts
 * sbomName("1.2.3"); // "service-ci-1.2.3.cdx.json"
 * ```
 */
export function sbomName(version: string): string {
  return `service-ci-${version}.cdx.json`;
}

// A module under the repository is named by its path there (src/main.ts); others keep their
// specifier (a remote URL).
function _moduleName(specifier: string, root: string): string {
  if (!specifier.startsWith("file:")) return specifier;
  const path = relative(root, fileURLToPath(specifier)).replaceAll("\\", "/");
  return path.startsWith("../") ? specifier : path;
}

// `pkg:npm/%40scope/name@1.2.3` from `@scope/name@1.2.3`; the peer suffix Deno adds to a
// version (`3.0.1_ajv@8.17.1`) is not part of it.
function _npmPurl(key: string): string {
  const at = key.indexOf("@", 1);
  const name = key.slice(0, at);
  return `pkg:npm/${name.replace(/^@/, "%40")}@${key.slice(at + 1).replace(/_.*$/, "")}`;
}

// The npm packages the graph imports, with everything they depend on.
function _npmClosure(info: DenoInfo): Map<string, DenoInfoNpmPackage> {
  const found = new Map<string, DenoInfoNpmPackage>();
  const pending = info.modules.flatMap((module) => module.npmPackage ?? []);
  while (pending.length > 0) {
    const key = pending.pop()!;
    const npmPackage = info.npmPackages?.[key];
    if (found.has(key) || npmPackage === undefined) continue;
    found.set(key, npmPackage);
    pending.push(...npmPackage.dependencies);
  }
  return found;
}

async function _sha256Hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

if (import.meta.main) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const denoJson = JSON.parse(await Deno.readTextFile(`${root}deno.json`)) as {
    version?: unknown;
    license?: unknown;
  };
  if (typeof denoJson.version !== "string") {
    console.error('sbom: deno.json "version" must be a string such as "1.2.3"');
    Deno.exit(1);
  }
  const document = await sbomOfEntry("src/main.ts", {
    root,
    version: denoJson.version,
    ...(typeof denoJson.license === "string" ? { license: denoJson.license } : {}),
  });
  console.log(JSON.stringify(document, null, 2));
}
