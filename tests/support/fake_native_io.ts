/** A recording fake of the effects a native CI writer may use. */

import type { NativeIo } from "../../src/report/native_io.ts";

/** What a native writer did through {@linkcode fakeNativeIo}. */
export interface NativeIoRecord {
  readonly commands: string[];
  readonly warnings: string[];
  readonly files: Map<string, string>;
}

/** Options for {@linkcode fakeNativeIo}. */
export interface FakeNativeIoOptions {
  /** The environment the writer sees. */
  readonly env?: Readonly<Record<string, string>>;
  /** Makes every file write fail with this message. */
  readonly failWrites?: string;
  /** Makes every command print fail with this message. */
  readonly failCommands?: string;
}

/**
 * A fake `NativeIo` that records commands, warnings and files, and can fail writes or prints.
 *
 * @example
 * ```ts
 * const { io, record } = fakeNativeIo({ env: { TF_BUILD: "True" } });
 * io.command("##[group]x");
 * record.commands; // ["##[group]x"]
 * ```
 */
export function fakeNativeIo(
  options: FakeNativeIoOptions = {},
): { io: NativeIo; record: NativeIoRecord } {
  const record: NativeIoRecord = { commands: [], warnings: [], files: new Map() };
  const io: NativeIo = {
    command: (line) => {
      if (options.failCommands !== undefined) throw new Error(options.failCommands);
      record.commands.push(line);
    },
    warn: (line) => record.warnings.push(line),
    writeTextFile: (path, text, append) => {
      if (options.failWrites !== undefined) {
        return Promise.reject(new Error(options.failWrites));
      }
      record.files.set(path, (append ? record.files.get(path) ?? "" : "") + text);
      return Promise.resolve();
    },
    runCommand: () => Promise.resolve(undefined),
    makeFetch: () => () => Promise.reject(new Error("no network in this test")),
    env: (name) => options.env?.[name],
  };
  return { io, record };
}
