import { describe, expect, it } from '@jest/globals';
import { nulFields } from './nul-characters.js';

describe('nulFields', () => {
  it('names every string and key holding a NUL or a lone surrogate, by path', () => {
    expect(
      nulFields(
        {
          Context: { Domain: 'a\u0000b' },
          Ids: ['ok', 'x\u0000'],
          Deep: [{ name: '\ud800' }, { name: 'paired 😀 is fine' }],
          ['k\u0000']: 1,
          Tab: 'a\tb',
        },
        '',
      ).sort(),
    ).toEqual(['Context.Domain', 'Deep[0].name', 'Ids[1]', 'k\\u0000']);
    expect(nulFields('\u0000', '')).toEqual(['']);
    expect(nulFields({ a: 1, b: null, c: true }, '')).toEqual([]);
  });

  it('reports at most 20 and survives very deep nesting', () => {
    expect(
      nulFields(
        Array.from({ length: 1000 }, () => '\u0000'),
        '',
      ),
    ).toHaveLength(20);
    let deep: unknown = '\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(nulFields(deep, '')).toHaveLength(1);
  });
});
