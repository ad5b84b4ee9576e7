import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pinDirectory, WorkspaceDirectory } from '../../src/runtime/workspace/workspace-directory.js';
import { WorkspaceFiles } from '../../src/runtime/workspace/workspace-files.js';
import type { AnyToolDefinition, ToolContext, ToolResult } from '../../src/runtime/tools/define-tool.js';

/** A temporary workspace for tool tests, with a sibling directory outside it holding a secret. */
export interface TestWorkspace {
  /** Canonical workspace directory. */
  readonly root: string;
  /** A directory next to the workspace (outside the confinement) containing `secret.txt`. */
  readonly outside: string;
  /** Output deltas streamed by tools through the context. */
  readonly deltas: string[];
  /** A tool context for this workspace (optionally with a caller-owned abort signal). */
  context(signal?: AbortSignal): ToolContext;
  /** Write a file (parents created) relative to the workspace. */
  file(relPath: string, content: string | Buffer): string;
  /** Remove everything. */
  cleanup(): void;
}

/** Confined file access to a directory, pinned now (what the invoker gives a call as `ctx.files`). */
export function workspaceFilesFor(dir: string): WorkspaceFiles {
  return new WorkspaceFiles(new WorkspaceDirectory(pinDirectory(dir)));
}

/** Create a temp workspace (realpath'd, as the invoker passes it) and an outside sibling. */
export function createTestWorkspace(): TestWorkspace {
  const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'a3s-tools-')));
  const root = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'secret.txt'), 'top secret\n');
  const deltas: string[] = [];
  const directory = new WorkspaceDirectory(pinDirectory(root));
  return {
    root,
    outside,
    deltas,
    context(signal = new AbortController().signal) {
      return {
        workspace: root,
        files: new WorkspaceFiles(directory),
        signal,
        sessionId: 'session-1',
        runId: 'run-1',
        toolCallId: 'call-1',
        onOutput: (delta) => deltas.push(delta),
      };
    },
    file(relPath, content) {
      const abs = path.join(root, relPath);
      mkdirSync(path.dirname(abs), { recursive: true });
      writeFileSync(abs, content);
      return abs;
    },
    cleanup() {
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/** Run a tool the way the invoker does: parse the arguments with its schema, then execute. */
export function runTool(tool: AnyToolDefinition, args: unknown, ctx: ToolContext): Promise<ToolResult> {
  return tool.execute(tool.parameters.parse(args), ctx);
}
