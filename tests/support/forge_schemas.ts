/**
 * The request bodies GitLab and Bitbucket take, as their own API descriptions define them
 * (tests/fixtures/forges/, copied from the forges' descriptions: see its README.md), checked
 * with Ajv; a field outside the schema is refused, as GitHub's bodies are against its OpenAPI.
 *
 * ```ts
 * gitlabStatusErrors({ state: "success", name: "x" }); // []
 * ```
 */

import { Ajv, type ValidateFunction } from "npm:ajv@8.17.1";
import addFormatsModule from "npm:ajv-formats@3.0.1";

// ajv-formats is CommonJS: its function is the default export's own default (as in schema_test).
const addFormats = addFormatsModule.default ?? addFormatsModule;

const _ajv = new Ajv({ allErrors: true, strict: false });
addFormats(_ajv);

function _load(name: string): ValidateFunction {
  const schema = JSON.parse(
    Deno.readTextFileSync(new URL(`../fixtures/forges/${name}.json`, import.meta.url)),
  );
  delete schema.$schema;
  return _ajv.compile(schema);
}

function _errors(validate: ValidateFunction, body: unknown): string[] {
  if (validate(body)) return [];
  return (validate.errors ?? []).map((error) =>
    error.keyword === "additionalProperties"
      ? `unknown field ${String(error.params.additionalProperty)}`
      : `${error.instancePath || "/"} ${error.message}`
  );
}

const _gitlabStatus = _load("gitlab_commit_status");
const _gitlabNote = _load("gitlab_note");
const _bitbucketStatus = _load("bitbucket_commitstatus");
const _bitbucketReport = _load("bitbucket_report");
const _bitbucketAnnotations = _load("bitbucket_annotation");

/** What is wrong with a body of `POST /projects/:id/statuses/:sha`; empty when nothing. */
export function gitlabStatusErrors(body: unknown): string[] {
  return _errors(_gitlabStatus, body);
}

/** What is wrong with a body of a merge request note's `POST` or `PUT`. */
export function gitlabNoteErrors(body: unknown): string[] {
  return _errors(_gitlabNote, body);
}

/** What is wrong with a body of Bitbucket's `POST …/statuses/build`. */
export function bitbucketStatusErrors(body: unknown): string[] {
  return _errors(_bitbucketStatus, body);
}

/** What is wrong with a body of Bitbucket's `PUT …/reports/{id}`. */
export function bitbucketReportErrors(body: unknown): string[] {
  return _errors(_bitbucketReport, body);
}

/** What is wrong with a body of Bitbucket's `POST …/reports/{id}/annotations`. */
export function bitbucketAnnotationErrors(body: unknown): string[] {
  return _errors(_bitbucketAnnotations, body);
}
