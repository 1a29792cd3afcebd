/** What a CI provider is: how it is detected and where it keeps each metadata field. */

import type { GitRunner } from "../effects.ts";

/** Trimmed, or `null` when unset or blank. */
export type Read<V extends string = string> = (name: V) => string | null;

export interface ProviderContext<V extends string = string> {
  readonly read: Read<V>;
  readonly git: GitRunner;
  /**
   * `undefined`: unset, unreadable or not JSON; not a regular file, or too large: a usage error.
   */
  readonly readJson: (variable: V) => Promise<unknown>;
  /** Found first (`null` while it is), so commit and branch can pick the change's head. */
  readonly pullRequest: number | null;
}

/** As the provider keeps it (a full ref, a number as text); `detectCiBuild()` normalizes it. */
export type RawValue = string | null | Promise<string | null>;

type Field<V extends string> = readonly V[] | ((context: ProviderContext<V>) => RawValue);

/** A change merged with its target before it lands: a merge queue, train or merged results. */
export type MergeKind = "merge_queue" | "merge_train" | "merged_result";

/**
 * `V`: the variables it reads; reading another is a type error, so `variables` cannot fall behind.
 */
export interface CiProvider<V extends string = string> {
  /** The `provider` value sent to the service. */
  readonly id: string;
  readonly name: string;
  /** Every name the provider gives: its fields', `detect`'s and `reads` (what only functions read). */
  readonly variables: readonly V[];
  /** Its variable set to `true` (any case), its variable set at all, or a test. */
  readonly detect: { true: V } | { set: V } | ((read: Read<V>) => boolean);
  /** Absent where the CI does not keep the field (as `--pull-request`, `--actor`, … can give it). */
  readonly pullRequest?: Field<V>;
  /** The change's head on a pull request. */
  readonly commitSha: Field<V>;
  /** On a PR the source branch (first `source` set; `branch` is then its target); none on a tag. */
  readonly branch?: Field<V> | { branch: V; tag?: V; source?: V | readonly V[] };
  readonly repository?: Field<V>;
  readonly actor?: Field<V>;
  readonly buildUrl: Field<V>;
  /** Reads variables only: the answer needs no file. */
  readonly merge?: (read: Read<V>) => MergeKind | null;
  readonly baseRef?: Field<V>;
  /** Not sent: contract §1. */
  readonly mergeSha?: Field<V>;
  /** Default `PR #7`. */
  readonly changeLabel?: (number: number) => string;
  /** A local runner that sets the CI's variables but not its switch: said in "no CI detected". */
  readonly almostDetected?: (read: Read<V>) => string | null;
  /**
   * The CI's own debug switch (a re-run with debug logging), which turns `--verbose` on, and the
   * form its log shows debug lines in: GitHub's `::debug::`, Azure's `##[debug]`, or plain.
   */
  readonly debug?: {
    readonly variable: V;
    readonly on: (value: string) => boolean;
    readonly format: "github" | "azure" | "plain";
  };
  /**
   * The CI's parameters for the branch and pull request, outside the environment: what a user
   * passes as `--branch`/`--pull-request`. Named when no branch was found (docs/ci/teamcity.md).
   */
  readonly parameters?: {
    readonly branch: string;
    readonly pullRequest: { readonly branch: string; readonly number: string };
  };
}

/** `const V` makes the names the declaration gives the exact set its functions may read. */
export function provider<const V extends string>(
  declared: Omit<CiProvider<V>, "variables"> & { readonly reads?: readonly V[] },
): CiProvider {
  // Every object but `parameters` (the CI's own) names variables, and so does `debug.variable`.
  const { parameters: _parameters, debug, ...fields } = declared;
  const names = Object.values(fields).flatMap((value) =>
    typeof value === "object" ? Object.values(value).flat() : []
  ).concat(debug === undefined ? [] : [debug.variable]);
  return { ...declared, variables: [...new Set(names)] } as unknown as CiProvider;
}

/** A field's value: its first variable that is set, or what its function finds. */
export function fieldValue(field: CiProvider["branch"], context: ProviderContext): RawValue {
  const { read, pullRequest } = context;
  if (field === undefined) return null;
  if (typeof field === "function") return field(context);
  if (Array.isArray(field)) return first(read, field);
  const { branch, tag, source } = field as Exclude<typeof field, readonly string[]>;
  return source !== undefined && pullRequest !== null
    ? first(read, [source].flat())
    : unlessTag(read(branch), tag === undefined ? null : read(tag));
}

export function first<V extends string>(read: Read<V>, names: readonly V[]): string | null {
  return names.map(read).find((value) => value !== null) ?? null;
}

/** Several providers put the tag's name in their branch variable on tag builds: a tag has none. */
export function unlessTag(branch: string | null, tag: string | null): string | null {
  return tag === null ? branch : null;
}
