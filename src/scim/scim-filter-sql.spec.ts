import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { parseFilter } from './filter/scim-filter-parser.js';
import { resolveFilter } from './filter/scim-filter-resolver.js';
import { ScimFilterError } from './filter/scim-filter.errors.js';
import type { SqlDialect } from './filter-sql/sql-text.js';
import { filterToSql } from './scim-filter-sql.js';

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

function sql(text: string, dialect: SqlDialect = 'sqlite') {
  return filterToSql(resolveFilter(parseFilter(text)), { dialect, alias: 'u' });
}

// What the rows mean is checked against the evaluator on both databases (test/scim/scim-filter-sql.e2e-spec.ts);
// these cases pin down the properties that matter without a database: parameters, indexes, dialects.
describe('filterToSql', () => {
  it('compares userName through the lower-cased indexed column with a lower-cased parameter', () => {
    const condition = sql('userName eq "Bjensen@Example.COM"');
    expect(condition.sql).toBe('("u"."user_name_lower" IS NOT NULL AND ("u"."user_name_lower" = :scimf0))');
    expect(condition.parameters).toEqual({ scimf0: 'bjensen@example.com' });
  });

  it('never puts a value into the SQL text', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 20 }),
        fc.constantFrom<SqlDialect>('sqlite', 'postgres'),
        (value, dialect) => {
          const literal = JSON.stringify(`zz${value}`);
          for (const text of [
            `displayName co ${literal}`,
            `emails[type eq ${literal}].value sw ${literal}`,
            `externalId ew ${literal}`,
            `${ENTERPRISE}:department gt ${literal}`,
          ]) {
            const condition = sql(text, dialect);
            expect(condition.sql).not.toContain('zz');
            expect(
              Object.values(condition.parameters).some((parameter) => String(parameter).includes('zz')),
            ).toBe(true);
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('escapes LIKE wildcards, and uses GLOB for case-exact substrings on SQLite', () => {
    const like = sql('displayName co "50%_\\\\x"');
    expect(like.sql).toContain("LIKE LOWER(:scimf0) ESCAPE '\\'");
    expect(like.parameters).toEqual({ scimf0: '%50\\%\\_\\\\x%' });
    const glob = sql('externalId sw "a*?[b"');
    expect(glob.sql).toContain('GLOB :scimf0');
    expect(glob.parameters).toEqual({ scimf0: 'a[*][?][[]b*' });
    expect(sql('externalId sw "a*"', 'postgres').sql).toContain('LIKE :scimf0');
  });

  it('reads the JSON document per dialect and orders by code point on PostgreSQL', () => {
    expect(sql(`${ENTERPRISE}:manager.value eq "m"`).sql).toContain(
      `json_extract("u"."attributes", '$."${ENTERPRISE}"."manager"."value"')`,
    );
    expect(sql(`${ENTERPRISE}:manager.value eq "m"`, 'postgres').sql).toContain(
      `("u"."attributes" -> '${ENTERPRISE}' -> 'manager' ->> 'value')`,
    );
    expect(sql('title gt "m"', 'postgres').sql).toContain('COLLATE "C"');
    expect(sql('title gt "m"').sql).not.toContain('COLLATE');
  });

  it('turns value filters and multi-valued comparisons into EXISTS over the elements, after a text prefilter on SQLite', () => {
    const phone = sql('phoneNumbers[type eq "work"].value eq "+1 555 0100"');
    expect(phone.sql).toMatch(
      /^\(LOWER\("u"\."attributes"\) LIKE LOWER\(:scimf\d\) ESCAPE '\\' AND EXISTS \(SELECT 1 FROM json_each\("u"\."attributes", '\$\."phoneNumbers"'\)/,
    );
    // The longest literal the match needs is the one the prefilter looks for.
    expect(Object.values(phone.parameters)).toContain('%+1 555 0100%');
    expect(sql('phoneNumbers co "x"', 'postgres').sql).toMatch(
      /^EXISTS \(SELECT 1 FROM jsonb_array_elements\(/,
    );
    // No prefilter where a match needs no particular text, or where JSON would escape the text.
    expect(sql('phoneNumbers ne "x"').sql).not.toContain('LIKE LOWER');
    expect(sql('phoneNumbers[type eq "work" or value pr]').sql).toMatch(/^EXISTS/);
    expect(sql('phoneNumbers co "a\\"b"').sql).toMatch(/^EXISTS/);
  });

  it('answers e-mail filters on value, type and primary from scim_user_emails, eq through the indexed key', () => {
    for (const dialect of ['sqlite', 'postgres'] as const) {
      const entra = sql('emails[type eq "Work"].value eq "X@Y.example"', dialect);
      expect(entra.sql).toMatch(
        /^\("u"\."id" IN \(SELECT scim_el0\."user_id" FROM "scim_user_emails" scim_el0 WHERE /,
      );
      expect(entra.sql).toContain('scim_el0."value_key" = :scimf');
      expect(entra.sql).not.toContain('attributes');
      // Both sides lower-cased as the evaluator folds them (String.prototype.toLowerCase).
      expect(Object.values(entra.parameters)).toEqual(expect.arrayContaining(['work', 'x@y.example']));
      expect(sql('emails.value eq "a"', dialect).sql).toContain('"value_key"');
      expect(sql('emails eq "a"', dialect).sql).toContain('"value_key"');
      const co = sql('emails co "A%"', dialect);
      expect(co.sql).toContain(`scim_el0."value" LIKE :scimf0 ESCAPE '\\'`);
      expect(co.parameters).toEqual({ scimf0: '%a\\%%' });
      expect(sql('emails[primary eq false]', dialect).sql).toContain('COALESCE(scim_el0."is_primary"');
    }
    expect(sql('emails[primary eq true]', 'postgres').sql).toContain('= TRUE');
    // display is not in the table: such a filter reads the document.
    expect(sql('emails[display eq "x"]').sql).toContain('json_each');
    expect(sql('emails pr').sql).toContain('json_each');
  });

  it('probes type/primary-only e-mail conditions per user in SQLite page queries, and keeps IN elsewhere', () => {
    const page = (text: string, dialect: SqlDialect = 'sqlite') =>
      filterToSql(resolveFilter(parseFilter(text)), { dialect, alias: 'u', page: true }).sql;
    expect(page('emails.primary eq false')).toMatch(
      /^EXISTS \(SELECT 1 FROM "scim_user_emails" scim_el0 WHERE scim_el0\."user_id" = "u"\."id" AND /,
    );
    expect(page('emails[type eq "work"]')).toMatch(/^EXISTS \(SELECT 1 FROM "scim_user_emails"/);
    expect(page('emails[type eq "work"].value eq "a"')).toMatch(/^\("u"\."id" IN \(SELECT/);
    expect(page('emails co "a"')).toMatch(/^\("u"\."id" IN \(SELECT/);
    expect(page('emails[type eq "work"]', 'postgres')).toMatch(/^\("u"\."id" IN \(SELECT/);
    expect(sql('emails[type eq "work"]').sql).toMatch(/^\("u"\."id" IN \(SELECT/);
  });

  it('reads an absent primary as false in the dotted form too', () => {
    expect(sql('emails.primary eq false').sql).toContain('COALESCE(scim_el0."is_primary", 0)');
    expect(sql('phoneNumbers.primary eq false', 'postgres').sql).toContain('COALESCE(');
  });

  it('compares booleans as stored by each database', () => {
    expect(sql('active eq "False"').sql).toContain(`= 0`);
    const postgres = sql('active eq true', 'postgres');
    expect(postgres.parameters).toEqual({ scimf0: 'true' });
  });

  it('compares id as text on PostgreSQL, so a malformed id matches nothing instead of failing', () => {
    expect(sql('id eq "nope"', 'postgres').sql).toContain('CAST("u"."id" AS text)');
  });

  it('answers constant attributes without SQL and refuses computed ones', () => {
    expect(sql('meta.resourceType eq "User"').sql).toBe('(1 = 1)');
    expect(sql('meta.resourceType eq "user"').sql).toBe('(1 = 0)'); // caseExact in the table
    expect(sql('meta.resourceType ne "User"').sql).toBe('(1 = 0)');
    expect(sql('meta.location pr').sql).toBe('(1 = 1)');
    for (const text of ['meta.location eq "x"', 'meta.version co "1"']) {
      expect(() => sql(text)).toThrow(ScimFilterError);
    }
  });

  it('binds dates as instants for the meta columns', () => {
    const condition = sql('meta.lastModified gt "2011-05-13T04:42:34+02:00"');
    expect(condition.sql).toBe('("u"."last_modified" IS NOT NULL AND ("u"."last_modified" > :scimf0))');
    expect(condition.parameters['scimf0']).toEqual(new Date('2011-05-13T02:42:34Z'));
  });
});
