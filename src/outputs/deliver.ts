/**
 * Delivers the reports so each shows the code the process exits with. A report that turns out not
 * writable changes that code (`decideExitCode`), so those already written are rewritten with it.
 */

import type { Files, ReportFile } from "../effects.ts";
import { decideExitCode, type RunReport } from "../report/outcome.ts";
import type { Output } from "./streams.ts";
import type { FileReport, RunOutput } from "./output.ts";
import { firstLine } from "../text/quote.ts";

/** Resolves with the report as finally delivered; `--json`'s document follows the files. */
export async function deliverReports(
  report: RunReport,
  reports: readonly Pick<RunOutput, "name" | "files" | "document">[],
  output: Output,
  files: Pick<Files, "openReportFile">,
): Promise<RunReport> {
  let current = report;
  const fail = (what: string, path: string, error: unknown) => {
    output.stderr(`${cannotWrite(what, path, error)}\n`);
    const undelivered = { warnOnly: current.warnOnly, reportUndelivered: true };
    current = { ...current, exitCode: decideExitCode(current.agents, undelivered) };
  };
  let holder = reports.find((each) => each.document !== undefined);
  let pending = reports.flatMap((each) => each.files ?? []);
  for (;;) {
    const open: { report: FileReport; file: ReportFile }[] = [];
    for (const fileReport of pending) {
      try {
        const file = fileReport.stream === undefined
          ? await files.openReportFile(fileReport.path, fileReport.append)
          : _streamReport(output, fileReport.stream);
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
    // When a failure changes the code, what was written shows the old one: the files are rewound
    // and written again. The code changes once at most (a verdict becomes 3), so this ends.
    const writeAll = async (): Promise<void> => {
      const code = current.exitCode;
      for (const entry of [...open]) {
        await attempt(entry, () => entry.file.write(output.mask(entry.report.render(current))));
        if (current.exitCode !== code) return await rewriteAll();
      }
    };
    const rewriteAll = async () => {
      for (const entry of [...open]) await attempt(entry, () => entry.file.rewind());
      await writeAll();
    };
    try {
      await writeAll();
      if (holder?.document !== undefined && !output.document(holder.document(current))) {
        const code = current.exitCode;
        fail(holder.name, "stdout", new Error("stdout is closed"));
        if (current.exitCode !== code) await rewriteAll();
      }
      const code = current.exitCode;
      pending = [];
      for (const entry of [...open]) {
        if (await attempt(entry, () => entry.file.close())) pending.push(entry.report);
      }
      open.length = 0;
      if (current.exitCode === code || pending.length === 0) return current;
      holder = undefined;
    } finally {
      for (const entry of open) await entry.file.discard();
    }
  }
}

export function cannotWrite(what: string, path: string, error: unknown): string {
  return `service-ci: cannot write ${what} (${path}): ${firstLine(error)}`;
}

function _streamReport(output: Output, stream: "stdout" | "stderr"): ReportFile {
  return {
    write: (text) => {
      if (stream === "stderr") output.stderr(text);
      else if (!output.stdout(text)) return Promise.reject(new Error("stdout is closed"));
      return Promise.resolve();
    },
    rewind: () => Promise.reject(new Error(`${stream} cannot be rewritten`)),
    close: () => Promise.resolve(),
    discard: () => Promise.resolve(),
  };
}
