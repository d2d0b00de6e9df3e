import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { jsonTextMayHoldUnstorable, nulFields } from './nul-characters.js';

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

describe('jsonTextMayHoldUnstorable (the JSON parser shortcut past the walk)', () => {
  it('sees the escapes that make a NUL or a surrogate, in any letter case', () => {
    expect(jsonTextMayHoldUnstorable('{"a":"x\\u0000"}')).toBe(true);
    expect(jsonTextMayHoldUnstorable('["\\uD800"]')).toBe(true);
    expect(jsonTextMayHoldUnstorable('["\\udfff"]')).toBe(true);
    expect(jsonTextMayHoldUnstorable('{"\\u0000":1}')).toBe(true);
    // A paired surrogate escape is walked too (it is storable; the walk says so).
    expect(jsonTextMayHoldUnstorable('["\\ud83d\\ude00"]')).toBe(true);
    expect(jsonTextMayHoldUnstorable('{"a":"plain 😀 text","b":"\\u00e9\\u0041"}')).toBe(false);
  });

  it('never lets a body with an unstorable string past: text without the escapes parses to storable values', () => {
    // Any code unit, with NULs, lone halves of surrogate pairs and whole pairs made likely.
    const text = fc.string({
      unit: fc.oneof(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
        fc.constantFrom('\u0000', '\ud800', '\udfff', '😀'),
      ),
    });
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        text,
        fc.integer(),
        fc.constant(null),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(text, tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (body) => {
        const json = JSON.stringify(body);
        if (!jsonTextMayHoldUnstorable(json)) expect(nulFields(JSON.parse(json), '')).toEqual([]);
        // And the converse for what matters: a body with one is always walked.
        if (nulFields(body, '').length > 0) expect(jsonTextMayHoldUnstorable(json)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });
});
