// Custom constraints that state their rule in JSON Schema (DescribedConstraint): the compiled plan's JSON Schema
// carries it, and what that schema accepts the validator accepts (the OpenAPI document is
// generated from it, and a client that keeps to the document must not be refused).
import { describe, expect, it } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { IsBoolean, IsEmail, IsOptional, IsString, Validate, ValidatorConstraint } from 'class-validator';
import fc from 'fast-check';
import validator from 'validator';
import { IsSmtpHost, IsSmtpUsername } from '../mail/dto/smtp-validators.js';
import { isSmtpHost } from '../mail/smtp/smtp-host.js';
import { compileDto } from './compile-dto.js';
import { DISPLAY_NAME_ADDRESS_PATTERN } from './constraint-checks.js';

@ValidatorConstraint({ name: 'isEven', async: false })
class IsEvenConstraint {
  validate(value: unknown): boolean {
    return typeof value === 'number' && value % 2 === 0;
  }
}

class SmtpLikeDto {
  @IsString() @IsSmtpHost() Host!: string;
  @IsOptional() @IsBoolean() AuthRequired?: boolean | null;
  @IsSmtpUsername() Username?: string | null;
  @IsEmail({ allow_display_name: true }) SenderAddress!: string;
  @Validate(IsEvenConstraint) Count!: number;
}

const ajv = new Ajv2020({ strict: false });
addFormats.default(ajv);

describe('DescribedConstraint', () => {
  const compiled = compileDto(SmtpLikeDto);
  const properties = compiled.jsonSchema.properties as Record<string, Record<string, unknown>>;

  it('renders a described constraint as JSON Schema and an undescribed one as "not expressed"', () => {
    expect(properties.Host).toMatchObject({
      type: 'string',
      anyOf: [{ format: 'hostname' }, { format: 'ipv4' }, { format: 'ipv6' }],
    });
    expect(properties.Host.$comment).toBeUndefined();
    expect(properties.Username).toMatchObject({ maxLength: 255 });
    expect(properties.Count.$comment).toBe('not expressed: Validate(IsEvenConstraint)');
    expect(compiled.jsonSchema.allOf).toEqual([
      expect.objectContaining({ if: expect.any(Object), then: expect.any(Object) }),
    ]);
  });

  it('Username and AuthRequired: the schema and the validator agree', () => {
    const checkUsername = ajv.compile({
      properties: { Username: properties.Username },
      allOf: compiled.jsonSchema.allOf as object[],
    });
    const body = fc.record(
      {
        AuthRequired: fc.constantFrom(true, false, null),
        Username: fc.oneof(
          fc.constant(null),
          fc.constant(''),
          fc.string({ maxLength: 300 }),
          fc.constant('a\nb'),
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(body, (value) => {
        const refused = compiled.validate({
          Host: 'smtp.example.com',
          SenderAddress: 'a@b.example',
          Count: 2,
          ...value,
        });
        const usernameRefused = !refused.ok && refused.errors.some((e) => e.Field === 'Username');
        expect(checkUsername(value)).toBe(!usernameRefused);
      }),
      { numRuns: 500 },
    );
  });

  it('Host: what the schema accepts, isSmtpHost accepts (host names, addresses, junk)', () => {
    const checkHost = ajv.compile(properties.Host);
    let accepted = 0;
    const host = fc.oneof(
      fc.domain(),
      fc.ipV4(),
      fc.ipV6(),
      fc.string({ maxLength: 20 }),
      fc.constantFrom('999.1.1.1', '1.2.3', 'a..b', '-a.example', 'a_b.example', 'localhost', '2130706433'),
    );
    fc.assert(
      fc.property(host, (value) => {
        if (!checkHost(value)) return;
        accepted++;
        expect(isSmtpHost(value)).toBe(true);
      }),
      { numRuns: 2000 },
    );
    expect(accepted).toBeGreaterThan(500);
    expect(checkHost('999.1.1.1')).toBe(false);
  });

  it('SenderAddress: every "Name <addr>" the pattern admits is an address isEmail takes with a display name', () => {
    const re = new RegExp(DISPLAY_NAME_ADDRESS_PATTERN);
    fc.assert(
      fc.property(fc.stringMatching(re, { size: 'small' }), (value) => {
        expect(validator.isEmail(value, { allow_display_name: true })).toBe(true);
      }),
      { numRuns: 3000 },
    );
    expect(re.test('Contoso Alerts <alerts@contoso.example>')).toBe(true);
  });
});
