import { describe, expect, it } from '@jest/globals';
import { parseDomains, tenantsOfRequest, tenantsRefused } from './tenant.js';

describe('tenantsOfRequest', () => {
  it.each([
    ['a path segment', { domain: 'Acme' }, {}, undefined, ['acme']],
    ['a query parameter (any case)', {}, { domain: 'acme' }, undefined, ['acme']],
    [
      'Context.Domain in the body (any case)',
      {},
      {},
      { context: { DOMAIN: ' Contoso.Example ' } },
      ['contoso.example'],
    ],
    ['nothing: the default tenant', {}, {}, { Context: null }, ['default']],
    ['an empty Domain: the default tenant', {}, {}, { Context: { Domain: '' } }, ['default']],
    ['two different ones: both', { domain: 'a' }, {}, { Context: { Domain: 'b' } }, ['a', 'b']],
    ['a non-object body', {}, {}, '[1,2]', ['default']],
  ])('reads %s', (_case, params, query, body, expected) => {
    expect(tenantsOfRequest(params, query, body)).toEqual(expected);
  });
});

describe('tenantsRefused', () => {
  it('refuses tenants outside a bound key’s list and nothing for an unbound key', () => {
    expect(tenantsRefused(['a', 'b'], ['a'])).toEqual([]);
    expect(tenantsRefused(['a', 'b'], ['a', 'c'])).toEqual(['c']);
    expect(tenantsRefused(['a'], ['default'])).toEqual(['default']);
    expect(tenantsRefused(undefined, ['anything'])).toEqual([]);
  });
});

describe('parseDomains', () => {
  it('normalises and rejects what is not a tenant name', () => {
    expect(parseDomains(' Acme , contoso.example,acme')).toEqual(['acme', 'contoso.example']);
    expect(() => parseDomains(' , ')).toThrow('at least one');
    expect(() => parseDomains('acme,bad domain')).toThrow('Invalid domain(s): bad domain');
  });
});
