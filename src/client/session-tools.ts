import type { z } from 'zod';
import type { ToolListResponseSchema, ToolResultResponseSchema } from '../protocol/http.js';
import type { ProgramBody } from '../protocol/program-args.js';
import type { SubagentTaskSnapshot, TaskRequest } from '../protocol/subagent-task.js';
import { toA3sError, type A3sError } from './a3s-error.js';
import { seg } from './http-transport.js';
import { falseOn, sessionPath, type SessionContext } from './session-context.js';

/** The seed SDK's ToolResult `{name, output, exitCode, metadata}`, with the server's extras. */
export type ToolResult = z.infer<typeof ToolResultResponseSchema>;
/** A tool as listed by the session (name, description, JSON-schema parameters, readOnly). */
export type ToolDefinition = z.infer<typeof ToolListResponseSchema>['tools'][number];
/** Arguments of a tool call. */
export type ToolArgs = Record<string, unknown>;
/** One task of `tasks()`, as the seed writes it. */
export type TaskSpec = Exclude<TaskRequest, { tasks: unknown }>;
/** `tasks()` options beside the list. */
export type TasksOptions = Omit<Extract<TaskRequest, { tasks: unknown }>, 'tasks'>;

/** Most pages glob() reads before it stops (each page holds up to the tool's page size). */
const MAX_GLOB_PAGES = 50;

/** Host-direct and governed tool calls, with the seed's helper names (read, write, glob, grep, bash, git, program, task). */
export class SessionTools {
  constructor(private readonly ctx: SessionContext) {}

  /** Host-direct call of any tool (needs the host_direct scope): POST .../tools/:name. */
  tool(name: string, args: ToolArgs = {}): Promise<ToolResult> {
    return this.ctx.transport.post<ToolResult>(sessionPath(this.ctx, `/tools/${seg(name)}`), { args });
  }

  /** Governed direct call: policy, hooks, budget and confirmation apply: POST .../tools/:name/governed. */
  governedTool(name: string, args: ToolArgs = {}): Promise<ToolResult> {
    return this.ctx.transport.post<ToolResult>(sessionPath(this.ctx, `/tools/${seg(name)}/governed`), { args });
  }

  /** The session's tools with their JSON-schema definitions. */
  async toolDefinitions(): Promise<ToolDefinition[]> {
    return (await this.ctx.transport.get<z.infer<typeof ToolListResponseSchema>>(sessionPath(this.ctx, '/tools')))
      .tools;
  }

  /** The session's tool names. */
  async toolNames(): Promise<string[]> {
    return (await this.toolDefinitions()).map((tool) => tool.name);
  }

  /**
   * Read a file of the workspace (the `read` tool): its output, line numbers as the tool gives them (the seed's
   * `readFile` answers the string; as there, a failed read answers its error text: `tool('read', ...)` has the exitCode).
   */
  async readFile(path: string, options: { offset?: number; limit?: number } = {}): Promise<string> {
    return outputOf(await this.tool('read', { file_path: path, ...options }));
  }

  /** Write a file of the workspace (the `write` tool). */
  writeFile(path: string, content: string, options: { mode?: 'overwrite' | 'append' } = {}): Promise<ToolResult> {
    return this.tool('write', { file_path: path, content, ...options });
  }

  /** List a directory of the workspace (the `ls` tool). */
  ls(path?: string, options: ToolArgs = {}): Promise<ToolResult> {
    return this.tool('ls', { ...(path !== undefined ? { path } : {}), ...options });
  }

  /** Replace text in a file (the `edit` tool). */
  editFile(
    path: string,
    oldString: string,
    newString: string,
    options: { replaceAll?: boolean; dryRun?: boolean } = {},
  ): Promise<ToolResult> {
    return this.tool('edit', {
      file_path: path,
      old_string: oldString,
      new_string: newString,
      ...(options.replaceAll !== undefined ? { replace_all: options.replaceAll } : {}),
      ...(options.dryRun !== undefined ? { dry_run: options.dryRun } : {}),
    });
  }

  /** Apply a unified diff (the `patch` tool). */
  patchFile(path: string, diff: string): Promise<ToolResult> {
    return this.tool('patch', { file_path: path, diff });
  }

  /** Paths matching a glob, relative to the workspace, every page read (the seed answers string[]). */
  async glob(pattern: string, options: { path?: string } = {}): Promise<string[]> {
    const paths: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_GLOB_PAGES; page++) {
      const result = await this.tool('glob', { pattern, ...options, ...(cursor !== undefined ? { cursor } : {}) });
      if (result.exitCode !== 0) throw toolFailure(result);
      const meta = result.metadata.page as { returned_items?: number; next_cursor?: string | null } | undefined;
      const count = meta?.returned_items ?? 0;
      paths.push(...result.output.split('\n').slice(0, count));
      cursor = meta?.next_cursor ?? undefined;
      if (cursor === undefined) break;
    }
    return paths;
  }

  /**
   * Search file contents (the `grep` tool; options are the tool's: path, glob, context, `-i`, output_mode, ...): its
   * output (the seed answers the string, a failed search's error text included).
   */
  async grep(pattern: string, options: ToolArgs = {}): Promise<string> {
    return outputOf(await this.tool('grep', { pattern, ...options }));
  }

  /**
   * Run a shell command in the workspace (the `bash` tool; options: timeout, ...): its output (the seed answers the
   * string, whatever the exit code); use `tool('bash', {command})` for the exitCode.
   */
  async bash(command: string, options: ToolArgs = {}): Promise<string> {
    return outputOf(await this.tool('bash', { command, ...options }));
  }

  /**
   * A git command (the `git` tool): `git('status')`, named arguments `git('log', {limit: 5})`, or the seed's
   * positional form `git(command, subcommand, name, path, newBranch, base, force, maxCount, message,
   * includeUntracked, target, reference)` (`git('log', undefined, undefined, undefined, undefined, undefined, undefined, 5)`).
   */
  git(command: string, ...rest: unknown[]): Promise<ToolResult> {
    const [first] = rest;
    if (
      rest.length <= 1 &&
      (first === undefined || (typeof first === 'object' && first !== null && !Array.isArray(first)))
    ) {
      return this.tool('git', { command, ...((first as ToolArgs | undefined) ?? {}) });
    }
    const args: ToolArgs = { command };
    GIT_POSITIONAL.forEach((name, index) => {
      if (rest[index] !== undefined && rest[index] !== null) args[name] = rest[index];
    });
    return this.tool('git', args);
  }

  /** Run a bounded QuickJS program host-direct: `{source | path, inputs, allowedTools, limits}`. */
  program(body: Partial<ProgramBody> & ({ source: string } | { path: string })): Promise<ToolResult> {
    return this.ctx.transport.post<ToolResult>(sessionPath(this.ctx, '/program'), body);
  }

  /** One host-selected task in a child session (`task`). */
  task(spec: TaskSpec): Promise<ToolResult> {
    return this.ctx.transport.post<ToolResult>(sessionPath(this.ctx, '/tasks'), spec);
  }

  /** Several tasks in parallel (`parallel_task`): the seed's `tasks([...])`, or `tasks({tasks, ...options})`. */
  tasks(specs: TaskSpec[] | ({ tasks: TaskSpec[] } & TasksOptions), options: TasksOptions = {}): Promise<ToolResult> {
    const body = Array.isArray(specs) ? { tasks: specs, ...options } : { ...specs, ...options };
    return this.ctx.transport.post<ToolResult>(sessionPath(this.ctx, '/tasks'), body);
  }

  /** The full output of a truncated tool result, null when the session does not hold it (any more). */
  async getArtifact(artifactId: string): Promise<unknown> {
    const answer = await falseOn(['NOT_FOUND'], () =>
      this.ctx.transport.get<{ artifact: unknown }>(sessionPath(this.ctx, `/artifacts/${seg(artifactId)}`)),
    );
    return answer === false ? null : answer.artifact;
  }

  /** The session's subagent task snapshots, oldest first. */
  async subagentTasks(): Promise<SubagentTaskSnapshot[]> {
    return (await this.ctx.transport.get<{ tasks: SubagentTaskSnapshot[] }>(sessionPath(this.ctx, '/tasks'))).tasks;
  }

  /** One subagent task snapshot (TaskNotFoundError for an unknown id). */
  subagentTask(taskId: string): Promise<SubagentTaskSnapshot> {
    return this.ctx.transport.get<SubagentTaskSnapshot>(sessionPath(this.ctx, `/tasks/${seg(taskId)}`));
  }

  /** The subagent tasks still queued or running (the seed's pendingSubagentTasks), oldest first. */
  async pendingSubagentTasks(): Promise<SubagentTaskSnapshot[]> {
    return (await this.subagentTasks()).filter((task) => task.status === 'queued' || task.status === 'running');
  }

  /** Cancel a queued or running subagent task: false when it already finished or is unknown (the seed's answer). */
  async cancelSubagentTask(taskId: string): Promise<boolean> {
    const answer = await falseOn(['TASK_NOT_FOUND'], () =>
      this.ctx.transport.post<{ cancelled: boolean }>(sessionPath(this.ctx, `/tasks/${seg(taskId)}/cancel`)),
    );
    return answer !== false && answer.cancelled;
  }
}

/** The output of a result, as the seed's helpers answer it: a failed call's error text too (its exitCode is in `tool()`). */
function outputOf(result: ToolResult): string {
  return result.output;
}

/**
 * A tool result with a non-zero exit code as the seed's CodeError::Tool ("Tool error: {tool}: {message}"), code
 * TOOL_ERROR, for `glob`, whose answer (string[]) has no room for an error text; details keep the whole result.
 */
function toolFailure(result: ToolResult): A3sError {
  const text = result.output.length > 500 ? `${result.output.slice(0, 500)}...` : result.output;
  return toA3sError('TOOL_ERROR', `Tool error: ${result.name}: ${text}`, 0, {
    tool: result.name,
    exitCode: result.exitCode,
    result,
    ...(result.errorKind ? { errorKind: result.errorKind } : {}),
  });
}

/** The git tool's arguments in the order of the seed's positional `session.git(command, ...)` form. */
const GIT_POSITIONAL = [
  'subcommand',
  'name',
  'path',
  'new_branch',
  'base',
  'force',
  'max_count',
  'message',
  'include_untracked',
  'target',
  'ref',
] as const;
