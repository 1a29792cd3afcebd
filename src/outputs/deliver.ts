/**
 * Delivers the finished run's reports so that every one of them shows the code the process
 * exits with. The code is decided before anything is rendered; a report that turns out not to
 * be writable changes it (a verdict that did not reach its report cannot count as checked), and
 * then every report already written is rewound and written again with the new code.
 */

import type { ReportFile } from "../effects.ts";
import type { RunReport } from "../result/outcome.ts";

import { withUndeliveredReport } from "../result/outcome.ts";

/** One report written to a file. */
export interface FileReport {
  /** What the report is, for messages: `"the --junit report"`, `"GITHUB_OUTPUT"`. */
  readonly what: string;
  /** Where the path came from, for a usage error: `"--junit"`, `"GITHUB_OUTPUT"`. */
  readonly source: string;
  /** Who can fix a path that cannot be written: `"it"` (the flag) or `"the step"`. */
  readonly fixedBy: string;
  /** The file's path. */
  readonly path: string;
  /** Written to one of the program's own streams instead of a file (`--junit -`). */
  readonly stream?: "stdout" | "stderr";
  /** Append to what the file holds (`GITHUB_OUTPUT`) rather than replace it. */
  readonly append: boolean;
  /** The report's text for a finished run. */
  readonly render: (report: RunReport) => string;
}

/** The effects delivery needs. */
export interface DeliverDeps {
  /** A file report's text for a finished run, masked of every secret. */
  readonly render: (file: FileReport, report: RunReport) => string;
  /** The document written to stdout after the files (`--json`), if any, and what it is. */
  readonly document:
    | { readonly what: string; readonly render: (report: RunReport) => string }
    | undefined;
  /** Opens (creating, and unless `append` truncating) a report's file. */
  readonly openReportFile: (report: FileReport) => Promise<ReportFile>;
  /** Writes the document to stdout; false when stdout could not take it. */
  readonly stdout: (text: string) => boolean;
  /** One line of diagnostics on stderr. */
  readonly warn: (line: string) => void;
}

/**
 * Writes every file report, then the document (when there is one), and resolves with the
 * report as finally delivered: its exit code is the one every written report shows.
 */
export async function deliverReports(
  report: RunReport,
  files: readonly FileReport[],
  deps: DeliverDeps,
): Promise<RunReport> {
  let current = report;
  const fail = (what: string, path: string, error: unknown) => {
    deps.warn(cannotWrite(what, path, error));
    current = { ...current, exitCode: withUndeliveredReport(current.exitCode) };
  };
  const open: { report: FileReport; file: ReportFile }[] = [];
  for (const fileReport of files) {
    try {
      const file = await deps.openReportFile(fileReport);
      open.push({ report: fileReport, file });
    } catch (error) {
      fail(fileReport.what, fileReport.path, error);
    }
  }
  // Runs one operation on an open file; a failure drops the file (put back as it was, if it
  // can be) and changes the code.
  const attempt = async (entry: (typeof open)[number], operation: () => Promise<void>) => {
    try {
      await operation();
      return true;
    } catch (error) {
      fail(entry.report.what, entry.report.path, error);
      await entry.file.discard();
      open.splice(open.indexOf(entry), 1);
      return false;
    }
  };
  const rewindAll = async () => {
    for (const entry of [...open]) await attempt(entry, () => entry.file.rewind());
  };
  // Writes every open file with the current code. When a failure changes the code, what was
  // written shows the old one: the files are rewound and written again. The code changes once
  // at most (a verdict becomes 3), so this ends.
  const writeAll = async (): Promise<void> => {
    for (;;) {
      const code = current.exitCode;
      for (const entry of [...open]) {
        await attempt(entry, () => entry.file.write(deps.render(entry.report, current)));
        if (current.exitCode !== code) break;
      }
      if (current.exitCode === code) return;
      await rewindAll();
    }
  };
  try {
    await writeAll();
    if (deps.document !== undefined && !deps.stdout(deps.document.render(current))) {
      const code = current.exitCode;
      fail(deps.document.what, "stdout", new Error("stdout is closed"));
      if (current.exitCode !== code) {
        await rewindAll();
        await writeAll();
      }
    }
    // Each report is put in place; one that cannot be changes the code, and those already in
    // place are written again with it (the code changes once at most, so this ends).
    const code = current.exitCode;
    const placed: FileReport[] = [];
    for (const entry of [...open]) {
      if (await attempt(entry, () => entry.file.close())) placed.push(entry.report);
    }
    open.length = 0;
    if (current.exitCode !== code && placed.length > 0) {
      return await deliverReports(current, placed, { ...deps, document: undefined });
    }
  } finally {
    for (const entry of open) await entry.file.discard();
  }
  return current;
}

/**
 * Writes (or appends) one file in one go, for the reports outside {@linkcode deliverReports}
 * whose failure is one line and does not change the code.
 */
export async function writeReportFile(
  open: (path: string, append: boolean) => Promise<ReportFile>,
  path: string,
  text: string,
  append: boolean,
): Promise<void> {
  const file = await open(path, append);
  try {
    await file.write(text);
  } catch (error) {
    await file.discard();
    throw error;
  }
  await file.close();
}

/**
 * The one line that says a report could not be written.
 *
 * @example
 * ```ts
 * cannotWrite("the --junit report", "/dev/full", new Error("No space left on device"));
 * // "service-ci: cannot write the --junit report (/dev/full): No space left on device"
 * ```
 */
export function cannotWrite(what: string, path: string, error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  return `service-ci: cannot write ${what} (${path}): ${reason.split("\n")[0]}`;
}
