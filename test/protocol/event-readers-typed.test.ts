import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SEED_PAYLOADS = join(root, 'src/protocol/seed-event-payloads.ts');

/** Two payload fields renamed in the registry, as a commit renaming them would (text exactly as the registry has it). */
const RENAMES: readonly (readonly [from: string, to: string])[] = [
  ['    exit_code: z.number().int(),', '    exit_status: z.number().int(),'],
  [
    'confirmation_required: z.object({\n    tool_id: z.string(),',
    'confirmation_required: z.object({\n    call_id: z.string(),',
  ],
];

/** Every reader of those events, and the old field names `tsc` must then report it reads. */
const NODE_READERS: Record<string, readonly string[]> = {
  'src/client/agent-event.ts': ['exit_code', 'tool_id'],
  'src/cli/follow-run.ts': ['exit_code', 'tool_id'],
  'src/interop/agui/agui-event-mapper.ts': ['exit_code', 'tool_id'],
  'src/interop/agui/agui-interrupt-ledger.ts': ['tool_id'],
  'src/interop/acp/acp-run-updates.ts': ['exit_code'],
  'src/interop/acp/acp-permission.ts': ['tool_id'],
};
const CONSOLE_READERS: Record<string, readonly string[]> = {
  'web/src/tool-card.ts': ['exit_code'],
  'web/src/session-view.ts': ['tool_id'],
  'web/src/run-block.ts': ['tool_id'],
};

/**
 * Type-check `readers` under `tsconfig` with the registry file replaced in memory by its renamed text (the
 * checkout is not touched); answers each reader's diagnostics, one message a line.
 */
function diagnosticsWithRenames(tsconfig: string, readers: readonly string[]): Record<string, string> {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, tsconfig),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error(`${tsconfig} did not parse`);
  const options: ts.CompilerOptions = {
    ...config.options,
    noEmit: true,
    incremental: false,
    tsBuildInfoFile: undefined,
  };
  const host = ts.createCompilerHost(options);
  const original = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, ...rest) => {
    if (fileName !== SEED_PAYLOADS) return original(fileName, language, ...rest);
    let text = ts.sys.readFile(fileName) ?? '';
    for (const [from, to] of RENAMES) {
      if (!text.includes(from)) throw new Error(`the registry no longer has ${JSON.stringify(from)}: update RENAMES`);
      text = text.replace(from, to);
    }
    return ts.createSourceFile(fileName, text, language);
  };
  const program = ts.createProgram(
    readers.map((file) => join(root, file)),
    options,
    host,
  );
  const out: Record<string, string> = {};
  for (const file of readers) {
    const source = program.getSourceFile(join(root, file));
    if (!source) throw new Error(`${file} is not in the program`);
    out[file] = ts
      .getPreEmitDiagnostics(program, source)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0])
      .join('\n');
  }
  return out;
}

function expectEveryReaderFails(found: Record<string, string>, readers: Record<string, readonly string[]>): void {
  for (const [file, fields] of Object.entries(readers)) {
    for (const field of fields)
      expect(found[file], `${file} reads ${field}`).toContain(`Property '${field}' does not exist`);
  }
}

describe('event readers are typed by the registry', () => {
  // `npm run typecheck` proves these files compile as they are; here the same files with two payload fields
  // renamed in the registry must not: every reader names the old field in a tsc error.
  it('renaming tool_end.exit_code and confirmation_required.tool_id fails tsc in the client, the CLI, AG-UI and ACP', () => {
    expectEveryReaderFails(diagnosticsWithRenames('tsconfig.json', Object.keys(NODE_READERS)), NODE_READERS);
  }, 120_000);

  it('and in the console', () => {
    expectEveryReaderFails(diagnosticsWithRenames('web/tsconfig.json', Object.keys(CONSOLE_READERS)), CONSOLE_READERS);
  }, 120_000);
});
