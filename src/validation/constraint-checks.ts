// Native re-implementations of the class-validator 0.15 built-in constraints that platform-api DTOs use, each with
// class-validator's default message and a draft-07 JSON-schema fragment. Semantics follow class-validator / validator.js
// 13.15 (e.g. string length counts a surrogate pair as one character) except where noted: IsUUID with no version
// accepts any 8-4-4-4-12 hex guid (the interface's "format guid"), IsEnum accepts only the enum's values (not the
// reverse-mapped names of a numeric enum).
import {
  isEmail,
  isISO8601,
  isNumber,
  isUUID,
  type IsNumberOptions,
  type ValidationArguments,
} from 'class-validator';

export type JsonSchema = Record<string, unknown>;

/**
 * A registered (custom) constraint that states its rule in JSON Schema, so the OpenAPI document says what it checks
 * (src/openapi/validator-rules.ts): `jsonSchema` on the field's value, `objectJsonSchema` on the object holding the
 * field (a rule between fields, e.g. `if`/`then`). A constraint without them is rendered as "not expressed".
 */
export interface DescribedConstraint {
  readonly jsonSchema?: JsonSchema;
  readonly objectJsonSchema?: JsonSchema;
}

/** How a failing check is described: `label` is the field name as the client should read it (`ScheduleIds[0]`). */
export type MessageFn = (label: string, value: unknown) => string;

export interface NativeCheck {
  /** class-validator constraint name (`isString`), also the key in `NATIVE_CHECKS`. */
  readonly name: string;
  /** Lower rank runs first, so a field reports the most basic problem (missing → wrong type → out of range). */
  readonly rank: number;
  readonly test: (value: unknown) => boolean;
  readonly message: MessageFn;
  readonly schema: JsonSchema;
  /** Query strings carry only text: the scalar type a string must be coerced to before this check can pass. */
  readonly scalar?: 'number' | 'boolean';
  /** The check only passes for arrays (query: a single or comma-separated value becomes a list). */
  readonly list?: boolean;
}

const RANK_PRESENCE = 0;
const RANK_TYPE = 1;
const RANK_RULE = 2;

/**
 * `Name <local@domain.example>` (RFC 5322 §3.4 name-addr) in the plain form validator.js's isEmail takes with
 * `allow_display_name`: a display name of words of letters and digits, a dot-atom local part and a host with a
 * letter TLD. Narrower than what isEmail accepts (quoted names, longer parts), never wider: a client that keeps to it
 * is accepted (the OpenAPI document states it; test/openapi-generated.e2e-spec.ts sends values it generates).
 */
export const DISPLAY_NAME_ADDRESS_PATTERN =
  '^[A-Za-z0-9]{1,32}(?: [A-Za-z0-9]{1,32}){0,3} ?<[A-Za-z0-9_%+-]{1,32}(?:\\.[A-Za-z0-9_%+-]{1,16}){0,2}' +
  '@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,30}[A-Za-z0-9])?\\.){1,4}[A-Za-z]{2,24}>$';

/** Any-version guid as .NET formats it ("D" format); validator.js's `loose`. */
export const GUID_PATTERN = '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$';
const GUID_RE = new RegExp(GUID_PATTERN);

// validator.js 13.15 isISO8601 (non-strict), used only to describe the rule in JSON schema.
const ISO8601_PATTERN =
  '^([\\+-]?\\d{4}(?!\\d{2}\\b))((-?)((0[1-9]|1[0-2])(\\3([12]\\d|0[1-9]|3[01]))?|W([0-4]\\d|5[0-3])(-?[1-7])?|' +
  '(00[1-9]|0[1-9]\\d|[12]\\d{2}|3([0-5]\\d|6[1-6])))([T\\s]((([01]\\d|2[0-3])((:?)[0-5]\\d)?|24:?00)([\\.,]\\d+(?!:))?)?' +
  '(\\17[0-5]\\d([\\.,]\\d+)?)?([zZ]|([\\+-])([01]\\d|2[0-3]):?([0-5]\\d)?)?)?)?$';

/**
 * String length as validator.js's isLength counts it: a surrogate pair and a character followed by a
 * variation selector (U+FE0E/U+FE0F) each count once. Loops instead of two global regex matches (no allocation).
 */
export function stringLength(s: string): number {
  let len = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800) continue;
    if (c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) len--;
    } else if ((c === 0xfe0e || c === 0xfe0f) && i > 0) {
      const prev = s.charCodeAt(i - 1);
      if (prev !== 0xfe0e && prev !== 0xfe0f) len--;
    }
  }
  return len;
}

/** class-validator's `constraintToString`: arrays are joined with ", ". */
export function constraintToString(constraint: unknown): string {
  if (Array.isArray(constraint)) return constraint.join(', ');
  if (typeof constraint === 'symbol') return constraint.description ?? '';
  return String(constraint);
}

/** class-validator's `$property`/`$value`/`$constraintN`/`$target` substitution for user-supplied messages. */
export function replaceMessageTokens(
  template: string,
  label: string,
  value: unknown,
  constraints: readonly unknown[] | undefined,
  targetName: string,
): string {
  let out = template;
  if (constraints) {
    constraints.forEach((c, i) => {
      out = out.split(`$constraint${i + 1}`).join(constraintToString(c));
    });
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    out = out.split('$value').join(String(value));
  }
  return out.split('$property').join(label).split('$target').join(targetName);
}

/** Builds the message function for a metadata entry that carries a custom `message` option. */
export function customMessage(
  message: string | ((args: ValidationArguments) => string),
  constraints: readonly unknown[] | undefined,
  targetName: string,
): MessageFn {
  if (typeof message === 'string') {
    return (label, value) => replaceMessageTokens(message, label, value, constraints, targetName);
  }
  return (label, value) =>
    replaceMessageTokens(
      message({ targetName, property: label, object: {}, value, constraints: [...(constraints ?? [])] }),
      label,
      value,
      constraints,
      targetName,
    );
}

const isStr = (v: unknown): v is string => typeof v === 'string';
const isNum = (v: unknown): v is number => typeof v === 'number';
const numberArg = (constraints: readonly unknown[], i: number, what: string): number => {
  const n = constraints[i];
  if (typeof n !== 'number') throw new Error(`${what} needs a numeric constraint, got ${String(n)}`);
  return n;
};

function arrayIsUnique(a: readonly unknown[]): boolean {
  if (a.length < 16) {
    for (let i = 1; i < a.length; i++) {
      for (let j = 0; j < i; j++) if (a[i] === a[j]) return false;
    }
    return true;
  }
  return new Set(a).size === a.length;
}

function lengthMessage(min: number | undefined, max: number | undefined): MessageFn {
  return (label, value) => {
    const len = typeof value === 'string' ? stringLength(value) : 0;
    if (min !== undefined && (typeof value !== 'string' || len < min)) {
      return `${label} must be longer than or equal to ${min} characters`;
    }
    if (max !== undefined && len > max) return `${label} must be shorter than or equal to ${max} characters`;
    return `${label} must be longer than or equal to ${min} and shorter than or equal to ${max} characters`;
  };
}

type CheckBuilder = (constraints: readonly unknown[]) => Omit<NativeCheck, 'name'>;

/**
 * The constraints implemented natively, keyed by class-validator's constraint name (the `name` in its metadata).
 * Anything else registered through `registerDecorator` runs through its own (sync) validator instead.
 */
export const NATIVE_CHECKS: ReadonlyMap<string, CheckBuilder> = new Map<string, CheckBuilder>([
  [
    'isDefined',
    () => ({
      rank: RANK_PRESENCE,
      test: (v) => v !== undefined && v !== null,
      message: (l) => `${l} should not be null or undefined`,
      schema: { not: { const: null } },
    }),
  ],
  [
    'isNotEmpty',
    () => ({
      rank: RANK_PRESENCE,
      test: (v) => v !== '' && v !== null && v !== undefined,
      message: (l) => `${l} should not be empty`,
      // minLength applies to strings only: of them, '' is the one it refuses.
      schema: { not: { enum: [null, ''] }, minLength: 1 },
    }),
  ],
  [
    'isString',
    () => ({
      rank: RANK_TYPE,
      test: isStr,
      message: (l) => `${l} must be a string`,
      schema: { type: 'string' },
    }),
  ],
  [
    'minLength',
    (c) => {
      const min = numberArg(c, 0, 'MinLength');
      return {
        rank: RANK_RULE,
        test: (v) => isStr(v) && stringLength(v) >= min,
        message: (l) => `${l} must be longer than or equal to ${min} characters`,
        schema: { type: 'string', minLength: min },
      };
    },
  ],
  [
    'maxLength',
    (c) => {
      const max = numberArg(c, 0, 'MaxLength');
      return {
        rank: RANK_RULE,
        test: (v) => isStr(v) && stringLength(v) <= max,
        message: (l) => `${l} must be shorter than or equal to ${max} characters`,
        schema: { type: 'string', maxLength: max },
      };
    },
  ],
  [
    'isLength',
    (c) => {
      const min = typeof c[0] === 'number' ? c[0] : undefined;
      const max = typeof c[1] === 'number' ? c[1] : undefined;
      const lo = min ?? 0;
      return {
        rank: RANK_RULE,
        test: (v) => {
          if (!isStr(v)) return false;
          const len = stringLength(v);
          return len >= lo && (max === undefined || len <= max);
        },
        message: lengthMessage(min, max),
        schema: { type: 'string', minLength: lo, ...(max === undefined ? {} : { maxLength: max }) },
      };
    },
  ],
  [
    'isInt',
    () => ({
      rank: RANK_TYPE,
      test: (v) => isNum(v) && Number.isInteger(v),
      message: (l) => `${l} must be an integer number`,
      schema: { type: 'integer' },
      scalar: 'number',
    }),
  ],
  [
    'isNumber',
    (c) => {
      const options = (c[0] ?? {}) as IsNumberOptions;
      const plain = !options.allowNaN && !options.allowInfinity && options.maxDecimalPlaces === undefined;
      return {
        rank: RANK_TYPE,
        test: plain ? (v) => isNum(v) && Number.isFinite(v) : (v) => isNumber(v, options),
        message: (l) => `${l} must be a number conforming to the specified constraints`,
        schema: { type: 'number' },
        scalar: 'number',
      };
    },
  ],
  [
    'min',
    (c) => {
      const min = numberArg(c, 0, 'Min');
      return {
        rank: RANK_RULE,
        test: (v) => isNum(v) && v >= min,
        message: (l) => `${l} must not be less than ${min}`,
        schema: { type: 'number', minimum: min },
        scalar: 'number',
      };
    },
  ],
  [
    'max',
    (c) => {
      const max = numberArg(c, 0, 'Max');
      return {
        rank: RANK_RULE,
        test: (v) => isNum(v) && v <= max,
        message: (l) => `${l} must not be greater than ${max}`,
        schema: { type: 'number', maximum: max },
        scalar: 'number',
      };
    },
  ],
  [
    'isPositive',
    () => ({
      rank: RANK_RULE,
      test: (v) => isNum(v) && v > 0,
      message: (l) => `${l} must be a positive number`,
      schema: { type: 'number', exclusiveMinimum: 0 },
      scalar: 'number',
    }),
  ],
  [
    'isBoolean',
    () => ({
      rank: RANK_TYPE,
      test: (v) => typeof v === 'boolean' || v instanceof Boolean,
      message: (l) => `${l} must be a boolean value`,
      schema: { type: 'boolean' },
      scalar: 'boolean',
    }),
  ],
  [
    'isArray',
    () => ({
      rank: RANK_TYPE,
      test: Array.isArray,
      message: (l) => `${l} must be an array`,
      schema: { type: 'array' },
      list: true,
    }),
  ],
  [
    'arrayMinSize',
    (c) => {
      const min = numberArg(c, 0, 'ArrayMinSize');
      return {
        rank: RANK_RULE,
        test: (v) => Array.isArray(v) && v.length >= min,
        message: (l) => `${l} must contain at least ${min} elements`,
        schema: { type: 'array', minItems: min },
        list: true,
      };
    },
  ],
  [
    'arrayMaxSize',
    (c) => {
      const max = numberArg(c, 0, 'ArrayMaxSize');
      return {
        rank: RANK_RULE,
        test: (v) => Array.isArray(v) && v.length <= max,
        message: (l) => `${l} must contain no more than ${max} elements`,
        schema: { type: 'array', maxItems: max },
        list: true,
      };
    },
  ],
  // arrayUnique is built in dto-plan.ts: its optional identifier function lives only in the decorator's closure.
  [
    'isUuid',
    (c) => {
      const version = c[0];
      const anyGuid = version === undefined || version === null || version === 'all' || version === 'loose';
      const versioned = version as Parameters<typeof isUUID>[1];
      return {
        rank: RANK_RULE,
        test: anyGuid ? (v) => isStr(v) && v.length === 36 && GUID_RE.test(v) : (v) => isUUID(v, versioned),
        message: (l) => `${l} must be a UUID`,
        schema: anyGuid
          ? { type: 'string', pattern: GUID_PATTERN }
          : {
              type: 'string',
              pattern: GUID_PATTERN,
              $comment: `UUID version ${constraintToString(version)}`,
            },
      };
    },
  ],
  ['isIso8601', (c) => iso8601Check(c)],
  ['isDateString', (c) => iso8601Check(c)],
  [
    'isEmail',
    (c) => {
      const options = c[0] as Parameters<typeof isEmail>[1];
      return {
        rank: RANK_RULE,
        // validator.js measures the address with encodeURI, which throws on a lone surrogate: not an email.
        test: (v) => {
          try {
            return isEmail(v, options);
          } catch {
            return false;
          }
        },
        message: (l) => `${l} must be an email`,
        // With a display name allowed (`Name <a@b.example>`) the value is no JSON Schema `email`.
        schema: options?.allow_display_name
          ? { type: 'string', anyOf: [{ format: 'email' }, { pattern: DISPLAY_NAME_ADDRESS_PATTERN }] }
          : { type: 'string', format: 'email' },
      };
    },
  ],
  [
    'isIn',
    (c) => {
      const values = c[0];
      if (!Array.isArray(values)) throw new Error('IsIn needs an array of allowed values');
      const allowed: readonly unknown[] = values;
      return {
        rank: RANK_RULE,
        test: (v) => allowed.includes(v) && !(typeof v === 'number' && Number.isNaN(v)),
        message: (l) => `${l} must be one of the following values: ${constraintToString(allowed)}`,
        schema: { enum: allowed },
      };
    },
  ],
  [
    'isEnum',
    (c) => {
      const values = c[1];
      if (!Array.isArray(values)) throw new Error('IsEnum metadata lacks the list of enum values');
      const allowed = new Set<unknown>(values);
      return {
        rank: RANK_RULE,
        test: (v) => allowed.has(v),
        message: (l) => `${l} must be one of the following values: ${constraintToString(values)}`,
        schema: { enum: [...allowed] },
      };
    },
  ],
  [
    'matches',
    (c) => {
      const pattern = c[0];
      const modifiers = typeof c[1] === 'string' ? c[1] : undefined;
      const re = pattern instanceof RegExp ? pattern : new RegExp(String(pattern), modifiers);
      // A global or sticky RegExp keeps lastIndex between test() calls; match() (as validator.js does) does not.
      const stateful = re.global || re.sticky;
      return {
        rank: RANK_RULE,
        test: stateful ? (v) => isStr(v) && v.match(re) !== null : (v) => isStr(v) && re.test(v),
        message: (l) => `${l} must match ${String(pattern)} regular expression`,
        schema: {
          type: 'string',
          pattern: re.source,
          ...(re.flags === '' ? {} : { $comment: `flags ${re.flags}` }),
        },
      };
    },
  ],
  [
    'isObject',
    () => ({
      rank: RANK_TYPE,
      test: (v) => v !== null && (typeof v === 'object' || typeof v === 'function') && !Array.isArray(v),
      message: (l) => `${l} must be an object`,
      schema: { type: 'object' },
    }),
  ],
]);

function iso8601Check(c: readonly unknown[]): Omit<NativeCheck, 'name'> {
  const options = c[0] as Parameters<typeof isISO8601>[1];
  return {
    rank: RANK_RULE,
    test: (v) => isISO8601(v, options),
    message: (l) => `${l} must be a valid ISO 8601 date string`,
    schema: { type: 'string', pattern: ISO8601_PATTERN },
  };
}

/** Built by dto-plan.ts around the decorator's own validator (which holds the optional identifier function). */
export function arrayUniqueCheck(test: (value: unknown) => boolean): Omit<NativeCheck, 'name'> {
  return {
    rank: RANK_RULE,
    test,
    message: (l) => `${l} must not contain duplicate elements`,
    schema: { type: 'array', uniqueItems: true },
    list: true,
  };
}

/** Exposed for the identifier-free fast path of ArrayUnique. */
export function isUniqueArray(v: unknown): boolean {
  return Array.isArray(v) && arrayIsUnique(v);
}
