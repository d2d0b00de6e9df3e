import { describe, it, expect } from '@jest/globals';
import fc from 'fast-check';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { plainToInstance, Exclude, Expose, Transform, Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsDateString,
  IsDefined,
  IsEmail,
  IsEnum,
  IsHexColor,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsPositive,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  registerDecorator,
  Validate,
  ValidateIf,
  ValidateNested,
  ValidatePromise,
  ValidatorConstraint,
  validateSync,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import {
  AllowUnknownProperties,
  compileDto,
  compileDtoCached,
  DtoCompileError,
  type DtoClass,
  type FieldError,
} from './compile-dto.js';

const UUID_A = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const UUID_B = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const UUID_C = 'a8098c1a-f86e-11da-bd1a-00112443be1e';

/** A one-property DTO with `decorators` applied as TypeScript would (bottom-up). */
function dto(prop: string, ...decorators: PropertyDecorator[]): DtoClass {
  class Probe {}
  Object.defineProperty(Probe, 'name', { value: `${prop}Probe` });
  for (let i = decorators.length - 1; i >= 0; i--) decorators[i](Probe.prototype, prop);
  return Probe;
}

/** class-validator as the Nest ValidationPipe runs it (whitelist + forbidNonWhitelisted), the reference. */
function classValidatorAccepts(cls: DtoClass, input: object): boolean {
  const instance = plainToInstance(cls as new () => object, input);
  try {
    return validateSync(instance, { whitelist: true, forbidNonWhitelisted: true }).length === 0;
  } catch {
    // class-validator lets validator.js throw (IsEmail on a lone surrogate): that is a refusal, not a pass.
    return false;
  }
}

function errorsOf(cls: DtoClass, input: unknown, source: 'body' | 'query' = 'body'): FieldError[] {
  const r = compileDto(cls, { source }).validate(input);
  return r.ok ? [] : r.errors;
}

enum Color {
  Red = 'Red',
  Blue = 'Blue',
}
enum Level {
  Low = 1,
  High = 2,
}

interface DecoratorCase {
  name: string;
  prop: string;
  decorators: PropertyDecorator[];
  valid: unknown[];
  invalid: [unknown, string][];
  /** Values where this validator deliberately differs from class-validator (documented in constraint-checks.ts). */
  deviations?: unknown[];
}

const CASES: DecoratorCase[] = [
  {
    name: 'IsDefined',
    prop: 'Value',
    decorators: [IsDefined()],
    valid: ['x', 0, false, ''],
    invalid: [
      [undefined, 'Value should not be null or undefined'],
      [null, 'Value should not be null or undefined'],
    ],
  },
  {
    name: 'IsNotEmpty',
    prop: 'Key',
    decorators: [IsNotEmpty()],
    valid: ['a', 0, false],
    invalid: [
      ['', 'Key should not be empty'],
      [null, 'Key should not be null or undefined'],
      [undefined, 'Key should not be null or undefined'],
    ],
  },
  {
    name: 'IsString',
    prop: 'Name',
    decorators: [IsString()],
    valid: ['', 'abc'],
    invalid: [
      [1, 'Name must be a string'],
      [true, 'Name must be a string'],
      [['a'], 'Name must be a string'],
      [{}, 'Name must be a string'],
    ],
  },
  {
    name: 'MinLength',
    prop: 'Name',
    decorators: [MinLength(2)],
    valid: ['ab', '\u{1F600}\u{1F600}'],
    invalid: [
      ['a', 'Name must be longer than or equal to 2 characters'],
      ['\u{1F600}', 'Name must be longer than or equal to 2 characters'],
      [12, 'Name must be longer than or equal to 2 characters'],
    ],
  },
  {
    name: 'MaxLength',
    prop: 'Name',
    decorators: [MaxLength(3)],
    valid: ['abc', '\u{1F600}\u{1F600}\u{1F600}', 'a\u2764\uFE0Fb'],
    invalid: [['abcd', 'Name must be shorter than or equal to 3 characters']],
  },
  {
    name: 'Length',
    prop: 'Code',
    decorators: [Length(2, 3)],
    valid: ['ab', 'abc'],
    invalid: [
      ['a', 'Code must be longer than or equal to 2 characters'],
      ['abcd', 'Code must be shorter than or equal to 3 characters'],
    ],
  },
  {
    name: 'IsInt',
    prop: 'Port',
    decorators: [IsInt()],
    valid: [0, -5, 2 ** 40],
    invalid: [
      [1.5, 'Port must be an integer number'],
      ['1', 'Port must be an integer number'],
    ],
  },
  {
    name: 'IsNumber',
    prop: 'Ratio',
    decorators: [IsNumber()],
    valid: [1.5, 0, -3],
    invalid: [
      ['1', 'Ratio must be a number conforming to the specified constraints'],
      [Infinity, 'Ratio must be a number conforming to the specified constraints'],
      [NaN, 'Ratio must be a number conforming to the specified constraints'],
    ],
  },
  {
    name: 'IsNumber({ maxDecimalPlaces })',
    prop: 'Price',
    decorators: [IsNumber({ maxDecimalPlaces: 2 })],
    valid: [1.25, 3],
    invalid: [[1.255, 'Price must be a number conforming to the specified constraints']],
  },
  {
    name: 'Min',
    prop: 'Port',
    decorators: [Min(1)],
    valid: [1, 2.5],
    invalid: [
      [0, 'Port must not be less than 1'],
      ['5', 'Port must not be less than 1'],
    ],
  },
  {
    name: 'Max',
    prop: 'Port',
    decorators: [Max(65535)],
    valid: [65535, -1],
    invalid: [[65536, 'Port must not be greater than 65535']],
  },
  {
    name: 'IsPositive',
    prop: 'Interval',
    decorators: [IsPositive()],
    valid: [0.1, 7],
    invalid: [
      [0, 'Interval must be a positive number'],
      [-1, 'Interval must be a positive number'],
    ],
  },
  {
    name: 'IsBoolean',
    prop: 'IsMoved',
    decorators: [IsBoolean()],
    valid: [true, false],
    invalid: [
      ['true', 'IsMoved must be a boolean value'],
      [1, 'IsMoved must be a boolean value'],
    ],
  },
  {
    name: 'IsArray',
    prop: 'Ids',
    decorators: [IsArray()],
    valid: [[], [1, 'a']],
    invalid: [
      [{}, 'Ids must be an array'],
      ['a', 'Ids must be an array'],
    ],
  },
  {
    name: 'ArrayMinSize',
    prop: 'Groups',
    decorators: [ArrayMinSize(1)],
    valid: [[1]],
    invalid: [
      [[], 'Groups must contain at least 1 elements'],
      ['x', 'Groups must contain at least 1 elements'],
    ],
  },
  {
    name: 'ArrayMaxSize',
    prop: 'Groups',
    decorators: [ArrayMaxSize(2)],
    valid: [[], [1, 2]],
    invalid: [[[1, 2, 3], 'Groups must contain no more than 2 elements']],
  },
  {
    name: 'ArrayUnique',
    prop: 'Ids',
    decorators: [ArrayUnique()],
    valid: [[1, 2], ['a', 'A'], Array.from({ length: 40 }, (_, i) => i)],
    invalid: [
      [[1, 1], 'Ids must not contain duplicate elements'],
      [[...Array.from({ length: 40 }, (_, i) => i), 39], 'Ids must not contain duplicate elements'],
      ['ab', 'Ids must not contain duplicate elements'],
    ],
  },
  {
    name: 'ArrayUnique(identifier)',
    prop: 'Items',
    decorators: [ArrayUnique((o: { Id: number }) => o.Id)],
    valid: [[{ Id: 1 }, { Id: 2 }]],
    invalid: [[[{ Id: 1 }, { Id: 1 }], "All Items's elements must be unique"]],
  },
  {
    name: 'IsUUID',
    prop: 'ScheduleId',
    decorators: [IsUUID()],
    valid: [UUID_A, UUID_B.toUpperCase(), UUID_C, '00000000-0000-0000-0000-000000000001'],
    invalid: [
      ['not-a-guid', 'ScheduleId must be a UUID'],
      [UUID_A.replace(/-/g, ''), 'ScheduleId must be a UUID'],
      [`urn:uuid:${UUID_A}`, 'ScheduleId must be a UUID'],
      [`${UUID_A}0`, 'ScheduleId must be a UUID'],
      [42, 'ScheduleId must be a UUID'],
    ],
    // The interface's "format guid" is any 8-4-4-4-12 hex string; class-validator wants an RFC 4122 version.
    deviations: ['00000000-0000-0000-0000-000000000001'],
  },
  {
    name: "IsUUID('4')",
    prop: 'Id',
    decorators: [IsUUID('4')],
    valid: [UUID_A],
    invalid: [[UUID_C, 'Id must be a UUID']],
  },
  {
    name: 'IsISO8601',
    prop: 'Start',
    decorators: [IsISO8601()],
    valid: ['2026-01-01T00:00:00Z', '2026-01-01', '2026-01-01T10:00:00.123+02:00'],
    invalid: [
      ['yesterday', 'Start must be a valid ISO 8601 date string'],
      [20260101, 'Start must be a valid ISO 8601 date string'],
    ],
  },
  {
    name: 'IsISO8601({ strict })',
    prop: 'Start',
    decorators: [IsISO8601({ strict: true })],
    valid: ['2024-02-29'],
    invalid: [['2026-02-30', 'Start must be a valid ISO 8601 date string']],
  },
  {
    name: 'IsDateString',
    prop: 'End',
    decorators: [IsDateString()],
    valid: ['2026-01-02T00:00:00Z'],
    invalid: [['2026-13-01', 'End must be a valid ISO 8601 date string']],
  },
  {
    name: 'IsEmail',
    prop: 'Email',
    decorators: [IsEmail()],
    valid: ['ada@example.com'],
    invalid: [
      ['ada@', 'Email must be an email'],
      ['ada example.com', 'Email must be an email'],
      // A lone surrogate makes validator.js throw (encodeURI): refused, never a 500.
      ['\ud800@example.com', 'Email must be an email'],
    ],
  },
  {
    name: 'IsIn',
    prop: 'Op',
    decorators: [IsIn(['add', 'remove'])],
    valid: ['add', 'remove'],
    invalid: [
      ['Add', 'Op must be one of the following values: add, remove'],
      [undefined, 'Op should not be null or undefined'],
    ],
  },
  {
    name: 'IsEnum (string enum)',
    prop: 'Color',
    decorators: [IsEnum(Color)],
    valid: ['Red', 'Blue'],
    invalid: [['red', 'Color must be one of the following values: Red, Blue']],
  },
  {
    name: 'IsEnum (numeric enum)',
    prop: 'Level',
    decorators: [IsEnum(Level)],
    valid: [1, 2],
    invalid: [
      [3, 'Level must be one of the following values: 1, 2'],
      ['Low', 'Level must be one of the following values: 1, 2'],
    ],
    // class-validator also accepts the reverse-mapped member names of a numeric enum.
    deviations: ['Low'],
  },
  {
    name: 'Matches',
    prop: 'Code',
    decorators: [Matches(/^[A-Z]{3}$/)],
    valid: ['ABC'],
    invalid: [
      ['abc', 'Code must match /^[A-Z]{3}$/ regular expression'],
      [123, 'Code must match /^[A-Z]{3}$/ regular expression'],
    ],
  },
  {
    name: 'Matches (global regex keeps no state between requests)',
    prop: 'Code',
    decorators: [Matches(/^[A-Z]{3}$/g)],
    valid: ['ABC', 'ABC', 'XYZ'],
    invalid: [['AB', 'Code must match /^[A-Z]{3}$/g regular expression']],
  },
  {
    name: 'IsObject',
    prop: 'Data',
    decorators: [IsObject()],
    valid: [{}, { a: 1 }],
    invalid: [
      [[], 'Data must be an object'],
      ['x', 'Data must be an object'],
      [null, 'Data should not be null or undefined'],
    ],
  },
  {
    name: 'Allow',
    prop: 'Anything',
    decorators: [Allow()],
    valid: [1, 'x', null, undefined, { a: [1] }, [null]],
    invalid: [],
  },
  {
    name: 'IsOptional',
    prop: 'Domain',
    decorators: [IsOptional(), IsString(), MinLength(3)],
    valid: [undefined, null, 'abc'],
    invalid: [
      [1, 'Domain must be a string'],
      ['ab', 'Domain must be longer than or equal to 3 characters'],
    ],
  },
  {
    name: 'custom message option',
    prop: 'Name',
    decorators: [IsString({ message: '$property needs text, not $value' })],
    valid: ['x'],
    invalid: [
      [5, 'Name needs text, not 5'],
      [undefined, 'Name needs text, not $value'],
    ],
  },
  {
    name: 'another class-validator built-in (runs its own validator)',
    prop: 'Color',
    decorators: [IsHexColor()],
    valid: ['#fff', 'a0a0a0'],
    invalid: [['blue', 'Color must be a hexadecimal color']],
  },
  {
    name: '{ each: true }',
    prop: 'Ids',
    decorators: [IsArray(), IsUUID(undefined, { each: true })],
    valid: [[], [UUID_A, UUID_B]],
    invalid: [[[UUID_A, 'nope'], 'Ids[1] must be a UUID']],
  },
];

describe('compileDto: every supported decorator', () => {
  describe.each(CASES)('$name', ({ prop, decorators, valid, invalid, deviations = [] }) => {
    const cls = dto(prop, ...decorators);
    const compiled = compileDto(cls);
    const input = (v: unknown): Record<string, unknown> => (v === undefined ? {} : { [prop]: v });

    it.each(valid.map((v) => [v]))('accepts %p', (v) => {
      const r = compiled.validate(input(v));
      expect(r).toEqual({ ok: true, value: input(v) });
      if (!deviations.includes(v)) expect(classValidatorAccepts(cls, input(v))).toBe(true);
    });

    if (invalid.length > 0) {
      it.each(invalid)('rejects %p', (v, message) => {
        const field = message.startsWith(`${prop}[`) ? message.slice(0, message.indexOf(' ')) : prop;
        expect(compiled.validate(input(v))).toEqual({
          ok: false,
          errors: [{ Field: field, Message: message }],
        });
        if (!deviations.includes(v)) expect(classValidatorAccepts(cls, input(v))).toBe(false);
      });
    }
  });

  it('reports one message per field, the most basic problem first', () => {
    const cls = dto('Port', Max(65535), Min(1), IsInt());
    expect(errorsOf(cls, { Port: 'x' })).toEqual([
      { Field: 'Port', Message: 'Port must be an integer number' },
    ]);
    expect(errorsOf(cls, {})).toEqual([{ Field: 'Port', Message: 'Port should not be null or undefined' }]);
  });

  it('treats a property with no class-validator decorator as unknown', () => {
    class WithPlainField {
      @IsString() Name!: string;
      Hidden?: string;
    }
    expect(errorsOf(WithPlainField, { Name: 'a', Hidden: 'b' })).toEqual([
      { Field: 'Hidden', Message: 'property Hidden should not exist' },
    ]);
  });
});

class GroupDto {
  @IsString() @IsNotEmpty() Key!: string;
  @IsArray() @ArrayMinSize(1) @IsUUID(undefined, { each: true }) ScheduleIds!: string[];
}

class ContextDto {
  @IsOptional() @IsString() Domain?: string;
  @IsOptional() @IsString() CorrelationId?: string;
}

class CheckDto {
  @IsISO8601() Start!: string;
  @IsISO8601() End!: string;
  @IsArray() @ArrayMinSize(1) @ValidateNested({ each: true }) @Type(() => GroupDto) Groups!: GroupDto[];
  @IsOptional() @IsObject() @ValidateNested() @Type(() => ContextDto) Context?: ContextDto;
}

const group = (key: string, ...ids: string[]): GroupDto => ({ Key: key, ScheduleIds: ids });
const validCheck = (): CheckDto => ({
  Start: '2026-01-01T00:00:00Z',
  End: '2026-01-02T00:00:00Z',
  Groups: [group('a', UUID_A), group('b', UUID_B, UUID_C), group('c', UUID_C)],
  Context: { Domain: 'example.com' },
});

describe('compileDto: nested DTOs and paths', () => {
  const check = compileDto(CheckDto);

  it('returns a new plain object equal to the canonical input', () => {
    const input = validCheck();
    const r = check.validate(input);
    expect(r).toStrictEqual({ ok: true, value: input });
    if (!r.ok) return;
    expect(r.value).not.toBe(input);
    expect(r.value.Groups[0]).not.toBe(input.Groups[0]);
    expect(Object.getPrototypeOf(r.value.Groups[0])).toBe(Object.prototype);
  });

  it.each<[string, (b: Record<string, unknown>) => void, FieldError[]]>([
    [
      'bad id inside a nested array',
      (b) => ((b.Groups as GroupDto[])[2].ScheduleIds = ['nope', UUID_A]),
      [{ Field: 'Groups[2].ScheduleIds[0]', Message: 'ScheduleIds[0] must be a UUID' }],
    ],
    [
      'empty key in a group',
      (b) => ((b.Groups as GroupDto[])[1].Key = ''),
      [{ Field: 'Groups[1].Key', Message: 'Key should not be empty' }],
    ],
    [
      'empty groups',
      (b) => (b.Groups = []),
      [{ Field: 'Groups', Message: 'Groups must contain at least 1 elements' }],
    ],
    [
      'group that is not an object',
      (b) => ((b.Groups as unknown[])[0] = 'a'),
      [{ Field: 'Groups[0]', Message: 'Groups[0] must be an object' }],
    ],
    [
      'context that is a string',
      (b) => (b.Context = 'x'),
      [{ Field: 'Context', Message: 'Context must be an object' }],
    ],
    [
      'nested field of a single nested object',
      (b) => (b.Context = { Domain: 5 }),
      [{ Field: 'Context.Domain', Message: 'Domain must be a string' }],
    ],
    [
      'every bad field at once',
      (b) => {
        b.Start = 'soon';
        delete b.End;
        (b.Groups as GroupDto[])[0].ScheduleIds = ['x', UUID_A, 'y'];
        (b.Groups as GroupDto[])[2].Key = 7 as unknown as string;
      },
      [
        { Field: 'Start', Message: 'Start must be a valid ISO 8601 date string' },
        { Field: 'End', Message: 'End should not be null or undefined' },
        { Field: 'Groups[0].ScheduleIds[0]', Message: 'ScheduleIds[0] must be a UUID' },
        { Field: 'Groups[0].ScheduleIds[2]', Message: 'ScheduleIds[2] must be a UUID' },
        { Field: 'Groups[2].Key', Message: 'Key must be a string' },
      ],
    ],
  ])('%s', (_, mutate, errors) => {
    const body = validCheck() as unknown as Record<string, unknown>;
    mutate(body);
    expect(errorsOf(CheckDto, body)).toEqual(errors);
    expect(classValidatorAccepts(CheckDto, body)).toBe(false);
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['an array', [validCheck()]],
    ['a string', '{}'],
    ['a number', 42],
    ['undefined', undefined],
  ])('rejects a body that is %s', (_, body) => {
    expect(check.validate(body)).toEqual({
      ok: false,
      errors: [{ Field: '', Message: 'request body must be a JSON object' }],
    });
  });

  it('handles optional nested objects: absent, null, present', () => {
    const { Context: _ignored, ...withoutContext } = validCheck();
    void _ignored;
    const absent = check.validate(withoutContext);
    expect(absent.ok && 'Context' in absent.value).toBe(false);
    expect(check.validate({ ...withoutContext, Context: null })).toEqual({
      ok: true,
      value: { ...withoutContext, Context: null },
    });
  });

  it('follows class-validator for a non-optional nested object: absent passes, null fails', () => {
    class Parent {
      @ValidateNested() @Type(() => ContextDto) Context!: ContextDto;
    }
    expect(errorsOf(Parent, {})).toEqual([]);
    expect(classValidatorAccepts(Parent, {})).toBe(true);
    expect(errorsOf(Parent, { Context: null })).toEqual([
      { Field: 'Context', Message: 'Context must be an object' },
    ]);
    expect(classValidatorAccepts(Parent, { Context: null })).toBe(false);
  });

  it('validates self-referencing DTOs (trees)', () => {
    class Node {
      @IsString() Name!: string;
      @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => Node) Children?: Node[];
    }
    const tree = { name: 'root', children: [{ NAME: 'a', Children: [{ name: 1 }] }] };
    expect(errorsOf(Node, tree)).toEqual([
      { Field: 'Children[0].Children[0].Name', Message: 'Name must be a string' },
    ]);
    expect(compileDto(Node).validate({ name: 'r', children: [{ name: 'a' }] })).toEqual({
      ok: true,
      value: { Name: 'r', Children: [{ Name: 'a' }] },
    });
  });
});

describe('compileDto: case-insensitive binding', () => {
  const check = compileDto(CheckDto);

  it('binds camelCase, lower and upper case keys at every depth to the declared names', () => {
    const input = {
      start: '2026-01-01T00:00:00Z',
      END: '2026-01-02T00:00:00Z',
      groups: [
        { key: 'a', scheduleIds: [UUID_A] },
        { KEY: 'b', SCHEDULEIDS: [UUID_B] },
      ],
      context: { domain: 'x.io', correlationId: 'c-1' },
    };
    expect(check.validate(input)).toStrictEqual({
      ok: true,
      value: {
        Start: '2026-01-01T00:00:00Z',
        End: '2026-01-02T00:00:00Z',
        Groups: [group('a', UUID_A), group('b', UUID_B)],
        Context: { Domain: 'x.io', CorrelationId: 'c-1' },
      },
    });
  });

  it.each<[string, Record<string, unknown>, FieldError[]]>([
    [
      'at the root',
      { ...validCheck(), start: '2026-01-01T00:00:00Z' },
      [{ Field: 'Start', Message: 'Start is given more than once' }],
    ],
    [
      'in an array element',
      { ...validCheck(), Groups: [group('a', UUID_A), { Key: 'b', key: 'c', ScheduleIds: [UUID_B] }] },
      [{ Field: 'Groups[1].Key', Message: 'Key is given more than once' }],
    ],
    [
      'in a nested object',
      { ...validCheck(), Context: { domain: 'a', DOMAIN: 'b' } },
      [{ Field: 'Context.Domain', Message: 'Domain is given more than once' }],
    ],
  ])('rejects keys that differ only in case %s', (_, input, errors) => {
    expect(check.validate(input)).toEqual({ ok: false, errors });
  });

  it.each<[string, Record<string, unknown>, FieldError[]]>([
    [
      'at the root',
      { ...validCheck(), Foo: 1 },
      [{ Field: 'Foo', Message: 'property Foo should not exist' }],
    ],
    [
      'in an array element',
      { ...validCheck(), Groups: [group('a', UUID_A), { ...group('b', UUID_B), extra: true }] },
      [{ Field: 'Groups[1].extra', Message: 'property extra should not exist' }],
    ],
    [
      'in a nested object',
      { ...validCheck(), Context: { bogus: 1 } },
      [{ Field: 'Context.bogus', Message: 'property bogus should not exist' }],
    ],
    [
      'named __proto__ or like an Object.prototype member',
      JSON.parse(`{"Start":"2026-01-01","End":"2026-01-02","Groups":[{"Key":"k","ScheduleIds":["${UUID_A}"]}],
        "__proto__":{"x":1},"toString":"t"}`) as Record<string, unknown>,
      [
        { Field: '__proto__', Message: 'property __proto__ should not exist' },
        { Field: 'toString', Message: 'property toString should not exist' },
      ],
    ],
  ])('rejects unknown properties %s', (_, input, errors) => {
    expect(check.validate(input)).toEqual({ ok: false, errors });
  });

  it('never reads a declared property from Object.prototype', () => {
    // A property named like an Object.prototype member cannot be declared with a string type in TypeScript.
    const Odd = dto('Name', IsString());
    IsString()(Odd.prototype as object, 'toString');
    IsOptional()(Odd.prototype as object, 'toString');
    expect(compileDto(Odd).validate({ Name: 'a' })).toEqual({ ok: true, value: { Name: 'a' } });
    expect(compileDto(Odd).validate({ name: 'a', TOSTRING: 'b' })).toEqual({
      ok: true,
      value: { Name: 'a', toString: 'b' },
    });
  });
});

describe('compileDto: AllowUnknownProperties', () => {
  @AllowUnknownProperties()
  class LifecycleDto {
    @IsString() MessageType!: string;
    @IsOptional() @ValidateNested() @Type(() => ContextDto) Context?: ContextDto;
  }
  class InstallDto extends LifecycleDto {
    @IsString() InstalledAppId!: string;
  }

  it('ignores and drops unknown keys but still validates and re-cases known ones', () => {
    const r = compileDto(LifecycleDto).validate({
      messageType: 'PING',
      pingData: { challenge: 'x' },
      lifecycle: 'P',
    });
    expect(r).toStrictEqual({ ok: true, value: { MessageType: 'PING' } });
    expect(errorsOf(LifecycleDto, { messagetype: 1, extra: true })).toEqual([
      { Field: 'MessageType', Message: 'MessageType must be a string' },
    ]);
  });

  it('applies only to the decorated class (and its subclasses), not to nested DTOs', () => {
    expect(errorsOf(LifecycleDto, { MessageType: 'x', Context: { nope: 1 } })).toEqual([
      { Field: 'Context.nope', Message: 'property nope should not exist' },
    ]);
    expect(compileDto(InstallDto).validate({ messageType: 'x', installedAppId: 'i', more: 1 })).toStrictEqual(
      {
        ok: true,
        value: { MessageType: 'x', InstalledAppId: 'i' },
      },
    );
  });

  it('is reflected in jsonSchema', () => {
    expect(compileDto(LifecycleDto).jsonSchema.additionalProperties).toBe(true);
    expect(compileDto(CheckDto).jsonSchema.additionalProperties).toBe(false);
  });
});

describe('compileDto: inheritance', () => {
  class BaseDto {
    @IsString() Name!: string;
    @IsOptional() @IsInt() Version?: number;
  }
  class DerivedDto extends BaseDto {
    @IsInt() @Min(0) Age!: number;
  }
  class OverrideDto extends BaseDto {
    @IsInt() @Min(1) override Version?: number;
  }

  it('puts base-class properties first in the normalised value', () => {
    const r = compileDto(DerivedDto).validate({ age: 3, version: 1, name: 'a' });
    expect(r.ok && Object.keys(r.value)).toEqual(['Name', 'Version', 'Age']);
  });

  it.each<[string, DtoClass, unknown, FieldError[]]>([
    ['valid derived body', DerivedDto, { Name: 'a', Age: 3 }, []],
    [
      'parent rule enforced',
      DerivedDto,
      { age: 3 },
      [{ Field: 'Name', Message: 'Name should not be null or undefined' }],
    ],
    [
      'child rule enforced',
      DerivedDto,
      { Name: 'a', Age: -1 },
      [{ Field: 'Age', Message: 'Age must not be less than 0' }],
    ],
    [
      'unknown still rejected',
      DerivedDto,
      { Name: 'a', Age: 1, X: 1 },
      [{ Field: 'X', Message: 'property X should not exist' }],
    ],
    [
      'parent class unaffected by child',
      BaseDto,
      { Name: 'a', Age: 1 },
      [{ Field: 'Age', Message: 'property Age should not exist' }],
    ],
    [
      'redeclared property keeps IsOptional, adds child rule',
      OverrideDto,
      { Name: 'a', Version: 0 },
      [{ Field: 'Version', Message: 'Version must not be less than 1' }],
    ],
  ])('%s', (_, cls, input, errors) => {
    expect(errorsOf(cls, input)).toEqual(errors);
    expect(classValidatorAccepts(cls, input as object)).toBe(errors.length === 0);
  });
});

describe('compileDto: query coercion', () => {
  class OccurrenceQueryDto {
    @IsArray() @ArrayMinSize(1) @IsUUID(undefined, { each: true }) ScheduleIds!: string[];
    @IsISO8601() Start!: string;
    @IsOptional() @IsInt() @Min(1) Page?: number;
    @IsOptional() @IsBoolean() IncludeMoved?: boolean;
    @IsOptional() @IsInt({ each: true }) Sizes?: number[];
  }
  const query = compileDto(OccurrenceQueryDto, { source: 'query' });
  const body = compileDto(OccurrenceQueryDto, { source: 'body' });

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    [
      'single id',
      { scheduleIds: UUID_A, start: '2026-01-01' },
      { ScheduleIds: [UUID_A], Start: '2026-01-01' },
    ],
    [
      'comma-separated ids, number, boolean',
      { ScheduleIds: `${UUID_A}, ${UUID_B}`, Start: '2026-01-01', page: '2', includeMoved: 'TRUE' },
      { ScheduleIds: [UUID_A, UUID_B], Start: '2026-01-01', Page: 2, IncludeMoved: true },
    ],
    [
      'repeated key, also comma-separated',
      {
        ScheduleIds: [UUID_A, `${UUID_B},${UUID_C}`],
        Start: '2026-01-01',
        IncludeMoved: 'false',
        Sizes: '1,2',
      },
      { ScheduleIds: [UUID_A, UUID_B, UUID_C], Start: '2026-01-01', IncludeMoved: false, Sizes: [1, 2] },
    ],
  ])('coerces %s', (_, input, value) => {
    expect(query.validate(input)).toStrictEqual({ ok: true, value });
  });

  it.each<[string, Record<string, unknown>, FieldError[]]>([
    ['non-numeric page', { Page: 'abc' }, [{ Field: 'Page', Message: 'Page must be an integer number' }]],
    ['fractional page', { Page: '1.5' }, [{ Field: 'Page', Message: 'Page must be an integer number' }]],
    ['empty page', { Page: '' }, [{ Field: 'Page', Message: 'Page must be an integer number' }]],
    ['page below minimum', { Page: '0' }, [{ Field: 'Page', Message: 'Page must not be less than 1' }]],
    [
      'not a boolean',
      { IncludeMoved: 'yes' },
      [{ Field: 'IncludeMoved', Message: 'IncludeMoved must be a boolean value' }],
    ],
    [
      'empty list',
      { ScheduleIds: '' },
      [{ Field: 'ScheduleIds', Message: 'ScheduleIds must contain at least 1 elements' }],
    ],
    [
      'bad list element',
      { ScheduleIds: `${UUID_A},x` },
      [{ Field: 'ScheduleIds[1]', Message: 'ScheduleIds[1] must be a UUID' }],
    ],
    [
      'bad number in list',
      { Sizes: '1,a' },
      [{ Field: 'Sizes[1]', Message: 'Sizes[1] must be an integer number' }],
    ],
  ])('rejects %s', (_, overrides, errors) => {
    expect(query.validate({ ScheduleIds: UUID_A, Start: '2026-01-01', ...overrides })).toEqual({
      ok: false,
      errors,
    });
  });

  it('accepts the null-prototype objects query parsers produce', () => {
    const parsed = Object.assign(Object.create(null) as Record<string, unknown>, {
      scheduleids: UUID_A,
      START: '2026-01-01',
    });
    expect(query.validate(parsed)).toStrictEqual({
      ok: true,
      value: { ScheduleIds: [UUID_A], Start: '2026-01-01' },
    });
  });

  it('treats a missing query as an empty object, and does not coerce bodies', () => {
    expect(errorsOf(OccurrenceQueryDto, undefined, 'query').map((e) => e.Field)).toEqual([
      'ScheduleIds',
      'Start',
    ]);
    expect(body.validate({ ScheduleIds: [UUID_A], Start: '2026-01-01', Page: '2' })).toEqual({
      ok: false,
      errors: [{ Field: 'Page', Message: 'Page must be an integer number' }],
    });
  });

  it('honours @Type(() => Number) in bodies with the same strict coercion', () => {
    class Paging {
      @Type(() => Number) @IsInt() Limit!: number;
    }
    expect(compileDto(Paging).validate({ limit: '25' })).toEqual({ ok: true, value: { Limit: 25 } });
    expect(errorsOf(Paging, { limit: '25x' })).toEqual([
      { Field: 'Limit', Message: 'Limit must be an integer number' },
    ]);
  });
});

// Registered (non-built-in) validators, run through their own validate() with the normalised object.
function IsAfter(property: string): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isAfter',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [property],
      validator: {
        validate: (value: unknown, args: ValidationArguments) => {
          const other = (args.object as Record<string, unknown>)[args.constraints[0] as string];
          return (
            typeof value === 'string' && typeof other === 'string' && Date.parse(value) > Date.parse(other)
          );
        },
        defaultMessage: (args: ValidationArguments) =>
          `$property must be after ${String(args.constraints[0])}`,
      },
    });
}

@ValidatorConstraint({ name: 'isEven' })
class IsEvenConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return typeof value === 'number' && value % 2 === 0;
  }
  defaultMessage(): string {
    return '$property must be even';
  }
}

@ValidatorConstraint({ name: 'isTaken', async: true })
class IsTakenConstraint implements ValidatorConstraintInterface {
  validate(): Promise<boolean> {
    return Promise.resolve(true);
  }
}

describe('compileDto: registered custom validators', () => {
  class WindowDto {
    @IsISO8601() Start!: string;
    @IsISO8601() @IsAfter('Start') End!: string;
    @IsOptional() @Validate(IsEvenConstraint) Count?: number;
    @IsOptional() @Validate(IsEvenConstraint, { each: true }) Evens?: number[];
  }

  it.each<[string, Record<string, unknown>, FieldError[]]>([
    ['valid, keys in any case', { start: '2026-01-01', END: '2026-01-02', count: 2, evens: [2, 4] }, []],
    [
      'cross-field rule sees the canonical object',
      { start: '2026-01-02', end: '2026-01-01' },
      [{ Field: 'End', Message: 'End must be after Start' }],
    ],
    [
      '@Validate constraint class',
      { Start: '2026-01-01', End: '2026-01-02', Count: 3 },
      [{ Field: 'Count', Message: 'Count must be even' }],
    ],
    [
      'each on a custom validator',
      { Start: '2026-01-01', End: '2026-01-02', Evens: [2, 3] },
      [{ Field: 'Evens', Message: 'Evens must be even' }],
    ],
    [
      'custom rule skipped when a built-in one already failed',
      { Start: '2026-01-01', End: 'x' },
      [{ Field: 'End', Message: 'End must be a valid ISO 8601 date string' }],
    ],
  ])('%s', (_, input, errors) => {
    expect(errorsOf(WindowDto, input)).toEqual(errors);
  });
});

describe('compileDto: compile-time errors', () => {
  class Child {
    @IsString() Name!: string;
  }
  class Shape {}
  it.each<[string, () => DtoClass, RegExp]>([
    [
      'ValidateIf',
      () =>
        dto(
          'Port',
          ValidateIf(() => true),
          IsInt(),
        ),
      /PortProbe\.Port: unsupported decorator ValidateIf/,
    ],
    [
      'ValidatePromise',
      () => dto('Later', ValidatePromise(), IsString()),
      /LaterProbe\.Later: unsupported decorator ValidatePromise/,
    ],
    [
      'validation groups',
      () => dto('Name', IsString({ groups: ['admin'] })),
      /NameProbe\.Name: unsupported decorator IsString \(validation groups\)/,
    ],
    [
      'an async validator',
      () => dto('User', Validate(IsTakenConstraint)),
      /UserProbe\.User: unsupported decorator Validate\(IsTakenConstraint\) \(asynchronous validator\)/,
    ],
    [
      'ValidateNested without @Type',
      () => dto('Child', ValidateNested()),
      /ChildProbe\.Child: unsupported decorator ValidateNested/,
    ],
    [
      '@Type(() => Date)',
      () =>
        dto(
          'When',
          Type(() => Date),
          IsString(),
        ),
      /WhenProbe\.When: unsupported decorator Type/,
    ],
    [
      '@Type(() => Child) without ValidateNested',
      () =>
        dto(
          'Kid',
          Type(() => Child),
          IsObject(),
        ),
      /KidProbe\.Kid: unsupported decorator Type/,
    ],
    [
      '@Type with a discriminator',
      () =>
        dto(
          'Shape',
          ValidateNested(),
          Type(() => Shape, { discriminator: { property: 'kind', subTypes: [] } }),
        ),
      /ShapeProbe\.Shape: unsupported decorator Type \(discriminator\)/,
    ],
    [
      '@Transform',
      () =>
        dto(
          'Name',
          Transform(({ value }: { value: unknown }) => value),
          IsString(),
        ),
      /NameProbe\.Name: unsupported decorator Transform/,
    ],
    [
      '@Exclude',
      () => dto('Secret', Exclude(), IsString()),
      /SecretProbe\.Secret: unsupported decorator Exclude/,
    ],
    [
      '@Expose({ name })',
      () => dto('Name', Expose({ name: 'name' }), IsString()),
      /NameProbe\.Name: unsupported decorator Expose/,
    ],
  ])('rejects %s, naming class, property and decorator', (_, make, message) => {
    const cls = make();
    expect(() => compileDto(cls)).toThrow(DtoCompileError);
    expect(() => compileDto(cls)).toThrow(message);
  });

  it('rejects two properties whose names differ only in case', () => {
    class Clash {
      @IsString() Name!: string;
      @IsString() name!: string;
    }
    expect(() => compileDto(Clash)).toThrow(/Clash\.(N|n)ame: unsupported decorator property name/);
  });

  it('rejects a nested DTO with an unsupported decorator when compiling the parent', () => {
    class BadChild {
      @ValidateIf(() => true) @IsString() Name!: string;
    }
    class Parent {
      @ValidateNested() @Type(() => BadChild) Child!: BadChild;
    }
    expect(() => compileDto(Parent)).toThrow(/BadChild\.Name: unsupported decorator ValidateIf/);
  });
});

describe('compileDtoCached', () => {
  it('returns the same compiled validator for the same class and source', () => {
    expect(compileDtoCached(CheckDto)).toBe(compileDtoCached(CheckDto, { source: 'body' }));
    expect(compileDtoCached(CheckDto, { source: 'query' })).toBe(
      compileDtoCached(CheckDto, { source: 'query' }),
    );
    expect(compileDtoCached(CheckDto, { source: 'query' })).not.toBe(compileDtoCached(CheckDto));
  });
});

describe('compileDto: jsonSchema', () => {
  it('describes the rules in draft-07 with declared casing and nested definitions', () => {
    const schema = compileDto(CheckDto).jsonSchema;
    expect(schema).toMatchObject({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      required: ['Start', 'End', 'Groups'],
      additionalProperties: false,
      properties: {
        Groups: { type: 'array', minItems: 1, allOf: [{ items: { $ref: '#/definitions/GroupDto' } }] },
      },
      definitions: {
        GroupDto: {
          required: ['Key', 'ScheduleIds'],
          properties: { ScheduleIds: { type: 'array', minItems: 1, items: { type: 'string' } } },
          additionalProperties: false,
        },
      },
    });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Property-based tests on a nested DTO using most decorators.

enum Mode {
  Fast = 'Fast',
  Slow = 'Slow',
}

class PropItemDto {
  @IsString() @IsNotEmpty() @MaxLength(8) Key!: string;
  @IsArray() @ArrayMaxSize(3) @IsUUID(undefined, { each: true }) ScheduleIds!: string[];
  @IsOptional() @IsInt() @Min(0) @Max(10) Weight?: number;
}

class PropContextDto {
  @IsOptional() @IsString() @Length(1, 5) Domain?: string;
  @IsOptional() @IsBoolean() Verbose?: boolean;
}

class PropRootDto {
  @IsISO8601() Start!: string;
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(3)
  @ValidateNested({ each: true })
  @Type(() => PropItemDto)
  Groups!: PropItemDto[];
  @IsOptional() @IsObject() @ValidateNested() @Type(() => PropContextDto) Context?: PropContextDto;
  @IsOptional() @IsEnum(Mode) Mode?: Mode;
  @IsOptional() @IsIn([1, 2, 3]) Level?: number;
  @IsOptional() @IsPositive() Ratio?: number;
  @IsOptional() @Matches(/^[a-z]+$/) Tag?: string;
  @IsOptional() @IsArray() @ArrayUnique() Tags?: string[];
  @IsDefined() @IsNumber() Amount!: number;
  @Allow() Extra?: unknown;
}

const isoDate = fc
  .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString());

const validItem = fc.record(
  {
    Key: fc.string({ minLength: 1, maxLength: 8 }),
    ScheduleIds: fc.array(fc.uuid(), { maxLength: 3 }),
    Weight: fc.integer({ min: 0, max: 10 }),
  },
  { requiredKeys: ['Key', 'ScheduleIds'], noNullPrototype: true },
);

const validRoot = fc.record(
  {
    Start: isoDate,
    Groups: fc.array(validItem, { minLength: 1, maxLength: 3 }),
    Context: fc.option(
      fc.record(
        { Domain: fc.string({ minLength: 1, maxLength: 5 }), Verbose: fc.boolean() },
        { requiredKeys: [], noNullPrototype: true },
      ),
    ),
    Mode: fc.constantFrom(Mode.Fast, Mode.Slow),
    Level: fc.constantFrom(1, 2, 3),
    Ratio: fc.double({ min: 0.001, max: 1e6, noNaN: true }),
    Tag: fc.stringMatching(/^[a-z]{1,6}$/),
    Tags: fc.uniqueArray(fc.string(), { maxLength: 4 }),
    Amount: fc.double({ noNaN: true, noDefaultInfinity: true }),
    Extra: fc.jsonValue(),
  },
  { requiredKeys: ['Start', 'Groups', 'Amount'], noNullPrototype: true },
);

/** Deterministically re-cases every key (at every depth) from a seed. */
function recase(value: unknown, seed: number): unknown {
  let state = seed >>> 0 || 1;
  const next = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  const walk = (v: unknown, underExtra: boolean): unknown => {
    if (Array.isArray(v)) return v.map((e) => walk(e, underExtra));
    if (v === null || typeof v !== 'object' || underExtra) return v;
    const out: Record<string, unknown> = {};
    for (const [k, child] of Object.entries(v)) {
      const key = [...k].map((ch) => (next() % 2 === 0 ? ch.toLowerCase() : ch.toUpperCase())).join('');
      out[key] = walk(child, k === 'Extra');
    }
    return out;
  };
  return walk(value, false);
}

const junk = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 10 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
);

/** Mostly a valid value, sometimes a near miss for the field's rules, sometimes anything. */
const field = (valid: fc.Arbitrary<unknown>, nearMiss: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 24, arbitrary: valid },
    { weight: 1, arbitrary: nearMiss },
    { weight: 1, arbitrary: junk },
  );

/** Now and then drops a required key or adds an unknown one. */
const edited = (
  required: string,
  o: fc.Arbitrary<Record<string, unknown>>,
): fc.Arbitrary<Record<string, unknown>> =>
  fc.tuple(o, fc.integer({ min: 0, max: 19 })).map(([v, dice]) => {
    if (dice === 0) return Object.fromEntries(Object.entries(v).filter(([k]) => k !== required));
    return dice === 1 ? { ...v, Surplus: 1 } : v;
  });

// Elements of a nested-DTO array are objects or scalars here: a nested array in that position is a documented
// deviation (class-validator validates arrays of arrays of DTOs; this validator rejects them).
const anyItem = fc.oneof(
  {
    weight: 24,
    arbitrary: edited(
      'Key',
      fc.record(
        {
          Key: field(
            fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }),
            fc.constantFrom('', 'x'.repeat(9), '\u{1F600}'.repeat(9), '\u{1F600}'.repeat(8)),
          ),
          ScheduleIds: field(
            fc.array(field(fc.uuid(), fc.constantFrom('x', `${UUID_A}0`)), { maxLength: 3 }),
            fc.array(fc.uuid(), { minLength: 4, maxLength: 4 }),
          ),
          Weight: field(fc.integer({ min: 0, max: 10 }), fc.constantFrom(-1, 11, 2.5, '3')),
        },
        { requiredKeys: ['Key', 'ScheduleIds'] },
      ),
    ),
  },
  { weight: 1, arbitrary: fc.oneof(fc.string(), fc.integer(), fc.constant(null)) },
);

const anyRoot = edited(
  'Start',
  fc.record(
    {
      Start: field(isoDate, fc.constantFrom('2026-13-01', 'today', '')),
      Groups: field(fc.array(anyItem, { minLength: 1, maxLength: 3 }), fc.constantFrom([], {})),
      Context: field(
        edited(
          'Domain',
          fc.record(
            {
              Domain: field(
                fc.string({ unit: 'binary', minLength: 1, maxLength: 5 }),
                fc.constantFrom('', '123456'),
              ),
              Verbose: field(fc.boolean(), fc.constantFrom('true', 0)),
            },
            { requiredKeys: [] },
          ),
        ),
        fc.constantFrom([], 'ctx'),
      ),
      Mode: field(fc.constantFrom('Fast', 'Slow', null), fc.constantFrom('fast', 'Medium')),
      Level: field(fc.constantFrom(1, 2, 3), fc.constantFrom(0, '1', 4)),
      Ratio: field(fc.double({ min: 1e-3, max: 10, noNaN: true }), fc.constantFrom(0, -1, -0)),
      Tag: field(fc.stringMatching(/^[a-z]{1,4}$/), fc.constantFrom('', 'A', 'a1')),
      Tags: field(fc.uniqueArray(fc.constantFrom('a', 'b', 'c'), { maxLength: 3 }), fc.constant(['a', 'a'])),
      Amount: field(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(NaN, Infinity, '1')),
      Extra: fc.jsonValue(),
    },
    { requiredKeys: ['Start', 'Groups', 'Amount'] },
  ),
);

describe('compileDto: properties', () => {
  const compiled = compileDto(PropRootDto);

  it('accepts any valid object with re-cased keys and returns exactly the canonical object', () => {
    fc.assert(
      fc.property(validRoot, fc.integer(), (canonical, seed) => {
        const r = compiled.validate(recase(canonical, seed));
        expect(r).toStrictEqual({ ok: true, value: canonical });
      }),
      { numRuns: 300 },
    );
  });

  it('agrees with class-validator (whitelist + forbidNonWhitelisted) on valid/invalid', () => {
    let accepted = 0;
    const runs = 500;
    fc.assert(
      fc.property(anyRoot, (input) => {
        const ours = compiled.validate(input);
        expect(ours.ok).toBe(classValidatorAccepts(PropRootDto, input));
        if (ours.ok) accepted++;
      }),
      { numRuns: runs },
    );
    // Both outcomes must be well represented, or agreement would say little.
    expect(accepted).toBeGreaterThan(runs * 0.1);
    expect(accepted).toBeLessThan(runs * 0.9);
  });

  it('agrees with ajv running jsonSchema on JSON bodies with canonical keys', () => {
    const ajv = new Ajv({ allErrors: true, strict: true });
    addFormats.default(ajv);
    const ajvValidate = ajv.compile(compiled.jsonSchema);
    // ASCII strings: JSON Schema counts a character + variation selector as two characters, validator.js as one.
    const asciiRoot = anyRoot.map(
      (o) =>
        JSON.parse(
          JSON.stringify(o, (_, v: unknown) => (typeof v === 'string' ? v.replace(/[^\x20-\x7e]/g, 'x') : v)),
        ) as unknown,
    );
    fc.assert(
      fc.property(
        fc.oneof(
          asciiRoot,
          validRoot.map((o) => JSON.parse(JSON.stringify(o)) as unknown),
        ),
        (input) => {
          expect(ajvValidate(input)).toBe(compiled.validate(input).ok);
        },
      ),
      { numRuns: 400 },
    );
  });
});
