/**
 * Delivers the finished run's reports so that every one of them shows the code the process
 * exits with. A report that turns out not to be writable is an input of that code
 * (`decideExitCode`), so every report already written is rewound and written again with it.
 */

import type { ReportFile } from "../effects.ts";
import type { RunReport } from "../result/outcome.ts";
import { decideExitCode } from "../result/exit_code.ts";
import { firstLine } from "../config/errors.ts";

export interface FileReport {
  /** For messages: `"the --junit report"`, `"GITHUB_OUTPUT"`. */
  readonly what: string;
  /** For a usage error: `"--junit"`, `"GITHUB_OUTPUT"`. */
  readonly source: string;
  /** Who can fix a path that cannot be written: `"it"` (the flag) or `"the step"`. */
  readonly fixedBy: string;
  readonly path: string;
  /** `--junit -`. */
  readonly stream?: "stdout" | "stderr";
  readonly append: boolean;
  readonly render: (report: RunReport) => string;
}

export interface DeliverDeps {
  /** Masked of every secret. */
  readonly render: (file: FileReport, report: RunReport) => string;
  /** `--json`'s, written to stdout after the files. */
  readonly document:
    | { readonly what: string; readonly render: (report: RunReport) => string }
    | undefined;
  readonly openReportFile: (report: FileReport) => Promise<ReportFile>;
  /** False when stdout could not take it. */
  readonly stdout: (text: string) => boolean;
  readonly warn: (line: string) => void;
}

/** Resolves with the report as finally delivered: its exit code is what every report shows. */
export async function deliverReports(
  report: RunReport,
  files: readonly FileReport[],
  deps: DeliverDeps,
): Promise<RunReport> {
  let current = report;
  const fail = (what: string, path: string, error: unknown) => {
    deps.warn(cannotWrite(what, path, error));
    const exitCode = decideExitCode(current.agents, {
      warnOnly: current.warnOnly,
      reportUndelivered: true,
    });
    current = { ...current, exitCode };
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
  // A failure drops the file (put back as it was, if it can be) and changes the code.
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
  // When a failure changes the code, what was written shows the old one: the files are rewound
  // and written again. The code changes once at most (a verdict becomes 3), so this ends.
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
    // A report that cannot be put in place changes the code: those already placed are written
    // again.
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

/** For the reports whose failure is one line and does not change the code. */
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

export function cannotWrite(what: string, path: string, error: unknown): string {
  return `service-ci: cannot write ${what} (${path}): ${firstLine(error)}`;
}
