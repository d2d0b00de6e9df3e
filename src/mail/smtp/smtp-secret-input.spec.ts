import { describe, expect, it } from '@jest/globals';
import { readSecretInput } from './smtp-secret-input.js';

describe('readSecretInput: absent, null or a placeholder keeps the stored secret', () => {
  it.each([
    [undefined, { kind: 'keep' }],
    [null, { kind: 'keep' }],
    ['<PASSWORD>', { kind: 'keep' }],
    ['<INTERNAL_PASSWORD>', { kind: 'keep' }],
    [' <PASSWORD> ', { kind: 'keep' }],
    ['', { kind: 'clear' }],
    ['hunter2', { kind: 'set', value: 'hunter2' }],
    [' spaced ', { kind: 'set', value: ' spaced ' }],
    ['<password>', { kind: 'set', value: '<password>' }],
  ])('%j → %j', (value, expected) => {
    expect(readSecretInput(value)).toEqual(expected);
  });
});
