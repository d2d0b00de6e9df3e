import { describe, it, expect } from '@jest/globals';
import { acceptsJson, replyMediaType } from './accept.js';

describe('acceptsJson (RFC 9110 §12.5.1)', () => {
  it.each([
    [undefined, true],
    ['', true],
    ['application/json', true],
    ['application/json; charset=utf-8', true],
    ['APPLICATION/JSON', true],
    ['*/*', true],
    ['application/*', true],
    ['text/html, application/json;q=0.5', true],
    ['text/plain;q=0.9, */*;q=0.1', true],
    ['application/octet-stream', false],
    ['text/html', false],
    ['application/json;q=0', false],
    ['application/json;q=0, */*', false],
    ['application/*;q=0, application/json', true],
    ['*/*;q=0', false],
    ['application/json;q=abc', false],
    ['garbage', false],
  ])('%s → %s', (accept, expected) => {
    expect(acceptsJson(accept)).toBe(expected);
  });

  it('reads repeated Accept headers as one list', () => {
    expect(acceptsJson(['text/html', 'application/json'])).toBe(true);
    expect(acceptsJson(['text/html', 'image/png'])).toBe(false);
  });

  it('picks the reply type', () => {
    expect(replyMediaType('application/json')).toBe('application/json');
    expect(replyMediaType('application/octet-stream')).toBe('application/octet-stream');
  });
});
