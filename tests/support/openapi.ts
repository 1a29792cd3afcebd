/**
 * Checks HTTP exchanges against docs/openapi.yaml with a real OpenAPI validator: openapi-backend
 * routes each request to its operation and validates parameters, bodies and answer headers with
 * Ajv's JSON Schema 2020-12 dialect (the one OpenAPI 3.1 uses). What openapi-backend leaves out
 * (declared status codes and media types, required answer headers, the security scheme, `Accept`)
 * is read from the same document here.
 */

import { OpenAPIBackend } from "npm:openapi-backend@5.21.2";
import { Ajv2020 } from "npm:ajv@8.17.1/dist/2020.js";
import addFormats from "npm:ajv-formats@3.0.1";
import { parse } from "npm:yaml@2.6.1";
import type { FakeServiceOptions, LoggedRequest } from "./fake_service.ts";

/** The OpenAPI description of the two operations. */
export const SPEC_PATH: string = new URL("../../docs/openapi.yaml", import.meta.url).pathname;

/** An answer as the client received it. */
export interface RecordedAnswer {
  readonly status: number;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** One request and the answer it got. */
export interface Exchange {
  readonly request: LoggedRequest;
  readonly answer: RecordedAnswer;
}

// The parts of the (dereferenced) document the checks below read.
interface _Header {
  readonly required?: boolean;
}
interface _Response {
  readonly headers?: Readonly<Record<string, _Header>>;
  readonly content?: Readonly<Record<string, unknown>>;
}
interface _Operation {
  readonly operationId: string;
  readonly responses: Readonly<Record<string, _Response>>;
  readonly requestBody?: { readonly content: Readonly<Record<string, unknown>> };
  readonly security?: ReadonlyArray<Readonly<Record<string, unknown>>>;
}
interface _Document {
  readonly security?: ReadonlyArray<Readonly<Record<string, unknown>>>;
  readonly components: {
    readonly securitySchemes: Readonly<
      Record<string, { readonly in: string; readonly name: string }>
    >;
  };
}
interface _AjvError {
  readonly instancePath: string;
  readonly message?: string;
}

/** The parsed docs/openapi.yaml, `$ref`s unresolved. */
export async function readSpec(): Promise<Record<string, unknown>> {
  return parse(await Deno.readTextFile(SPEC_PATH)) as Record<string, unknown>;
}

/** Validates requests and answers against docs/openapi.yaml. */
export class SpecValidator {
  readonly #api: OpenAPIBackend;
  readonly #document: _Document;

  private constructor(api: OpenAPIBackend, document: _Document) {
    this.#api = api;
    this.#document = document;
  }

  /** Loads the description; `spec` replaces it (for tests of the validator itself). */
  static async create(spec?: Record<string, unknown>): Promise<SpecValidator> {
    const api = new OpenAPIBackend({
      definition: structuredClone(spec ?? await readSpec()) as never,
      // openapi-backend checks documents against the OpenAPI 3.0 schema only; Redocly's lint
      // (tests/docs/openapi_test.ts) checks this 3.1 document. Quick mode skips that 3.0 check.
      quick: true,
      strict: true,
      ajvOpts: { allErrors: true },
      customizeAjv: (_ajv, options) => {
        const ajv = new Ajv2020({ ...options, strict: false });
        addFormats.default(ajv);
        return ajv as never;
      },
    });
    await api.init();
    return new SpecValidator(api, api.definition as unknown as _Document);
  }

  /** What is wrong with a request; empty when it follows the description. */
  checkRequest(request: LoggedRequest): string[] {
    const what = `${request.method} ${request.path}`;
    const operation = this.#operation(request);
    if (operation === undefined) return [`${what}: no operation of docs/openapi.yaml matches it`];
    const problems = _ajvProblems(
      this.#api.validateRequest(_asRequest(request), operation.operationId).errors,
    );
    for (const requirement of operation.security ?? this.#document.security ?? []) {
      for (const scheme of Object.keys(requirement)) {
        const { in: place, name } = this.#document.components.securitySchemes[scheme]!;
        if (place === "header" && !request.headers[name.toLowerCase()]) {
          problems.push(`header ${name} (security scheme ${scheme}) is missing`);
        }
      }
    }
    // OpenAPI ignores an `Accept` parameter; the answers' media types are what it must admit.
    const accept = request.headers["accept"] ?? "";
    for (const type of _successTypes(operation)) {
      if (!_accepts(accept, type)) {
        problems.push(`Accept ${JSON.stringify(accept)} refuses ${type}`);
      }
    }
    const contentType = _mediaType(request.headers["content-type"]);
    const declared = Object.keys(operation.requestBody?.content ?? {});
    if (request.body !== "" && !declared.includes(contentType)) {
      problems.push(
        `a body of type ${JSON.stringify(contentType)} (declared: ${
          declared.join(", ") || "none"
        })`,
      );
    }
    return problems.map((problem) => `${what}: ${problem}`);
  }

  /** What is wrong with the answer to a request; empty when it follows the description. */
  checkAnswer(request: LoggedRequest, answer: RecordedAnswer): string[] {
    const operation = this.#operation(request);
    if (operation === undefined) return [];
    const what = `${operation.operationId} answer ${answer.status}`;
    const key = [String(answer.status), `${Math.floor(answer.status / 100)}XX`, "default"]
      .find((candidate) => candidate in operation.responses);
    if (key === undefined) return [`${what}: status not declared`];
    const response = operation.responses[key]!;
    const problems = _ajvProblems(
      this.#api.validateResponseHeaders(answer.headers, operation.operationId, {
        statusCode: answer.status,
      }).errors,
    );
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      if (header.required && answer.headers[name.toLowerCase()] === undefined) {
        problems.push(`required header ${name} is missing`);
      }
    }
    const type = _mediaType(answer.headers["content-type"]);
    const declared = Object.keys(response.content ?? {});
    if (answer.body !== "" && !declared.includes(type)) {
      problems.push(
        `a body of type ${JSON.stringify(type)} (declared: ${declared.join(", ") || "none"})`,
      );
    } else if (type === "application/json") {
      let document: unknown;
      try {
        document = JSON.parse(answer.body);
      } catch {
        return [...problems, "a body that is not JSON"].map((problem) => `${what}: ${problem}`);
      }
      problems.push(
        ..._ajvProblems(
          this.#api.validateResponse(document, operation.operationId, answer.status).errors,
        ),
      );
    }
    return problems.map((problem) => `${what}: ${problem}`);
  }

  /** What is wrong with each request and answer, in order. */
  checkExchanges(exchanges: readonly Exchange[]): string[] {
    return exchanges.flatMap(({ request, answer }) => [
      ...this.checkRequest(request),
      ...this.checkAnswer(request, answer),
    ]);
  }

  #operation(request: LoggedRequest): _Operation | undefined {
    return this.#api.matchOperation(_asRequest(request)) as _Operation | undefined;
  }
}

/** Records what the fake service answered; pass `onExchange` to `startFakeService`. */
export function recordExchanges(): {
  readonly onExchange: NonNullable<FakeServiceOptions["onExchange"]>;
  /** Every exchange so far, once their bodies are read. */
  readonly exchanges: () => Promise<Exchange[]>;
} {
  const pending: Array<Promise<Exchange>> = [];
  return {
    onExchange: (request, response) => {
      pending.push((async () => ({
        request,
        answer: {
          status: response.status,
          headers: Object.fromEntries(response.headers),
          body: await response.text(),
        },
      }))());
    },
    exchanges: () => Promise.all(pending),
  };
}

function _asRequest(request: LoggedRequest) {
  const url = new URL(request.path, "http://service.invalid");
  return {
    method: request.method,
    path: url.pathname,
    query: url.search.slice(1),
    headers: request.headers,
    ...(request.body === "" ? {} : { body: request.body }),
  };
}

function _ajvProblems(errors: readonly _AjvError[] | null | undefined): string[] {
  return (errors ?? []).map((error) =>
    `${error.instancePath || "/"} ${error.message ?? "invalid"}`
  );
}

function _mediaType(value: string | undefined): string {
  return (value ?? "").split(";")[0]!.trim().toLowerCase();
}

function _successTypes(operation: _Operation): string[] {
  return Object.entries(operation.responses)
    .filter(([status]) => status.startsWith("2"))
    .flatMap(([, response]) => Object.keys(response.content ?? {}));
}

// An Accept header admits a media type through itself, `type/*` or `*/*`, at a quality above 0.
function _accepts(accept: string, type: string): boolean {
  return accept.split(",").some((entry) => {
    const [range = "", ...parameters] = entry.split(";").map((part) => part.trim().toLowerCase());
    const refused = parameters.some((parameter) => /^q=0(\.0*)?$/.test(parameter));
    const admits = range === type || range === "*/*" || range === `${type.split("/")[0]}/*`;
    return admits && !refused;
  });
}
