import { beforeEach, describe, expect, it } from 'vitest';
import { parseSnapshot } from '../../src/stores/parse-snapshot.js';
import { sessionKey, type SessionKey } from '../../src/stores/session-key.js';
import type { SessionStore } from '../../src/stores/session-store.js';
import { makeOddIdSnapshot, makeSnapshot } from '../support/snapshot-fixtures.js';
import { useStoreSubject, type StoreSubject } from './store-subject.js';

/** One session store under test, plus how to plant raw stored data and how to tidy up after the test. */
export type SessionStoreSubject = StoreSubject<SessionStore>;

/** What a store keeps, which decides the contract cases that apply to it. */
export interface SessionStoreContractOptions {
  /** True when the store keeps serialised text (file, Redis), so malformed JSON can reach its load. */
  storesText: boolean;
}

/** The key of session `id` of the fixtures' default tenant. */
function key(id: string): SessionKey {
  return sessionKey('tenant-a', id);
}

/** Run the behaviour every SessionStore implementation must have against a fresh subject per test. */
export function runSessionStoreContract(
  name: string,
  makeSubject: () => Promise<SessionStoreSubject>,
  options: SessionStoreContractOptions,
): void {
  describe(`SessionStore contract: ${name}`, () => {
    const subject = useStoreSubject(
      makeSubject,
      (text, sessionId) => parseSnapshot(JSON.parse(text), `raw snapshot of ${sessionId}`),
      (store, id) => store.load(key(id)),
    );
    const { expectInvalid } = subject;
    let store: SessionStore;

    beforeEach(() => {
      store = subject.current().store;
    });

    it('round-trips a saved snapshot', async () => {
      const snapshot = makeSnapshot('s1', 1);
      await store.save(snapshot);
      expect(await store.load(key('s1'))).toEqual(snapshot);
    });

    it('answers undefined for an unknown session', async () => {
      expect(await store.load(key('missing'))).toBeUndefined();
    });

    it('keeps the last saved generation', async () => {
      await store.save(makeSnapshot('s1', 1));
      await store.save(makeSnapshot('s1', 2));
      expect((await store.load(key('s1')))?.generation).toBe(2);
    });

    it('is isolated from later changes to saved and loaded values', async () => {
      const snapshot = makeSnapshot('s1', 1);
      const save = store.save(snapshot);
      snapshot.generation = 99;
      snapshot.session.messages.push({ role: 'user', content: 'added after save' });
      await save;
      const loaded = await store.load(key('s1'));
      expect(loaded).toEqual(makeSnapshot('s1', 1));
      loaded?.session.messages.pop();
      expect(await store.load(key('s1'))).toEqual(makeSnapshot('s1', 1));
    });

    it('deletes idempotently', async () => {
      await store.delete(key('never-saved'));
      await store.save(makeSnapshot('s1', 1));
      await store.delete(key('s1'));
      expect(await store.load(key('s1'))).toBeUndefined();
      await store.delete(key('s1'));
      expect(await store.list()).toEqual([]);
    });

    it('lists every stored session', async () => {
      expect(await store.list()).toEqual([]);
      await Promise.all(['b-2', 'a.1', 'C_3'].map((id) => store.save(makeSnapshot(id, 1))));
      expect(await store.list()).toEqual([key('C_3'), key('a.1'), key('b-2')]);
      expect(await store.list('tenant-a')).toEqual([key('C_3'), key('a.1'), key('b-2')]);
      expect(await store.list('tenant-b')).toEqual([]);
    });

    it('keeps the same session id of two tenants apart', async () => {
      await store.save(makeSnapshot('ci', 3));
      await store.save(makeSnapshot('ci', 1, { tenantId: 'tenant-b' }));
      expect((await store.load(key('ci')))?.generation).toBe(3);
      expect((await store.load(sessionKey('tenant-b', 'ci')))?.session.ownerTenantId).toBe('tenant-b');
      expect(await store.load(sessionKey('tenant-c', 'ci'))).toBeUndefined();
      expect(await store.list()).toEqual([key('ci'), sessionKey('tenant-b', 'ci')]);
      expect(await store.list('tenant-b')).toEqual([sessionKey('tenant-b', 'ci')]);
      await store.delete(sessionKey('tenant-b', 'ci'));
      expect((await store.load(key('ci')))?.generation).toBe(3);
      expect(await store.list()).toEqual([key('ci')]);
    });

    it('stores tenant and session ids of any characters under safely encoded keys', async () => {
      const odd = [
        { tenantId: 'a/b {x}', id: '../escape' },
        { tenantId: '..', id: '.hidden' },
        { tenantId: 'ünï', id: '%41' },
      ];
      for (const { tenantId, id } of odd) await store.save(makeOddIdSnapshot(id, 1, tenantId));
      for (const { tenantId, id } of odd)
        expect((await store.load(sessionKey(tenantId, id)))?.session).toMatchObject({ id, ownerTenantId: tenantId });
      expect((await store.list()).length).toBe(3);
      expect(await store.load(sessionKey('a', 'b {x}/../escape'))).toBeUndefined();
    });

    it('applies concurrent saves in order, ending with the highest generation written', async () => {
      const generations = Array.from({ length: 40 }, (_, index) => index + 1);
      await Promise.all(
        generations.flatMap((generation) => [
          store.save(makeSnapshot('busy', generation, { paddingBytes: 2048 })),
          store.save(makeSnapshot('other', generation)),
        ]),
      );
      const busy = await store.load(key('busy'));
      expect(busy?.generation).toBe(40);
      expect(parseSnapshot(busy, 'loaded snapshot')).toEqual(makeSnapshot('busy', 40, { paddingBytes: 2048 }));
      expect((await store.load(key('other')))?.generation).toBe(40);
    });

    it('rejects an invalid snapshot on save and keeps the previous generation', async () => {
      await store.save(makeSnapshot('s1', 1));
      const bad = { ...makeSnapshot('s1', 2), generation: -1 };
      await expect(store.save(bad)).rejects.toMatchObject({ code: 'SNAPSHOT_INVALID' });
      expect((await store.load(key('s1')))?.generation).toBe(1);
    });

    it('reports as reachable', async () => {
      expect(await store.ping()).toBe(true);
    });

    it('rejects a future schema_version', async () => {
      const text = JSON.stringify({ ...makeSnapshot('s1', 1), schema_version: 2 });
      await expectInvalid('s1', text, /unsupported snapshot schema_version 2 in .+; this server reads version 1/);
    });

    // A store that keeps values, not text, never parses JSON.
    it.skipIf(!options.storesText)('rejects malformed JSON', async () => {
      await expectInvalid('s1', '{"schema_version": 1, "generation": ', /not valid JSON/);
    });

    it('rejects malformed fields and names their paths', async () => {
      const snapshot = makeSnapshot('s1', 1) as unknown as Record<string, Record<string, unknown>>;
      const text = JSON.stringify({
        ...snapshot,
        generation: 'one',
        session: { ...snapshot.session, messages: [{ role: 'robot', content: 'hi' }] },
      });
      await expectInvalid('s1', text, /generation: .*session\.messages\.0\.role/);
    });

    it('rejects __proto__ keys anywhere in the document', async () => {
      const base = JSON.stringify(makeSnapshot('s1', 1));
      const nested = base.replace('"payload":{', '"payload":{"__proto__":{"polluted":true},');
      await expectInvalid('s1', nested, /forbidden key "__proto__" at trace_events\[0\]\.payload\.__proto__/);
      const topLevel = `{"__proto__":{"polluted":true},${base.slice(1)}`;
      await expectInvalid('s1', topLevel, /forbidden key "__proto__"/);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('rejects constructor and prototype keys', async () => {
      const base = JSON.stringify(makeSnapshot('s1', 1));
      await expectInvalid(
        's1',
        base.replace('"payload":{', '"payload":{"constructor":{"prototype":{}},'),
        /forbidden key "constructor"/,
      );
      await expectInvalid('s1', base.replace('"payload":{', '"payload":{"prototype":1,'), /forbidden key "prototype"/);
    });
  });
}
