import fc from 'fast-check';
import { describe, expect, it } from '@jest/globals';
import { IdempotencyKeyRecord, type IdempotencyState } from './entities/idempotency-key.entity.js';
import { canonicalJson, decideKey, fingerprintOf, parseIdempotencyKey } from './idempotency.js';
import { serialiseAnswer, storedAnswerOf, storedColumnsOf } from './idempotency-store.js';

describe('parseIdempotencyKey', () => {
  it.each([
    ['"8e03978e-40d5-43e8-bc93-6894a57f9324"', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['8e03978e-40d5-43e8-bc93-6894a57f9324', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['"with space and \\"quotes\\" and \\\\"', 'with space and "quotes" and \\'],
    ['  "padded"  ', 'padded'],
    ['order:42/retry', 'order:42/retry'],
    [`"${'k'.repeat(255)}"`, 'k'.repeat(255)],
  ])('takes %s', (header, key) => {
    expect(parseIdempotencyKey(header)).toBe(key);
  });

  it.each([
    '""',
    '',
    '"open',
    '"a", "b"',
    'two words',
    '"bad \\n escape"',
    '"clé"',
    `"${'k'.repeat(256)}"`,
    'k'.repeat(256),
  ])('refuses %j as a 400 naming the header', (header) => {
    expect(() => parseIdempotencyKey(header)).toThrow(
      expect.objectContaining({
        code: 'ValidationFailed',
        fieldErrors: [expect.objectContaining({ Field: 'Idempotency-Key' })],
      }),
    );
  });

  it('refuses the header sent twice', () => {
    expect(() => parseIdempotencyKey(['"a"', '"b"'])).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe('fingerprintOf', () => {
  it('ignores the order of object keys, at every depth', () => {
    fc.assert(
      fc.property(fc.object(), (value) => {
        const reversed = JSON.parse(JSON.stringify(value), (_key, item: unknown) =>
          item !== null && typeof item === 'object' && !Array.isArray(item)
            ? Object.fromEntries(Object.entries(item).reverse())
            : item,
        ) as unknown;
        expect(fingerprintOf('POST', '/r', {}, reversed)).toBe(
          fingerprintOf('POST', '/r', {}, JSON.parse(JSON.stringify(value))),
        );
      }),
    );
  });

  it('tells apart bodies, array orders, routes, methods and queries', () => {
    const base = fingerprintOf('POST', '/r', {}, { a: [1, 2] });
    expect(
      new Set([
        base,
        fingerprintOf('POST', '/r', {}, { a: [2, 1] }),
        fingerprintOf('POST', '/r', {}, { a: [1, 2], b: null }),
        fingerprintOf('POST', '/s', {}, { a: [1, 2] }),
        fingerprintOf('PUT', '/r', {}, { a: [1, 2] }),
        fingerprintOf('POST', '/r', { attributes: 'id' }, { a: [1, 2] }),
      ]).size,
    ).toBe(6);
  });

  it('hashes a text body by its octets', () => {
    const calendar = Buffer.from('BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n');
    expect(fingerprintOf('POST', '/r', {}, calendar)).toBe(
      fingerprintOf('POST', '/r', {}, Buffer.from(calendar)),
    );
    expect(fingerprintOf('POST', '/r', {}, calendar)).not.toBe(
      fingerprintOf('POST', '/r', {}, Buffer.from('BEGIN:VCALENDAR\nEND:VCALENDAR\n')),
    );
  });

  it('writes canonical JSON', () => {
    expect(canonicalJson({ b: 1, a: { d: [true, null], c: 'x' }, u: undefined })).toBe(
      '{"a":{"c":"x","d":[true,null]},"b":1}',
    );
  });
});

describe('decideKey: the states of a key', () => {
  const FINGERPRINT = 'f'.repeat(64);
  const createdAt = new Date('2026-11-29T02:00:00Z');
  const record = (state: IdempotencyState, overrides: Partial<IdempotencyKeyRecord> = {}) =>
    Object.assign(new IdempotencyKeyRecord(), {
      caller: 'env:0',
      route: 'POST /r',
      key: 'k',
      fingerprint: FINGERPRINT,
      state,
      statusCode: null,
      responseHeaders: null,
      responseBody: null,
      createdAt,
      completedAt: null,
      ...overrides,
    });
  const answer = serialiseAnswer({ statusCode: 201, headers: { location: '/r/1' }, body: { Id: '1' } });
  const done = record('done', { ...storedColumnsOf(answer), completedAt: createdAt });

  it('carries out a key no committed transaction holds (unknown, or claimed by one still running)', () => {
    expect(decideKey(null, FINGERPRINT)).toEqual({ action: 'execute' });
  });

  it('replays a done key’s answer to the same request', () => {
    expect(decideKey(done, FINGERPRINT)).toEqual({ action: 'replay', answer });
  });

  it('refuses another request under a key, whatever its state', () => {
    for (const found of [done, record('pending')]) {
      expect(decideKey(found, 'e'.repeat(64))).toEqual({ action: 'mismatch' });
    }
  });

  it('says at once that a committed pending key’s answer is lost, however young it is', () => {
    const young = record('pending', { createdAt: new Date() });
    expect(decideKey(young, FINGERPRINT)).toEqual({ action: 'answer-lost', at: young.createdAt });
    // A done record without its answer (never written so, but not replayable) is the same case.
    expect(decideKey(record('done'), FINGERPRINT)).toEqual({ action: 'answer-lost', at: createdAt });
  });
});

describe('serialiseAnswer', () => {
  it('keeps the status, the headers a replay repeats and the body as JSON, and reads back the same', () => {
    const stored = serialiseAnswer({
      statusCode: 201,
      headers: {
        'content-type': 'application/scim+json; charset=utf-8',
        location: 'https://h/Users/1',
        etag: 'W/"1"',
        'x-correlation-id': 'not kept',
      },
      body: { id: '1', name: { givenName: 'Å' } },
    });
    expect(stored).toEqual({
      statusCode: 201,
      headers: {
        'content-type': 'application/scim+json; charset=utf-8',
        location: 'https://h/Users/1',
        etag: 'W/"1"',
      },
      body: '{"id":"1","name":{"givenName":"Å"}}',
    });
    const record = Object.assign(new IdempotencyKeyRecord(), { state: 'done', ...storedColumnsOf(stored) });
    expect(storedAnswerOf(record)).toEqual(stored);
  });

  it('keeps an answer over the bound as a reference: status and Location, a small body, never the body itself', () => {
    const stored = serialiseAnswer({
      statusCode: 201,
      headers: { location: '/api/v1/Schedule/1' },
      body: { Succeeded: true, Result: 'x'.repeat(2_000) },
    });
    const record = Object.assign(new IdempotencyKeyRecord(), {
      state: 'done',
      ...storedColumnsOf(stored, 1_000),
    });
    const replayed = storedAnswerOf(record);
    expect(replayed?.statusCode).toBe(201);
    expect(replayed?.headers.location).toBe('/api/v1/Schedule/1');
    expect(replayed?.body.length).toBeLessThan(1_000);
    expect(JSON.parse(replayed?.body ?? '{}')).toMatchObject({ Succeeded: true, Code: 'AnswerNotKept' });
    expect(storedColumnsOf(stored).responseBody).toBe(stored.body);
  });

  it('answers JSON by default', () => {
    expect(serialiseAnswer({ statusCode: 201, body: null }).headers).toEqual({
      'content-type': 'application/json; charset=utf-8',
    });
  });
});
