// Reads a DTO class's class-validator (and class-transformer @Type) decorator metadata once and turns it into a
// plan of plain data + small check closures that compile-dto.ts executes per request (the DTOs are the
// single source of validation rules). Anything whose meaning the plan could not reproduce exactly is rejected here,
// at compile time, so no rule is silently dropped.
import 'reflect-metadata';
import {
  getMetadataStorage,
  ValidationTypes,
  type MetadataStorage,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import {
  arrayUniqueCheck,
  customMessage,
  isUniqueArray,
  NATIVE_CHECKS,
  replaceMessageTokens,
  type DescribedConstraint,
  type JsonSchema,
  type MessageFn,
  type NativeCheck,
} from './constraint-checks.js';

type ValidationMetadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];

export type DtoClass<T = unknown> = new (...args: never[]) => T;
export type Source = 'body' | 'query';

/** Thrown by compileDto when a DTO uses something the compiler cannot check exactly. */
export class DtoCompileError extends Error {
  constructor(className: string, property: string | undefined, decorator: string, reason: string) {
    super(
      `${className}${property === undefined ? '' : `.${property}`}: unsupported decorator ${decorator} (${reason})`,
    );
    this.name = 'DtoCompileError';
  }
}

export interface FieldCheck {
  readonly rank: number;
  readonly test: (value: unknown) => boolean;
  readonly message: MessageFn;
  /** A user-supplied `message` option: used as-is, even when the value is missing. */
  readonly explicitMessage: boolean;
  readonly schema: JsonSchema;
  readonly scalar: 'number' | 'boolean' | undefined;
  readonly list: boolean;
}

/** A registerDecorator/@Validate constraint run through its own synchronous validator. */
export interface CustomCheck {
  readonly name: string;
  readonly each: boolean;
  /** The rule in JSON Schema, when the constraint states it (DescribedConstraint). */
  readonly schema: JsonSchema | undefined;
  /** A rule between fields, stated on the object that holds the field (DescribedConstraint). */
  readonly objectSchema: JsonSchema | undefined;
  readonly run: (value: unknown, object: Record<string, unknown>) => boolean;
  readonly message: (label: string, value: unknown, object: Record<string, unknown>) => string;
}

export interface FieldPlan {
  readonly name: string;
  readonly optional: boolean;
  /** Rules on the whole value, ordered presence → type → range. */
  readonly checks: readonly FieldCheck[];
  /** `{ each: true }` rules: on every element when the value is an array, else on the value itself. */
  readonly eachChecks: readonly FieldCheck[];
  readonly custom: readonly CustomCheck[];
  readonly nested: ObjectPlan | undefined;
  readonly nestedList: boolean;
  readonly coerce: ((value: unknown) => unknown) | undefined;
  /** The name also exists on Object.prototype, so a plain read could see an inherited value. */
  readonly inheritedName: boolean;
  readonly required: boolean;
}

export interface ObjectPlan {
  readonly className: string;
  readonly fields: FieldPlan[];
  /** Declared name → field index. */
  readonly exact: Map<string, number>;
  /** Lower-cased declared name → field index. */
  readonly folded: Map<string, number>;
  readonly allowUnknown: boolean;
  hasCustom: boolean;
}

const ALLOW_UNKNOWN = new WeakSet<object>();

/**
 * Class decorator for payloads we do not own (provider webhooks) that carry more fields than we read: unknown
 * properties are then ignored instead of rejected, and DROPPED from the validated value. Inherited by subclasses.
 */
export function AllowUnknownProperties(): ClassDecorator {
  return (target) => {
    ALLOW_UNKNOWN.add(target);
  };
}

function allowsUnknown(cls: object): boolean {
  for (let c: unknown = cls; typeof c === 'function'; c = Object.getPrototypeOf(c)) {
    if (ALLOW_UNKNOWN.has(c)) return true;
  }
  return false;
}

const NUMBER_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Query text → number only when the whole string is a decimal number; anything else is left to fail the check. */
export function coerceNumber(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  return NUMBER_TEXT.test(t) ? Number(t) : v;
}

export function coerceBoolean(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trim().toLowerCase();
  return t === 'true' ? true : t === 'false' ? false : v;
}

function coerceString(v: unknown): unknown {
  return typeof v === 'number' || typeof v === 'boolean' ? String(v) : v;
}

/** `ScheduleIds=a,b&ScheduleIds=c` or `ScheduleIds=a` → `['a','b','c']` / `['a']`; an empty value is an empty list. */
function toList(element: ((v: unknown) => unknown) | undefined): (v: unknown) => unknown {
  const split = (s: string): string[] => (s.trim() === '' ? [] : s.split(',').map((p) => p.trim()));
  return (v) => {
    let list: unknown[];
    if (typeof v === 'string') list = split(v);
    else if (Array.isArray(v)) list = v.flatMap((e: unknown) => (typeof e === 'string' ? split(e) : [e]));
    else return v;
    return element === undefined ? list : list.map(element);
  };
}

const PRIMITIVE_TYPES = new Set<unknown>([
  String,
  Number,
  Boolean,
  Date,
  Object,
  Array,
  Symbol,
  BigInt,
  Function,
]);

/** Display name of a decorator from its metadata, for compile errors. */
function decoratorName(m: ValidationMetadata): string {
  if (m.type === ValidationTypes.CONDITIONAL_VALIDATION)
    return m.name === 'isOptional' ? 'IsOptional' : 'ValidateIf';
  if (m.type === ValidationTypes.PROMISE_VALIDATION) return 'ValidatePromise';
  if (m.type === ValidationTypes.NESTED_VALIDATION) return 'ValidateNested';
  if (m.type === ValidationTypes.WHITELIST) return 'Allow';
  if (m.name === undefined)
    return typeof m.constraintCls === 'function' ? `Validate(${m.constraintCls.name})` : m.type;
  return m.name.charAt(0).toUpperCase() + m.name.slice(1);
}

interface PropertyDraft {
  optional: boolean;
  checks: FieldCheck[];
  eachChecks: FieldCheck[];
  custom: CustomCheck[];
  nested: boolean;
  nestedEach: boolean;
}

export class PlanBuilder {
  /** Plans finished by this builder, committed to `cache` only when the whole compile succeeds. */
  private readonly pending = new Map<object, ObjectPlan>();

  constructor(
    private readonly source: Source,
    private readonly cache: WeakMap<object, ObjectPlan>,
  ) {}

  build(cls: DtoClass): ObjectPlan {
    const plan = this.plan(cls);
    for (const [k, p] of this.pending) this.cache.set(k, p);
    this.pending.clear();
    return plan;
  }

  private plan(cls: DtoClass): ObjectPlan {
    const known = this.cache.get(cls) ?? this.pending.get(cls);
    if (known) return known;
    const plan: ObjectPlan = {
      className: cls.name,
      fields: [],
      exact: new Map(),
      folded: new Map(),
      allowUnknown: allowsUnknown(cls),
      hasCustom: false,
    };
    // Registered before its fields are built so self-referencing DTOs (trees) resolve to the same plan.
    this.pending.set(cls, plan);

    const strategy = defaultMetadataStorage.getStrategy(cls);
    if (strategy !== 'none') {
      throw new DtoCompileError(
        cls.name,
        undefined,
        strategy === 'excludeAll' ? 'Exclude' : 'Expose',
        'class-level',
      );
    }
    const metadatas = getMetadataStorage().getTargetValidationMetadatas(cls, '', false, false);
    const byProperty = new Map<string, ValidationMetadata[]>();
    for (const m of metadatas) {
      const list = byProperty.get(m.propertyName);
      if (list) list.push(m);
      else byProperty.set(m.propertyName, [m]);
    }
    // Base-class properties first, so the normalised value reads in declaration order down the hierarchy.
    const chain: unknown[] = [];
    for (
      let c: unknown = cls;
      typeof c === 'function' && c !== Function.prototype;
      c = Object.getPrototypeOf(c)
    ) {
      chain.unshift(c);
    }
    const depth = (list: ValidationMetadata[]): number =>
      Math.min(...list.map((m) => chain.indexOf(m.target)));
    const ordered = [...byProperty].sort((a, b) => depth(a[1]) - depth(b[1]));
    for (const [name, list] of ordered) {
      // Decorators run bottom-up; reverse to get source order for ties in check ranking.
      const field = this.field(cls, name, list.reverse());
      const folded = name.toLowerCase();
      const clash = plan.folded.get(folded);
      if (clash !== undefined) {
        throw new DtoCompileError(
          cls.name,
          name,
          'property name',
          `differs from ${plan.fields[clash].name} only in case`,
        );
      }
      plan.exact.set(name, plan.fields.length);
      plan.folded.set(folded, plan.fields.length);
      plan.fields.push(field);
      if (field.custom.length > 0) plan.hasCustom = true;
    }
    return plan;
  }

  private field(cls: DtoClass, name: string, metadatas: ValidationMetadata[]): FieldPlan {
    const fail = (decorator: string, reason: string): never => {
      throw new DtoCompileError(cls.name, name, decorator, reason);
    };
    if (name === '__proto__') fail('property name', '__proto__ cannot be a DTO property');

    const draft: PropertyDraft = {
      optional: false,
      checks: [],
      eachChecks: [],
      custom: [],
      nested: false,
      nestedEach: false,
    };
    for (const m of metadatas) this.addMetadata(cls, name, m, draft, fail);

    this.rejectTransformerRenames(cls, name, fail);
    const designType: unknown = Reflect.getMetadata('design:type', cls.prototype as object, name);
    const typeMeta = defaultMetadataStorage.findTypeMetadata(cls, name);
    if (typeMeta?.options?.discriminator !== undefined) fail('Type', 'discriminator');
    const typed: unknown = typeMeta ? typeMeta.typeFunction() : undefined;

    let nested: ObjectPlan | undefined;
    let nestedList = false;
    let explicitScalar: ((v: unknown) => unknown) | undefined;
    if (draft.nested) {
      const target = typed ?? designType;
      if (typeof target !== 'function' || PRIMITIVE_TYPES.has(target)) {
        fail('ValidateNested', 'needs @Type(() => ChildDto) naming the nested DTO class');
      }
      nested = this.plan(target as DtoClass);
      nestedList =
        draft.nestedEach ||
        designType === Array ||
        draft.checks.some((c) => c.list) ||
        draft.eachChecks.length > 0;
    } else if (typed !== undefined) {
      if (typed === Number) explicitScalar = coerceNumber;
      else if (typed === Boolean) explicitScalar = coerceBoolean;
      else if (typed === String) explicitScalar = coerceString;
      else
        fail('Type', 'a class type needs @ValidateNested(); other conversions (Date, …) are not supported');
    }

    const checks = rank(draft.checks);
    const eachChecks = rank(draft.eachChecks);
    const list = checks.some((c) => c.list) || eachChecks.length > 0 || designType === Array;
    let coerce: ((v: unknown) => unknown) | undefined;
    if (this.source === 'query' && nested === undefined) {
      const scalarOf = (cs: readonly FieldCheck[]): ((v: unknown) => unknown) | undefined => {
        const s = cs.find((c) => c.scalar !== undefined)?.scalar;
        return s === 'number' ? coerceNumber : s === 'boolean' ? coerceBoolean : undefined;
      };
      const designScalar =
        designType === Number ? coerceNumber : designType === Boolean ? coerceBoolean : undefined;
      coerce = list
        ? toList(scalarOf(eachChecks) ?? explicitScalar)
        : (scalarOf(checks) ?? scalarOf(eachChecks) ?? explicitScalar ?? designScalar);
    } else {
      coerce = explicitScalar;
    }

    return {
      name,
      optional: draft.optional,
      checks,
      eachChecks,
      custom: draft.custom,
      nested,
      nestedList,
      coerce,
      inheritedName: name in Object.prototype,
      required: !draft.optional && [...checks, ...eachChecks].some((c) => !c.test(undefined)),
    };
  }

  private addMetadata(
    cls: DtoClass,
    name: string,
    m: ValidationMetadata,
    draft: PropertyDraft,
    fail: (decorator: string, reason: string) => never,
  ): void {
    const decorator = decoratorName(m);
    if (m.groups !== undefined && m.groups.length > 0) fail(decorator, 'validation groups');
    if (m.validateIf !== undefined) fail(decorator, 'validateIf option');
    switch (m.type) {
      case ValidationTypes.WHITELIST:
        return;
      case ValidationTypes.CONDITIONAL_VALIDATION:
        if (m.name !== 'isOptional') fail(decorator, 'conditional validation');
        draft.optional = true;
        return;
      case ValidationTypes.NESTED_VALIDATION:
        draft.nested = true;
        draft.nestedEach ||= m.each === true;
        return;
      case ValidationTypes.IS_DEFINED:
      case ValidationTypes.CUSTOM_VALIDATION:
        break;
      default:
        fail(decorator, `validation type ${m.type}`);
    }
    const target = m.each === true ? draft.eachChecks : draft.checks;
    const native = m.name === undefined ? undefined : NATIVE_CHECKS.get(m.name);
    if (native !== undefined) {
      let built: Omit<NativeCheck, 'name'>;
      try {
        built = native(m.constraints ?? []);
      } catch (e) {
        return fail(decorator, e instanceof Error ? e.message : String(e));
      }
      target.push(withMessage(built, m, cls.name));
      return;
    }
    const constraint = this.syncConstraint(m, decorator, fail);
    if (m.name === 'arrayUnique' && probeIsPlainUnique(constraint, m)) {
      target.push(withMessage(arrayUniqueCheck(isUniqueArray), m, cls.name));
      return;
    }
    draft.custom.push(customCheck(cls.name, name, m, constraint, decorator));
  }

  private syncConstraint(
    m: ValidationMetadata,
    decorator: string,
    fail: (decorator: string, reason: string) => never,
  ): ValidatorConstraintInterface {
    const constraints = getMetadataStorage().getTargetValidatorConstraints(m.constraintCls);
    if (constraints.length !== 1) fail(decorator, 'no registered validator constraint');
    const [constraint] = constraints;
    if (constraint.async) fail(decorator, 'asynchronous validator');
    return constraint.instance;
  }

  private rejectTransformerRenames(cls: DtoClass, name: string, fail: (d: string, r: string) => never): void {
    const PLAIN_TO_CLASS = 0;
    if (defaultMetadataStorage.findTransformMetadatas(cls, name, PLAIN_TO_CLASS).length > 0) {
      fail('Transform', 'value transformation');
    }
    if (defaultMetadataStorage.findExcludeMetadata(cls, name)) fail('Exclude', 'excluded properties');
    const expose = defaultMetadataStorage.findExposeMetadata(cls, name)?.options;
    if (
      expose &&
      (expose.name !== undefined ||
        expose.groups !== undefined ||
        expose.since !== undefined ||
        expose.until !== undefined)
    ) {
      fail('Expose', 'renamed, grouped or versioned properties');
    }
  }
}

function rank(checks: FieldCheck[]): FieldCheck[] {
  // Array.prototype.sort is stable: equal ranks keep source order.
  return [...checks].sort((a, b) => a.rank - b.rank);
}

function withMessage(built: Omit<NativeCheck, 'name'>, m: ValidationMetadata, className: string): FieldCheck {
  const explicit = m.message !== undefined && m.message !== '';
  return {
    rank: built.rank,
    test: built.test,
    message: explicit ? customMessage(m.message, m.constraints, className) : built.message,
    explicitMessage: explicit,
    schema: built.schema,
    scalar: built.scalar,
    list: built.list === true,
  };
}

/**
 * ArrayUnique keeps its optional identifier function in a closure we cannot read. Two distinct empty objects are
 * unique by reference but not under any identifier that reads a property, so the probe tells the two apart; with
 * an identifier the decorator's own validator runs.
 */
function probeIsPlainUnique(constraint: ValidatorConstraintInterface, m: ValidationMetadata): boolean {
  const args: ValidationArguments = {
    targetName: '',
    property: m.propertyName,
    object: {},
    value: undefined,
    constraints: [],
  };
  try {
    return constraint.validate([{}, {}], args) === true && constraint.validate(['a', 'a'], args) === false;
  } catch {
    return false;
  }
}

function customCheck(
  className: string,
  property: string,
  m: ValidationMetadata,
  constraint: ValidatorConstraintInterface,
  decorator: string,
): CustomCheck {
  const constraints: unknown[] = m.constraints ?? [];
  const args = (value: unknown, object: Record<string, unknown>): ValidationArguments => ({
    targetName: className,
    property,
    object,
    value,
    constraints,
  });
  const run = (value: unknown, object: Record<string, unknown>): boolean => {
    const result: unknown = constraint.validate(value, args(value, object));
    if (typeof result === 'boolean') return result;
    if (result !== null && typeof result === 'object' && 'then' in result) {
      throw new Error(
        `${className}.${property}: ${decorator} returned a Promise; only synchronous validators run`,
      );
    }
    return Boolean(result);
  };
  const described = constraint as DescribedConstraint;
  return {
    name: decorator,
    each: m.each === true,
    schema: described.jsonSchema,
    objectSchema: described.objectJsonSchema,
    run,
    message: (label, value, object) => {
      const a = args(value, object);
      const template =
        m.message !== undefined && m.message !== ''
          ? typeof m.message === 'string'
            ? m.message
            : m.message(a)
          : (constraint.defaultMessage?.(a) ?? '');
      const text = replaceMessageTokens(template, label, value, constraints, className);
      return text === '' ? `${label} failed ${decorator}` : text;
    },
  };
}
