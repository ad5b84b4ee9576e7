// docs/seed-coverage.md against the code: every name of the seed's Appendix B has one row, every method marked
// `works` exists on the client's Session (or A3sClient), every event marked `emitted` is registered, every cited
// test file exists and names what it shows, and every other row gives its reason.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { A3sClient } from '../../src/client/a3s-client.js';
import type { HttpTransport } from '../../src/client/http-transport.js';
import { Session, type SessionInfo } from '../../src/client/session.js';
import { WebSocketSource } from '../../src/client/websocket-like.js';
import { EVENT_TYPES, SEED_EVENT_TYPES } from '../../src/protocol/event-catalog.js';
import { EVENT_PAYLOAD_SCHEMAS } from '../../src/protocol/event-registry.js';

const ROOT = new URL('../../', import.meta.url);
const DOC = readFileSync(new URL('docs/seed-coverage.md', ROOT), 'utf8');

// SEED-REFERENCE Appendix B, copied by hand (not derived from the doc or from src): Session, then Agent.
const APPENDIX_B_SESSION =
  `send run sendRequest stream streamRequest sendWithAttachments streamWithAttachments history resumeRun
spawnRunWithId spawnRecoveryWithRunId parallel parallelResumable pipeline steer interrupt runControlSnapshot
runs runSnapshot runEvents runEventPage currentRun activeTools traceEvents subagentTask subagentTasks pendingSubagentTasks
cancelSubagentTask cancelRun taskSchedulerStats taskSchedulerHealth modelGenerationPoolHealth modelMiddlewareHealth
cancel cancelAsync cancelAndSettle close closeAsync isClosed save sessionId workspace initWarning tenantId principal
agentTemplateId correlationId registerHook unregisterHook hookCount setBudgetGuard pendingConfirmations confirmToolUse
cancelConfirmations setOutputLanguage setSessionCheckpointExportSink registerCommand listCommands hasMemory
rememberSuccess rememberFailure recallSimilar recallByTags memoryRecent memoryStats getWorking clearWorking getShortTerm
clearShortTerm memoryMaintenanceHealth tool governedTool task delegateTask tasks program readFile writeFile ls editFile
patchFile bash glob grep webSearch git gitCommand toolNames toolDefinitions getArtifact workspaceRetrievalStatus
semanticSearch hybridSearch hasQueue setLaneHandler completeExternalTask pendingExternalTasks queueStats queueMetrics
deadLetters verificationReports recordVerificationReports verificationSummary verificationSummaryText verifyCommands
verificationPresets addSkill removeSkill skillNames registerAgentDir registerWorkerAgent registerWorkerAgents
registerDynamicWorkflowRuntime unregisterDynamicTool addMcpServer addMcpServerConfig addMcp removeMcpServer removeMcp
mcpStatus mcps republishInheritedMcpTools inheritsMcpManagers`.split(/\s+/);
const APPENDIX_B_AGENT =
  `create createFromConfig session sessionAsync resumeSession resumeSessionAsync replaceSessionAsync
sessionForAgent sessionForAgentAsync sessionForWorker sessionForWorkerAsync listSessions closeSession close isClosed
refreshMcpTools syncGlobalMcpServers globalMcpStatus disconnectIdleMcp taskSchedulerStats taskSchedulerHealth
serveAgentDir`.split(/\s+/);

interface Row {
  name: string;
  status: string;
  note: string;
  test: string;
}

/** The rows of the first table after a `## heading`: `name` is the first backticked cell. */
function table(heading: string, columns: { status: number; note: number; test: number }): Row[] {
  const start = DOC.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/seed-coverage.md has no "## ${heading}" section`);
  const end = DOC.indexOf('\n## ', start + 1);
  const lines = DOC.slice(start, end < 0 ? undefined : end)
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('|---'));
  return lines.slice(1).map((line) => {
    const cells = line
      .slice(1, -1)
      .split(' | ')
      .map((cell) => cell.trim());
    const name = /`([^`]+)`/.exec(cells.find((cell) => cell.startsWith('`')) ?? '')?.[1] ?? '';
    return { name, status: cells[columns.status], note: cells[columns.note], test: cells[columns.test] };
  });
}

const sessionRows = table('Session methods', { status: 2, note: 3, test: 4 });
const agentRows = table('Agent methods', { status: 1, note: 2, test: 3 });
const eventRows = table('Events', { status: 3, note: 4, test: 5 });

/** A Session as the client builds one (no request is made: every method is looked up, none called). */
function clientSession(): Record<string, unknown> {
  const info = { id: 's', workspace: '/w', labels: {}, initWarning: null, hasMemory: false, closed: false };
  return new Session(
    { transport: {} as HttpTransport, WebSocket: new WebSocketSource(undefined) },
    info as unknown as SessionInfo,
  ) as unknown as Record<string, unknown>;
}

function checkTestCell(row: Row, shown: string): void {
  if (row.test === '—') throw new Error(`${row.name}: a ${row.status} row needs the test that shows it`);
  expect(existsSync(new URL(row.test, ROOT)), `${row.name}: ${row.test} exists`).toBe(true);
  expect(readFileSync(new URL(row.test, ROOT), 'utf8'), `${row.test} names ${shown}`).toContain(shown);
}

describe('docs/seed-coverage.md', () => {
  it('has one row per Appendix B Session and Agent method, with a known status', () => {
    expect(sessionRows.map((r) => r.name)).toEqual(APPENDIX_B_SESSION);
    expect(agentRows.map((r) => r.name)).toEqual(APPENDIX_B_AGENT);
    for (const row of [...sessionRows, ...agentRows])
      expect(['works', 'refused', 'not backed', 'not yet'], row.name).toContain(row.status);
  });

  it('every Session method marked works is on the client Session, and its test calls it', () => {
    const session = clientSession();
    for (const row of sessionRows) {
      if (row.status === 'works' || row.status === 'refused') {
        expect(row.name in session, `Session has ${row.name}`).toBe(true);
        checkTestCell(row, `.${row.name}`);
      } else {
        expect(row.note, `${row.name}: the reason it is ${row.status}`).not.toBe('—');
      }
    }
  });

  it('every Agent method marked works is on A3sClient, and its test calls it', () => {
    for (const row of agentRows) {
      if (row.status === 'works' || row.status === 'refused') {
        expect(typeof (A3sClient.prototype as unknown as Record<string, unknown>)[row.name], row.name).toBe('function');
        checkTestCell(row, `.${row.name}(`);
      } else {
        expect(row.note, `${row.name}: the reason it is ${row.status}`).not.toBe('—');
      }
    }
  });

  it('lists every registered event in order; each emitted one is registered and named by its test', () => {
    expect(eventRows.map((r) => r.name)).toEqual([...EVENT_TYPES]);
    expect(eventRows.slice(0, SEED_EVENT_TYPES.length).map((r) => r.name)).toEqual([...SEED_EVENT_TYPES]);
    for (const row of eventRows) {
      expect(['emitted', 'not yet', 'not produced'], row.name).toContain(row.status);
      if (row.status === 'emitted') {
        expect(Object.keys(EVENT_PAYLOAD_SCHEMAS), `${row.name} is registered`).toContain(row.name);
        checkTestCell(row, row.name);
      } else {
        expect(row.note, `${row.name}: the reason it is ${row.status}`).not.toBe('—');
      }
    }
  });
});
