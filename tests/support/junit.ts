/**
 * Runs xmllint (Debian libxml2-utils), the conforming XML parser and XSD validator the JUnit
 * tests trust, and registers those tests: skipped, saying so, where xmllint is missing; run (and
 * failed) in CI.
 */

import assert from "node:assert/strict";
import { toolTest } from "./tools.ts";

/** The Jenkins JUnit schema the reports must validate against. */
export const JUNIT_XSD: string = new URL("../fixtures/jenkins-junit.xsd", import.meta.url).pathname;

/**
 * Registers a test that needs xmllint (see {@linkcode toolTest}).
 *
 * @example
 * ```ts
 * xmlTest("--junit writes a valid report", async () => {
 *   await assertValidJunit("junit.xml");
 * });
 * ```
 */
export function xmlTest(name: string, fn: () => Promise<void>): void {
  toolTest(name, { tools: ["xmllint"] }, fn);
}

/** Options of {@linkcode xmllint}. */
export interface XmllintOptions {
  /** A document to give xmllint as a file after `args`; shown in the message where it fails. */
  readonly xml?: string;
}

/**
 * Runs xmllint with `args`, fails the test where xmllint fails (with its stderr), and returns
 * its stdout.
 *
 * @example
 * ```ts
 * const canonical = await xmllint(["--c14n"], { xml: "<a b='1'/>" });
 * ```
 */
export async function xmllint(
  args: readonly string[],
  options: XmllintOptions = {},
): Promise<string> {
  if (options.xml === undefined) return await _xmllint(args, args, "");
  const file = await Deno.makeTempFile({ suffix: ".xml" });
  try {
    await Deno.writeTextFile(file, options.xml);
    return await _xmllint(args, [...args, file], `\n${options.xml}`);
  } finally {
    await Deno.remove(file);
  }
}

async function _xmllint(
  shown: readonly string[],
  args: readonly string[],
  context: string,
): Promise<string> {
  const result = await new Deno.Command("xmllint", { args: [...args] }).output().catch((error) => {
    throw new Error("xmllint is required (apt-get install libxml2-utils)", { cause: error });
  });
  const decoder = new TextDecoder();
  const stderr = decoder.decode(result.stderr);
  assert.ok(result.success, `xmllint ${shown.join(" ")} failed:\n${stderr}${context}`);
  return decoder.decode(result.stdout);
}

/**
 * Fails the test unless the JUnit file `file` validates against {@linkcode JUNIT_XSD}.
 *
 * @example
 * ```ts
 * await assertValidJunit("test-results/service-ci.xml");
 * ```
 */
export async function assertValidJunit(file: string): Promise<void> {
  await xmllint(["--noout", "--schema", JUNIT_XSD, file]);
}

/**
 * The text xmllint's `--xpath` finds in `file`, without its last line end.
 *
 * @example
 * ```ts
 * const failures = await xpath("test-results/service-ci.xml", "string(/testsuites/@failures)");
 * ```
 */
export async function xpath(file: string, expression: string): Promise<string> {
  return (await xmllint(["--xpath", expression, file])).replace(/\n$/, "");
}
