import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createRootLogger } from './logger.js';
import { redact, REDACTED } from './redact.js';
import { RequestContext } from './request-context.js';

describe('redact', () => {
  it('redacts secret keys at any depth and in any casing', () => {
    const input = {
      Password: 'p1',
      nested: { internalPassword: 'p2', list: [{ AUTHTOKEN: 't1' }, { refreshToken: 't2' }] },
      headers: { authorization: 'Bearer abc' },
      Username: 'kept',
    };
    expect(redact(input)).toEqual({
      Password: REDACTED,
      nested: { internalPassword: REDACTED, list: [{ AUTHTOKEN: REDACTED }, { refreshToken: REDACTED }] },
      headers: { authorization: REDACTED },
      Username: 'kept',
    });
  });

  it('masks credentials inside free text', () => {
    expect(redact('failed with Authorization: Bearer s3cr3t-token, retrying')).toBe(
      `failed with Authorization: Bearer ${REDACTED}, retrying`,
    );
  });
});

describe('root logger', () => {
  it('writes JSON lines with the correlation id of the request and no secret', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString());
        callback();
      },
    });
    const logger = createRootLogger('info', sink);
    new RequestContext('corr-9', logger).log.info(
      { body: { Password: 'hunter2', Host: 'smtp.example' } },
      'saving Bearer abc.def',
    );
    const line = JSON.parse(lines.join('')) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 'info',
      correlationId: 'corr-9',
      body: { Password: REDACTED, Host: 'smtp.example' },
    });
    expect(lines.join('')).not.toMatch(/hunter2|abc\.def/);
  });
});
