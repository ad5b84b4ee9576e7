import { describe, expect, it } from 'vitest';
import { SequenceRanges } from '../../src/runtime/events/sequence-ranges.js';

describe('SequenceRanges', () => {
  it('is a FIFO list of sequences: push, shift, at and toArray as on an array', () => {
    const list = new SequenceRanges();
    expect(list.shift()).toBeUndefined();
    for (const n of [1, 2, 3, 7, 8, 10, 4]) list.push(n);
    expect(list.length).toBe(7);
    expect(list.toArray()).toEqual([1, 2, 3, 7, 8, 10, 4]);
    expect([0, 2, 3, 5, 6].map((p) => list.at(p))).toEqual([1, 3, 7, 10, 4]);
    expect([list.shift(), list.shift(), list.shift(), list.shift()]).toEqual([1, 2, 3, 7]);
    expect(list.toArray()).toEqual([8, 10, 4]);
    expect(list.at(0)).toBe(8);
    list.push(5);
    expect(list.toArray()).toEqual([8, 10, 4, 5]);
    list.reset([9, 3, 4]);
    expect(list.toArray()).toEqual([9, 3, 4]);
    expect(list.length).toBe(3);
  });

  it('agrees with an array over a long random mix of pushes and shifts (runs interleaved with other events)', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const list = new SequenceRanges();
    const model: number[] = [];
    let next = 1;
    for (let step = 0; step < 20_000; step += 1) {
      const r = random();
      if (r < 0.55) {
        next += r < 0.1 ? 2 + Math.floor(random() * 5) : 1; // sometimes another run's events came between
        list.push(next);
        model.push(next);
      } else if (r < 0.95) {
        expect(list.shift()).toBe(model.shift());
      } else if (model.length > 0) {
        const position = Math.floor(random() * model.length);
        expect(list.at(position)).toBe(model[position]);
      }
      expect(list.length).toBe(model.length);
    }
    expect(list.toArray()).toEqual(model);
  });
});
