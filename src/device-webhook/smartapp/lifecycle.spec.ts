import { describe, it, expect } from '@jest/globals';
import { isLifecycle, isTrustedConfirmationUrl, lifecycleOf } from './lifecycle.js';

describe('lifecycleOf', () => {
  it.each([
    [{ lifecycle: 'PING' }, 'PING'],
    [{ Lifecycle: 'install' }, 'INSTALL'],
    [{ LIFECYCLE: ' EVENT ' }, 'EVENT'],
    [{ messageType: 'CONFIRMATION' }, 'CONFIRMATION'],
    [{ MessageType: 'CONFIRMATION', lifecycle: 'PING' }, 'PING'],
    [{ lifecycle: '', messageType: 'EVENT' }, 'EVENT'],
    [{ lifecycle: 5 }, undefined],
    [{}, undefined],
    [[{ lifecycle: 'PING' }], undefined],
    [null, undefined],
    ['PING', undefined],
  ])('%j → %s', (body, expected) => {
    expect(lifecycleOf(body)).toBe(expected);
  });

  it('knows the eight lifecycles and nothing else', () => {
    expect(isLifecycle('OAUTH_CALLBACK')).toBe(true);
    expect(isLifecycle('EXECUTE')).toBe(false);
    expect(isLifecycle('ping')).toBe(false);
  });
});

describe('isTrustedConfirmationUrl', () => {
  const api = 'https://api.smartthings.com';
  it.each([
    ['https://api.smartthings.com/apps/1/confirm-registration?token=x', true],
    ['https://smartthings.com/confirm', true],
    ['https://c2c-eu.smartthings.com/confirm', true],
    ['http://api.smartthings.com/confirm', false],
    ['https://smartthings.com.evil.example/confirm', false],
    ['https://evilsmartthings.com/confirm', false],
    ['https://user:pw@api.smartthings.com/confirm', false],
    ['not a url', false],
    ['file:///etc/passwd', false],
  ])('%s → %s', (url, expected) => {
    expect(isTrustedConfirmationUrl(url, api)).toBe(expected);
  });

  it('trusts the configured API origin (a proxy or a test double) and nothing else there', () => {
    expect(isTrustedConfirmationUrl('http://127.0.0.1:4000/apps/1/confirm', 'http://127.0.0.1:4000')).toBe(
      true,
    );
    expect(isTrustedConfirmationUrl('http://127.0.0.1:4001/apps/1/confirm', 'http://127.0.0.1:4000')).toBe(
      false,
    );
  });
});
