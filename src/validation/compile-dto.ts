// Request validation compiled from DTO decorators (JSON keys bind case-insensitively; a bad request is a
// 400 listing every bad field as {Field, Message} with paths like `Groups[2].ScheduleIds[0]`).
// Why not class-validator at request time: plainToInstance + validateSync build class instances, scan the whole
// metadata store and build ValidationError trees on every request (about 25k validations/s on a 1 KB body here),
// and they bind keys case-sensitively while SmartThings/.NET clients mix camelCase and PascalCase.
// Design: the DTO classes stay the single source of rules. dto-plan.ts reads their metadata ONCE per class into a
// plan (fields, case-folded name index, ranked check closures); validate() walks input and plan together, binding
// keys to declared names, reporting unknown/duplicate keys and building the normalised plain value in one pass.
// Canonical-cased input takes a path with no map lookups; error strings and paths are built only on failure.
// ajv is not used at request time (it would need a re-keying pass first); jsonSchema is exported for raw Fastify.
import { buildJsonSchema } from './dto-json-schema.js';
import { PlanBuilder, type DtoClass, type FieldPlan, type ObjectPlan, type Source } from './dto-plan.js';

export { AllowUnknownProperties, DtoCompileError } from './dto-plan.js';
export type { DtoClass } from './dto-plan.js';

export interface FieldError {
  Field: string;
  Message: string;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

export interface CompileOptions {
  /** `query`: strings are coerced to number/boolean, and one or comma-separated strings to string[]. */
  source?: Source;
}

export interface CompiledDto<T> {
  validate(input: unknown): ValidationResult<T>;
  /** Draft-07 equivalent of the rules (declared casing), for giving raw Fastify/ajv the same rules. */
  jsonSchema: Record<string, unknown>;
}

interface Ctx {
  errors: FieldError[] | undefined;
  /** Path segments of the object being validated: property names and array indexes. */
  readonly path: (string | number)[];
}

function isObjectLike(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function formatPath(path: readonly (string | number)[], name?: string, index?: number): string {
  let s = '';
  for (const seg of path) s = typeof seg === 'number' ? `${s}[${seg}]` : s === '' ? seg : `${s}.${seg}`;
  if (name !== undefined) s = s === '' ? name : `${s}.${name}`;
  if (index !== undefined) s = `${s}[${index}]`;
  return s;
}

function report(ctx: Ctx, message: string, name?: string, index?: number): void {
  const e: FieldError = { Field: formatPath(ctx.path, name, index), Message: message };
  if (ctx.errors === undefined) ctx.errors = [e];
  else ctx.errors.push(e);
}

function errorCount(ctx: Ctx): number {
  return ctx.errors === undefined ? 0 : ctx.errors.length;
}

/** Validates one bound property; writes the normalised value into `out`. Returns false when it reported errors. */
function validateField(f: FieldPlan, raw: unknown, out: Record<string, unknown>, ctx: Ctx): boolean {
  let v = raw;
  if (v === undefined || v === null) {
    if (f.optional) {
      if (v === null) out[f.name] = null;
      return true;
    }
  } else if (f.coerce !== undefined) {
    v = f.coerce(v);
  }

  const checks = f.checks;
  for (let i = 0; i < checks.length; i++) {
    const c = checks[i];
    if (!c.test(v)) {
      const missing = (v === undefined || v === null) && !c.explicitMessage;
      report(ctx, missing ? `${f.name} should not be null or undefined` : c.message(f.name, v), f.name);
      return false;
    }
  }

  const each = f.eachChecks;
  if (each.length > 0) {
    if (Array.isArray(v)) {
      let ok = true;
      for (let j = 0; j < v.length; j++) {
        const el: unknown = v[j];
        for (let i = 0; i < each.length; i++) {
          if (!each[i].test(el)) {
            report(ctx, each[i].message(`${f.name}[${j}]`, el), f.name, j);
            ok = false;
            break;
          }
        }
      }
      if (!ok) return false;
    } else {
      // class-validator applies `each` rules to a non-array value as a whole.
      for (let i = 0; i < each.length; i++) {
        if (!each[i].test(v)) {
          const missing = (v === undefined || v === null) && !each[i].explicitMessage;
          report(
            ctx,
            missing ? `${f.name} should not be null or undefined` : each[i].message(f.name, v),
            f.name,
          );
          return false;
        }
      }
    }
  }

  const nested = f.nested;
  if (nested !== undefined && v !== undefined) {
    const before = errorCount(ctx);
    if (f.nestedList) {
      if (!Array.isArray(v)) {
        report(ctx, `${f.name} must be an array`, f.name);
        return false;
      }
      const list: unknown[] = new Array<unknown>(v.length);
      ctx.path.push(f.name);
      for (let j = 0; j < v.length; j++) {
        const el: unknown = v[j];
        if (isObjectLike(el)) {
          ctx.path.push(j);
          list[j] = validateObject(nested, el, ctx);
          ctx.path.pop();
        } else {
          ctx.path.pop();
          report(ctx, `${f.name}[${j}] must be an object`, f.name, j);
          ctx.path.push(f.name);
        }
      }
      ctx.path.pop();
      out[f.name] = list;
    } else {
      if (!isObjectLike(v)) {
        report(ctx, `${f.name} must be an object`, f.name);
        return false;
      }
      ctx.path.push(f.name);
      out[f.name] = validateObject(nested, v, ctx);
      ctx.path.pop();
    }
    return errorCount(ctx) === before;
  }

  if (v !== undefined) out[f.name] = v;
  return true;
}

function validateObject(plan: ObjectPlan, input: Record<string, unknown>, ctx: Ctx): Record<string, unknown> {
  const fields = plan.fields;
  const n = fields.length;
  const out: Record<string, unknown> = {};

  // Fast path: every present key is spelled exactly as declared and nothing else is there.
  let found = 0;
  let exact = true;
  for (let i = 0; i < n; i++) {
    const f = fields[i];
    if (input[f.name] !== undefined) {
      if (f.inheritedName && !Object.hasOwn(input, f.name)) {
        exact = false;
        break;
      }
      found++;
    }
  }
  if (exact) {
    let keys = 0;
    for (const key in input) {
      void key;
      keys++;
    }
    exact = keys === found;
  }

  const failed: boolean[] | undefined = plan.hasCustom ? new Array<boolean>(n).fill(false) : undefined;
  if (exact) {
    for (let i = 0; i < n; i++) {
      const f = fields[i];
      if (!validateField(f, input[f.name], out, ctx) && failed) failed[i] = true;
    }
  } else {
    const values = new Array<unknown>(n);
    const given = new Array<string | undefined>(n);
    const duplicate = new Array<boolean>(n).fill(false);
    for (const key of Object.keys(input)) {
      let idx = plan.exact.get(key);
      if (idx === undefined) idx = plan.folded.get(key.toLowerCase());
      if (idx === undefined) {
        if (!plan.allowUnknown) report(ctx, `property ${key} should not exist`, key);
        continue;
      }
      if (given[idx] !== undefined) {
        duplicate[idx] = true;
        continue;
      }
      given[idx] = key;
      values[idx] = input[key];
    }
    for (let i = 0; i < n; i++) {
      const f = fields[i];
      let ok: boolean;
      if (duplicate[i]) {
        report(ctx, `${f.name} is given more than once`, f.name);
        ok = false;
      } else {
        ok = validateField(f, values[i], out, ctx);
      }
      if (!ok && failed) failed[i] = true;
    }
  }

  if (failed) runCustomChecks(fields, failed, out, ctx);
  return out;
}

/** Registered (non-built-in) validators run last so that cross-field rules see the whole normalised object. */
function runCustomChecks(
  fields: readonly FieldPlan[],
  failed: readonly boolean[],
  out: Record<string, unknown>,
  ctx: Ctx,
): void {
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    if (f.custom.length === 0 || failed[i]) continue;
    const v = out[f.name];
    if (f.optional && (v === undefined || v === null)) continue;
    for (const c of f.custom) {
      const ok = c.each && Array.isArray(v) ? v.every((el: unknown) => c.run(el, out)) : c.run(v, out);
      if (!ok) {
        report(ctx, c.message(f.name, v, out), f.name);
        break;
      }
    }
  }
}

const planCaches: Record<Source, WeakMap<object, ObjectPlan>> = { body: new WeakMap(), query: new WeakMap() };

/**
 * Compiles `dto`'s decorators into a validator. Throws DtoCompileError when a decorator cannot be checked exactly.
 * `value` is a new plain object with declared key casing (nested DTOs likewise); arrays of primitives are the
 * input arrays themselves unless query coercion rebuilt them.
 */
export function compileDto<T>(dto: DtoClass<T>, options: CompileOptions = {}): CompiledDto<T> {
  const source = options.source ?? 'body';
  const plan = new PlanBuilder(source, planCaches[source]).build(dto);
  const jsonSchema = buildJsonSchema(plan);
  return {
    jsonSchema,
    validate(input: unknown): ValidationResult<T> {
      let body = input;
      if (body === undefined && source === 'query') body = {};
      if (!isObjectLike(body)) {
        return { ok: false, errors: [{ Field: '', Message: 'request body must be a JSON object' }] };
      }
      const ctx: Ctx = { errors: undefined, path: [] };
      const value = validateObject(plan, body, ctx);
      if (ctx.errors !== undefined) return { ok: false, errors: ctx.errors };
      return { ok: true, value: value as T };
    },
  };
}

const compiled = new WeakMap<object, Partial<Record<Source, CompiledDto<unknown>>>>();

/** compileDto memoised per class and source: the same CompiledDto object for the same (class, options). */
export function compileDtoCached<T>(dto: DtoClass<T>, options: CompileOptions = {}): CompiledDto<T> {
  const source = options.source ?? 'body';
  let perSource = compiled.get(dto);
  if (perSource === undefined) {
    perSource = {};
    compiled.set(dto, perSource);
  }
  let hit = perSource[source];
  if (hit === undefined) {
    hit = compileDto(dto, { source });
    perSource[source] = hit;
  }
  return hit as CompiledDto<T>;
}
