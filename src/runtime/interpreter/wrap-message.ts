/**
 * Wrapping one failure's message in another's without saying the same thing twice: an agent
 * error already reads `agent "X" failed (exit code 3)`, so the call site must not add
 * `agent "X" failed: ` in front of it, nor a step `step "S" failed: ` in front of its own.
 */

/**
 * `prefix + message`, unless `message` already starts with `subject` (the `agent "X"` or
 * `step "S"` the prefix names), in which case the message alone says it.
 */
export function wrapMessage(prefix: string, subject: string, message: string): string {
  return message.startsWith(subject) ? message : `${prefix}${message}`;
}
