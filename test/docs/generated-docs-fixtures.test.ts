import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { EVENT_TYPES } from '../../src/protocol/event-catalog.js';
import { ToolInfoSchema } from '../../src/protocol/http.js';
import { defaultDocRegistries, eventDocs } from '../../src/server/doc-registries.js';
import { renderEventTable } from '../../src/server/render-event-table.js';
import { openApiYamlPath, renderGeneratedDocs, type GeneratedDocs } from '../../src/server/render-openapi.js';
import { toolListEntry, ToolRegistry } from '../../src/runtime/tools/tool-registry.js';
import { eventDocsWithFixture } from '../support/fixture-event.js';
import { builtinToolsWithFixture, fixtureEchoTool } from '../support/fixture-tool.js';

interface Document {
  'x-event-types': {
    type: string;
    catalog: string;
    payload: { properties?: Record<string, { type?: string }>; required?: string[] };
  }[];
  'x-builtin-tools': {
    name: string;
    readOnly: boolean;
    description: string;
    parameters: { properties?: Record<string, { type?: string; description?: string }>; required?: string[] };
  }[];
}

// The event table lives in docs/events.md (README links to it); `readme` is the generator's name for that text.
const README = readFileSync(new URL('../../docs/events.md', import.meta.url), 'utf8');

// A tool and an event added the way docs/architecture.md ("Where each kind of change goes") says a newcomer
// adds them, in test support code; the one generator of openapi.yaml and the event table of docs/events.md gets registries
// holding them, and they must show up everywhere the server's own do.
describe('a fixture tool and a fixture event, added as a newcomer adds them', () => {
  let generated: GeneratedDocs;
  let doc: Document;

  beforeAll(async () => {
    generated = await renderGeneratedDocs(README, { events: eventDocsWithFixture(), tools: builtinToolsWithFixture() });
    doc = parse(generated.openapiYaml) as Document;
  });

  it('the tool is in the tool list (the registry and the entries GET /v1/sessions/:id/tools answers)', () => {
    const registry = new ToolRegistry(builtinToolsWithFixture());
    expect(registry.get('FIXTURE_ECHO')).toBe(fixtureEchoTool);
    const listed = registry.list().map(toolListEntry);
    const entry = listed.find((tool) => tool.name === 'fixture_echo');
    expect(entry).toEqual({
      name: 'fixture_echo',
      readOnly: true,
      description: readFileSync(new URL('../support/fixture-tool.md', import.meta.url), 'utf8').trim(),
      parameters: expect.objectContaining({
        type: 'object',
        required: ['text'],
        properties: { text: expect.objectContaining({ type: 'string', description: 'The text to echo back.' }) },
      }) as unknown,
    });
    for (const tool of listed) expect(() => ToolInfoSchema.parse(tool), tool.name).not.toThrow();
  });

  it("the tool is in openapi.yaml's x-builtin-tools, after the built-ins, with its parameter schema", () => {
    const tools = doc['x-builtin-tools'];
    expect(tools.map((tool) => tool.name)).toEqual([
      ...defaultDocRegistries().tools.map((tool) => tool.name),
      'fixture_echo',
    ]);
    const fixture = tools.at(-1);
    expect(fixture).toMatchObject({
      name: 'fixture_echo',
      readOnly: true,
      parameters: { required: ['text'], properties: { text: { type: 'string' } } },
    });
    expect(fixture?.description).toContain('Echo a short text back unchanged.');
  });

  it("the event is in openapi.yaml's x-event-types, last, as an extension with its payload schema", () => {
    const events = doc['x-event-types'];
    expect(events.map((event) => event.type)).toEqual([...EVENT_TYPES, 'fixture_pinged']);
    expect(events.at(-1)).toMatchObject({
      type: 'fixture_pinged',
      catalog: 'extension',
      payload: { required: ['count'], properties: { count: { type: 'integer' }, note: { type: 'string' } } },
    });
  });

  it('the event is a row of the event table in docs/events.md', () => {
    const row = `| ${EVENT_TYPES.length + 1} | \`fixture_pinged\` | extension | \`count\`, \`note?\` |`;
    expect(generated.readme).toContain(row);
    expect(generated.readme).toContain(renderEventTable(eventDocsWithFixture()));
    // Only the table changed.
    expect(generated.readme.replace(`\n${row}`, '')).toBe(README);
  });

  it('without the fixtures the same generator gives the committed files', async () => {
    const committed = await renderGeneratedDocs(README);
    expect(committed.readme).toBe(README);
    expect(
      committed.openapiYaml === readFileSync(openApiYamlPath(), 'utf8'),
      'openapi.yaml is stale: run `npx vite-node scripts/generate-openapi.ts`',
    ).toBe(true);
    expect(committed.openapiYaml).not.toContain('fixture_');
    expect(eventDocs().map((event) => event.type)).toEqual(EVENT_TYPES);
  });
});
