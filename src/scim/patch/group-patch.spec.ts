import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { applyOperationsSequentially, applyPlanToMembers, planGroupPatch } from './group-patch.js';
import { ScimPatchError } from './scim-patch.errors.js';

const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const IDS = ['a', 'b', 'c', 'd', 'e'].map((letter) => `${letter.repeat(8)}-0000-4000-8000-000000000000`);

function body(...operations: unknown[]) {
  return { schemas: [PATCH_OP], Operations: operations };
}

function refusal(run: () => unknown): ScimPatchError {
  try {
    run();
  } catch (error) {
    if (error instanceof ScimPatchError) return error;
    throw error;
  }
  throw new Error('expected a ScimPatchError');
}

describe('planGroupPatch: the shapes Entra ID and Okta send', () => {
  it.each([
    [
      'Entra add (op in any case, $ref null)',
      body({ op: 'Add', path: 'members', value: [{ $ref: null, value: IDS[0] }] }),
      { add: [IDS[0]], remove: [], resetMembers: false },
    ],
    [
      'Entra remove with a value list',
      body({ op: 'Remove', path: 'members', value: [{ $ref: null, value: IDS[0] }] }),
      { add: [], remove: [IDS[0]], resetMembers: false },
    ],
    [
      'Okta remove through a filter path',
      body({ op: 'remove', path: `members[value eq "${IDS[1]}"]` }),
      { add: [], remove: [IDS[1]], resetMembers: false },
    ],
    [
      'remove of members without a value: all of them',
      body({ op: 'remove', path: 'members' }),
      { add: [], remove: [], resetMembers: true },
    ],
    [
      'replace of members',
      body({ op: 'replace', path: 'members', value: [{ value: IDS[2] }] }),
      { add: [IDS[2]], remove: [], resetMembers: true },
    ],
    [
      'an id in upper case is the same id',
      body({ op: 'add', path: 'members', value: { value: IDS[3].toUpperCase() } }),
      { add: [IDS[3]], remove: [], resetMembers: false },
    ],
  ])('%s', (_label, request, expected) => {
    const plan = planGroupPatch(request);
    expect({ add: [...plan.add], remove: [...plan.remove], resetMembers: plan.resetMembers }).toEqual(
      expected,
    );
  });

  it('reads displayName and externalId, with and without a path, and ignores an echoed id', () => {
    expect(planGroupPatch(body({ op: 'Replace', path: 'displayName', value: 'New' })).displayName).toBe(
      'New',
    );
    const okta = planGroupPatch(
      body({ op: 'replace', value: { id: 'x', displayName: 'Okta', externalId: 'e' } }),
    );
    expect(okta).toMatchObject({ displayName: 'Okta', externalId: 'e' });
    expect(planGroupPatch(body({ op: 'remove', path: 'externalId' })).externalId).toBeNull();
  });

  it.each([
    ['remove displayName', body({ op: 'remove', path: 'displayName' }), 'mutability'],
    ['an unknown attribute', body({ op: 'add', path: 'owners', value: [] }), 'invalidPath'],
    ['a member sub-attribute', body({ op: 'replace', path: 'members.display', value: 'x' }), 'invalidPath'],
    ['a filter on display', body({ op: 'remove', path: 'members[display eq "x"]' }), 'invalidFilter'],
    [
      'a member without value',
      body({ op: 'add', path: 'members', value: [{ display: 'x' }] }),
      'invalidValue',
    ],
    [
      'a group as member',
      body({ op: 'add', path: 'members', value: [{ value: IDS[0], type: 'Group' }] }),
      'invalidValue',
    ],
    ['remove without a path', body({ op: 'remove' }), 'noTarget'],
    [
      '1,001 operations',
      body(...Array.from({ length: 1001 }, () => ({ op: 'remove', path: 'externalId' }))),
      'invalidValue',
    ],
  ])('refuses %s', (_label, request, scimType) => {
    expect(refusal(() => planGroupPatch(request)).scimType).toBe(scimType);
  });
});

describe('planGroupPatch: property', () => {
  const members = fc.subarray(IDS, { minLength: 1 }).map((ids) => ids.map((value) => ({ value })));
  const operation = fc.oneof(
    members.map((value) => ({ op: 'add', path: 'members', value })),
    members.map((value) => ({ op: 'remove', path: 'members', value })),
    fc.constantFrom(...IDS).map((id) => ({ op: 'remove', path: `members[value eq "${id}"]` })),
    fc
      .subarray(IDS)
      .map((ids) => ({ op: 'replace', path: 'members', value: ids.map((value) => ({ value })) })),
    fc.constant({ op: 'remove', path: 'members' }),
  );

  it('folding the operations into one plan leaves the same members as applying them one by one', () => {
    fc.assert(
      fc.property(
        fc.subarray(IDS),
        fc.array(operation, { minLength: 1, maxLength: 12 }),
        (start, operations) => {
          const current = new Set(start);
          const plan = planGroupPatch(body(...operations));
          expect([...applyPlanToMembers(current, plan)].sort()).toEqual(
            [...applyOperationsSequentially(current, body(...operations))].sort(),
          );
          // The plan's add and remove sets never overlap: the repository may apply them in any order.
          expect([...plan.add].filter((id) => plan.remove.has(id))).toEqual([]);
        },
      ),
      { numRuns: 500, seed: 15 },
    );
  });
});
