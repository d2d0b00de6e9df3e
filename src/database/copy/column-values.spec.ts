import { describe, expect, it } from '@jest/globals';
import { HASH_MODULUS, normalised, rowDigest, TableHash, toCopyField, toSqlite } from './column-values.js';

describe('column values across engines', () => {
  it('normalises the same datum read from SQLite and from PostgreSQL to one value', () => {
    expect(normalised('instant', '2026-11-29 01:02:03.456')).toBe(
      normalised('instant', '2026-11-29 01:02:03.456+00'),
    );
    expect(normalised('boolean', 1)).toBe(normalised('boolean', 't'));
    expect(normalised('boolean', 0)).toBe(normalised('boolean', 'f'));
    expect(normalised('json', '{"b":[1,{"y":2,"x":1}],"a":"z"}')).toBe(
      normalised('json', '{"a": "z", "b": [1, {"x": 1, "y": 2}]}'),
    );
    expect(normalised('integer', 42)).toBe(normalised('integer', '42'));
    expect(rowDigest(['instant', 'boolean'], ['2026-01-01 00:00:00.000', 1])).toBe(
      rowDigest(['instant', 'boolean'], ['2026-01-01 00:00:00+00', 't']),
    );
    expect(rowDigest(['text'], ['a'])).not.toBe(rowDigest(['text'], ['b']));
  });

  it('writes values in the form each engine stores', () => {
    expect(toSqlite('instant', '2026-11-29 01:02:03.456+00')).toBe('2026-11-29 01:02:03.456');
    expect(toSqlite('boolean', 'f')).toBe(0);
    expect(toCopyField('instant', '2026-11-29 01:02:03.456')).toBe('2026-11-29T01:02:03.456Z');
    expect(toCopyField('boolean', 1)).toBe('t');
    expect(toCopyField('text', null)).toBe('\\N');
    expect(toCopyField('text', 'a\tb\\c\nd')).toBe('a\\tb\\\\c\\nd');
  });

  it("hashes a table as the sum of its rows' digests mod 2^128, whatever the order and the folding", () => {
    const kinds = ['text', 'integer'] as const;
    const rows = Array.from({ length: 50 }, (_, index) => [`row ${index}`, index]);
    const expected = rows.reduce((sum, row) => (sum + rowDigest(kinds, row)) % HASH_MODULUS, 0n);
    const hashOf = (list: unknown[][], foldEvery?: number): bigint => {
      const table = new TableHash(foldEvery);
      for (const row of list) table.add(kinds, row);
      return table.value;
    };
    expect(hashOf(rows)).toBe(expected);
    expect(hashOf([...rows].reverse(), 7)).toBe(expected);
    expect(hashOf(rows, 1)).toBe(expected);
    expect(hashOf(rows.slice(1))).not.toBe(expected);
  });
});
