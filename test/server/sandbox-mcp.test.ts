import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoServerConfig } from '../mcp/mcp-test-helpers.js';
import { eventually } from '../support/run-helpers.js';
import { bwrapWorks, hostProcessesWith } from '../sandbox/sandbox-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const HAVE_BWRAP = bwrapWorks();
if (!HAVE_BWRAP)
  console.warn('sandbox MCP tests skipped: bubblewrap (bwrap) is not installed or user namespaces are off');
/** The repository (fixture + node_modules), mounted read-only into the sandbox by config. */
const REPO = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

describe.skipIf(!HAVE_BWRAP)('stdio MCP servers a session adds run in its sandbox', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      config: { sandbox: { readOnlyPaths: [REPO] }, mcpServers: [echoServerConfig('global', 'global-marker-5521')] },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("a session's server answers from inside a PID namespace and is gone after removal; the global one runs on the host", async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    await request(t.url).post(`/v1/sessions/${id}/mcp`).send(echoServerConfig('own', 'own-marker-5521')).expect(201);
    const secret = (
      await request(t.url).post(`/v1/sessions/${id}/tools/mcp__own__get_secret`).send({ args: {} }).expect(200)
    ).body;
    expect(secret.output).toBe('own-marker-5521');
    const [own] = hostProcessesWith('own-marker-5521').filter(
      (pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'node',
    );
    expect(own).toBeDefined();
    // NSpid lists the pid in every namespace: two numbers for a process in a nested PID namespace.
    const nsOwn =
      /NSpid:\s+([\d\s]+)/
        .exec(readFileSync(`/proc/${own}/status`, 'utf8'))?.[1]
        ?.trim()
        .split(/\s+/) ?? [];
    expect(nsOwn.length).toBe(2);
    const [global] = hostProcessesWith('global-marker-5521');
    const nsGlobal =
      /NSpid:\s+([\d\s]+)/
        .exec(readFileSync(`/proc/${global}/status`, 'utf8'))?.[1]
        ?.trim()
        .split(/\s+/) ?? [];
    expect(nsGlobal.length).toBe(1);
    await request(t.url).delete(`/v1/sessions/${id}/mcp/own`).expect(200);
    await eventually(() => hostProcessesWith('own-marker-5521').length === 0, 'the sandboxed server to be gone');
  });
});
