import { describe, expect, it } from 'vitest';
import { announcesNextStep, looksUnfinished } from '../../src/runtime/loop/looks-unfinished.js';
import { FINISHED_ANSWERS, UNFINISHED_ANSWERS } from '../support/continuation-vectors.js';

describe('looksUnfinished', () => {
  it.each(UNFINISHED_ANSWERS)('announces a next step: %j', (text) => {
    expect(announcesNextStep(text)).toBe(true);
    expect(looksUnfinished({ text, finishReason: 'stop', afterToolResults: true })).toBe('announces_next_step');
  });

  it.each(FINISHED_ANSWERS)('is a result: %j', (text) => {
    expect(announcesNextStep(text)).toBe(false);
    expect(looksUnfinished({ text, finishReason: 'stop', afterToolResults: true })).toBeUndefined();
  });

  it('finish_reason "length" is unfinished whatever the text; an empty answer only after tool results', () => {
    expect(looksUnfinished({ text: 'The file contains', finishReason: 'length', afterToolResults: false })).toBe(
      'length',
    );
    expect(looksUnfinished({ text: '', finishReason: 'stop', afterToolResults: true })).toBe('empty_after_tools');
    expect(looksUnfinished({ text: '  \n', finishReason: 'stop', afterToolResults: true })).toBe('empty_after_tools');
    expect(looksUnfinished({ text: '', finishReason: 'stop', afterToolResults: false })).toBeUndefined();
  });

  it('reads only the end of a long answer', () => {
    expect(announcesNextStep(`${'Let me check. '.repeat(1000)}All done.`)).toBe(false);
    expect(announcesNextStep(`${'x'.repeat(100_000)}. Let me check the rest.`)).toBe(true);
  });

  it("does not continue the runs benchmark's answer", () => {
    expect(looksUnfinished({ text: 'word '.repeat(20), finishReason: 'stop', afterToolResults: true })).toBeUndefined();
  });
});
