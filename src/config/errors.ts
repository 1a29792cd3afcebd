/** Bad input: the message is one line naming the input and what would be valid. Exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}
