import { beforeEach, describe, expect, it } from 'vitest';
import type { LoopCheckpoint } from '../../src/protocol/loop-checkpoint.js';
import type { CheckpointStore } from '../../src/stores/checkpoint-store.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { parseCheckpoint } from '../../src/stores/parse-checkpoint.js';
import { makeCheckpoint } from './checkpoint-fixtures.js';
import { useStoreSubject, type StoreSubject } from './store-subject.js';

/** One checkpoint store under test, plus how to plant raw stored data and how to tidy up after the test. */
export type CheckpointStoreSubject = StoreSubject<CheckpointStore>;

/** What the contract expects of a store besides behaviour. */
export interface CheckpointStoreContractOptions {
  /** The store's kind. */
  kind: string;
  /** Whether another node can read what it saves. */
  shared: boolean;
  /** True when the store keeps serialised text (file, Redis), so malformed JSON can reach its load. */
  storesText: boolean;
}

/** The key of the fixtures' session. */
const S = sessionKey('tenant-a', 's1');

/** Run the behaviour every CheckpointStore implementation must have against a fresh subject per test. */
export function runCheckpointStoreContract(
  name: string,
  makeSubject: () => Promise<CheckpointStoreSubject>,
  options: CheckpointStoreContractOptions,
): void {
  describe(`CheckpointStore contract: ${name}`, () => {
    const subject = useStoreSubject(
      makeSubject,
      (text, runId) => parseCheckpoint(JSON.parse(text), `raw checkpoint of ${runId}`),
      (store, id) => store.load(S, id),
    );
    const { expectInvalid } = subject;
    let store: CheckpointStore;

    beforeEach(() => {
      store = subject.current().store;
    });

    it('reports its kind and whether it is shared', () => {
      expect(store.kind).toBe(options.kind);
      expect(store.shared).toBe(options.shared);
    });

    it('round-trips a saved checkpoint', async () => {
      const checkpoint = makeCheckpoint('run_1', 1);
      await store.save(S, checkpoint);
      expect(await store.load(S, 'run_1')).toEqual(checkpoint);
    });

    it('answers undefined for an unknown run', async () => {
      expect(await store.load(S, 'run_missing')).toBeUndefined();
    });

    it('replaces the checkpoint of a run with the latest one, keeping runs apart', async () => {
      await store.save(S, makeCheckpoint('run_1', 1));
      await store.save(S, makeCheckpoint('run_2', 7));
      await store.save(S, makeCheckpoint('run_1', 2));
      expect(await store.load(S, 'run_1')).toEqual(makeCheckpoint('run_1', 2));
      expect(await store.load(S, 'run_2')).toEqual(makeCheckpoint('run_2', 7));
    });

    it('is isolated from later changes to saved and loaded values', async () => {
      const checkpoint = makeCheckpoint('run_1', 1);
      const save = store.save(S, checkpoint);
      checkpoint.turn = 99;
      checkpoint.messages.push({ role: 'user', content: 'added after save' });
      await save;
      const loaded = await store.load(S, 'run_1');
      expect(loaded).toEqual(makeCheckpoint('run_1', 1));
      loaded?.messages.pop();
      expect(await store.load(S, 'run_1')).toEqual(makeCheckpoint('run_1', 1));
    });

    it('deletes idempotently', async () => {
      await store.delete(S, 'run_never');
      await store.save(S, makeCheckpoint('run_1', 1));
      await store.delete(S, 'run_1');
      expect(await store.load(S, 'run_1')).toBeUndefined();
      await store.delete(S, 'run_1');
    });

    it('rejects an invalid checkpoint on save and keeps the previous one', async () => {
      await store.save(S, makeCheckpoint('run_1', 1));
      await expect(store.save(S, { ...makeCheckpoint('run_1', 2), turn: -1 })).rejects.toMatchObject({
        code: 'SNAPSHOT_INVALID',
      });
      const extra = { ...makeCheckpoint('run_1', 3), unexpected: true } as unknown as LoopCheckpoint;
      await expect(store.save(S, extra)).rejects.toMatchObject({ code: 'SNAPSHOT_INVALID', message: /unexpected/ });
      expect((await store.load(S, 'run_1'))?.turn).toBe(1);
    });

    it('rejects another schema_version', async () => {
      const future = JSON.stringify({ ...makeCheckpoint('run_1', 1), schema_version: 2 });
      await expectInvalid(
        'run_1',
        future,
        /unsupported checkpoint schema_version 2 in .+; this server reads version 1/,
      );
      const text = JSON.stringify({ ...makeCheckpoint('run_1', 1), schema_version: '1' });
      await expectInvalid('run_1', text, /unsupported checkpoint schema_version "1"/);
    });

    it.skipIf(!options.storesText)('rejects malformed JSON', async () => {
      await expectInvalid('run_1', '{"schema_version": 1, "run_id": ', /not valid JSON/);
    });

    it('rejects malformed fields and names their paths', async () => {
      const checkpoint = makeCheckpoint('run_1', 1) as unknown as Record<string, unknown>;
      const text = JSON.stringify({ ...checkpoint, turn: 'one', messages: [{ role: 'robot', content: 'hi' }] });
      await expectInvalid('run_1', text, /turn: .*messages\.0\.role/);
    });

    it('rejects __proto__, constructor and prototype keys anywhere in the document', async () => {
      const base = JSON.stringify(makeCheckpoint('run_1', 1));
      const nested = base.replace('"convergence":{', '"convergence":{"__proto__":{"polluted":true},');
      await expectInvalid('run_1', nested, /forbidden key "__proto__" at convergence\.__proto__/);
      await expectInvalid('run_1', `{"__proto__":{"polluted":true},${base.slice(1)}`, /forbidden key "__proto__"/);
      await expectInvalid(
        'run_1',
        base.replace('"total_usage":{', '"total_usage":{"constructor":{},'),
        /forbidden key "constructor"/,
      );
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it.skipIf(!options.storesText)('rejects stored data holding another run', async () => {
      await expectInvalid(
        'run_2',
        JSON.stringify(makeCheckpoint('run_1', 1)),
        /holds run "(s1~)?run_1", not "(s1~)?run_2"/,
      );
    });

    it("keeps runs of the same session id in two tenants apart, and a run out of another session's reach", async () => {
      const other = sessionKey('tenant-b', 's1');
      await store.save(S, makeCheckpoint('run_1', 1));
      await store.save(other, makeCheckpoint('run_1', 5));
      expect((await store.load(S, 'run_1'))?.turn).toBe(1);
      expect((await store.load(other, 'run_1'))?.turn).toBe(5);
      expect(await store.load(sessionKey('tenant-a', 's2'), 'run_1')).toBeUndefined();
      await store.delete(other, 'run_1');
      expect((await store.load(S, 'run_1'))?.turn).toBe(1);
      expect(await store.load(other, 'run_1')).toBeUndefined();
    });

    it('refuses use after close', async () => {
      await store.close();
      await expect(store.save(S, makeCheckpoint('run_1', 1))).rejects.toMatchObject({ code: 'PERSISTENCE_FAILED' });
      await expect(store.load(S, 'run_1')).rejects.toMatchObject({ code: 'PERSISTENCE_FAILED' });
    });
  });
}
