import { afterEach, beforeEach, expect } from 'vitest';
import { isCodeError } from '../../src/errors.js';

/** One store under test, plus how to plant raw stored data and how to tidy up after the test. */
export interface StoreSubject<S> {
  /** The store the contract exercises. */
  store: S;
  /**
   * Put raw text where the store will read the id from (hand-written files, Redis fields); when absent,
   * the negative cases validate the text directly, as every store's load does.
   */
  writeRaw?: (id: string, text: string) => Promise<void>;
  /** Remove whatever the subject created (temp directories, keys, clients ...). */
  dispose?: () => Promise<void>;
}

/** What the shared contract harness needs of a store. */
interface ContractStore {
  close(): Promise<void>;
}

/** The running test's subject, and the check every negative case of a store contract makes. */
export interface StoreSubjectHandle<S> {
  /** The fresh subject of the running test. */
  current(): StoreSubject<S>;
  /** Load `text` as the stored data of `id` and expect a SNAPSHOT_INVALID CodeError whose message matches. */
  expectInvalid: (id: string, text: string, message: RegExp) => Promise<void>;
}

/**
 * Give every test of the enclosing describe a fresh subject from `makeSubject`, closing its store and
 * disposing of it afterwards. `validate(text, id)` is how raw text is checked when the subject cannot
 * plant it (a store that keeps values, not text).
 */
export function useStoreSubject<S extends ContractStore>(
  makeSubject: () => Promise<StoreSubject<S>>,
  validate: (text: string, id: string) => unknown,
  /** How the store loads the record of `id` (a session store by the id's SessionKey, a checkpoint store by its session's too). */
  loadById: (store: S, id: string) => Promise<unknown>,
): StoreSubjectHandle<S> {
  let subject: StoreSubject<S> | undefined;

  beforeEach(async () => {
    subject = await makeSubject();
  });

  afterEach(async () => {
    await subject?.store.close();
    await subject?.dispose?.();
    subject = undefined;
  });

  const current = (): StoreSubject<S> => {
    if (subject === undefined) throw new Error('no store subject outside a test');
    return subject;
  };

  async function loadRaw(id: string, text: string): Promise<unknown> {
    const { store, writeRaw } = current();
    if (writeRaw === undefined) return validate(text, id);
    await writeRaw(id, text);
    return loadById(store, id);
  }

  const expectInvalid = async (id: string, text: string, message: RegExp): Promise<void> => {
    const error = await loadRaw(id, text).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(isCodeError(error), `expected a CodeError, got ${String(error)}`).toBe(true);
    expect(error).toMatchObject({ code: 'SNAPSHOT_INVALID' });
    expect((error as Error).message).toMatch(message);
  };

  return { current, expectInvalid };
}
