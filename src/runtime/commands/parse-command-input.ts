import { COMMAND_NAME } from '../../protocol/commands.js';

/** A run input that names a slash command: the name after `/` and the rest as its arguments. */
export interface CommandInput {
  readonly name: string;
  readonly args: string;
}

/**
 * The command an input names, or undefined when it is no command: `/name args` where name is a valid
 * command name. Text that merely starts with `/` and a path (`/usr/bin is ...`, whose first token holds
 * another `/`, or any first token that is no command name) goes to the model as usual.
 */
export function parseCommandInput(input: string): CommandInput | undefined {
  if (!input.startsWith('/')) return undefined;
  const match = /^\/(\S*)(?:\s+([\s\S]*))?$/.exec(input);
  const name = match?.[1];
  if (name === undefined || !COMMAND_NAME.test(name)) return undefined;
  return { name, args: (match?.[2] ?? '').trim() };
}
