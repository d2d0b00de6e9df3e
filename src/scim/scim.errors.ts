// The SCIM area's one error class. Codes that are RFC 7644 §3.12 `scimType` values are emitted as such;
// the others (NotFound, PreconditionFailed, Conflict) carry only an HTTP status. The global filter builds its
// envelope from `code`, and scim-error.renderer.ts turns that envelope into the SCIM error schema.
import { ApiError } from '../errors/api-error.js';
import { ScimFilterError } from './filter/scim-filter.errors.js';
import { ScimPatchError } from './patch/scim-patch.errors.js';

export enum ScimErrorCode {
  InvalidFilter = 'invalidFilter',
  TooMany = 'tooMany',
  Uniqueness = 'uniqueness',
  Mutability = 'mutability',
  InvalidSyntax = 'invalidSyntax',
  InvalidPath = 'invalidPath',
  NoTarget = 'noTarget',
  InvalidValue = 'invalidValue',
  InvalidVersion = 'invalidVers',
  Sensitive = 'sensitive',
  NotFound = 'NotFound',
  PreconditionFailed = 'PreconditionFailed',
  Conflict = 'Conflict',
  Forbidden = 'Forbidden',
}

/** RFC 7644 §3.12 Table 9. */
export const SCIM_TYPES: ReadonlySet<string> = new Set<string>([
  ScimErrorCode.InvalidFilter,
  ScimErrorCode.TooMany,
  ScimErrorCode.Uniqueness,
  ScimErrorCode.Mutability,
  ScimErrorCode.InvalidSyntax,
  ScimErrorCode.InvalidPath,
  ScimErrorCode.NoTarget,
  ScimErrorCode.InvalidValue,
  ScimErrorCode.InvalidVersion,
  ScimErrorCode.Sensitive,
]);

export class ScimError extends ApiError<ScimErrorCode> {
  constructor(
    code: ScimErrorCode,
    message: string,
    readonly status: number,
  ) {
    super(code, message);
  }

  static badRequest(scimType: ScimErrorCode, message: string): ScimError {
    return new ScimError(scimType, message, 400);
  }

  /** PATCH, POST and PUT body problems found by the pure engine; every one of them is a 400. */
  static fromPatch(error: ScimPatchError): ScimError {
    return ScimError.badRequest(error.scimType as ScimErrorCode, error.message);
  }

  static fromFilter(error: ScimFilterError): ScimError {
    return ScimError.badRequest(error.scimType as ScimErrorCode, error.message);
  }

  static notFound(id: string): ScimError {
    return new ScimError(ScimErrorCode.NotFound, `No user has the id "${quotedId(id)}".`, 404);
  }

  static forbidden(message: string): ScimError {
    return new ScimError(ScimErrorCode.Forbidden, message, 403);
  }

  static resourceNotFound(message: string): ScimError {
    return new ScimError(ScimErrorCode.NotFound, message, 404);
  }

  static uniqueness(userName: string): ScimError {
    return new ScimError(
      ScimErrorCode.Uniqueness,
      `A user with the userName "${userName}" already exists (userName is compared case-insensitively).`,
      409,
    );
  }

  static groupUniqueness(displayName: string): ScimError {
    return new ScimError(
      ScimErrorCode.Uniqueness,
      `A group with the displayName "${displayName}" already exists (displayName is compared case-insensitively).`,
      409,
    );
  }

  static preconditionFailed(current: string, resource: 'user' | 'group' = 'user'): ScimError {
    return new ScimError(
      ScimErrorCode.PreconditionFailed,
      `If-Match does not match the current version of the ${resource} (${current}).`,
      412,
    );
  }

  static concurrentModification(id: string, resource: 'user' | 'group' = 'user'): ScimError {
    return new ScimError(
      ScimErrorCode.Conflict,
      `The ${resource} "${id}" kept changing while this request was applied; retry it.`,
      409,
    );
  }
}

/** The recursive-descent parsers run out of stack on absurdly nested input: that is the input's fault. */
function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

/** Errors of the pure engine (filter, PATCH, normalisation) as the area's 400s; anything else unchanged. */
export function rethrowEngineError(error: unknown, overflowType = ScimErrorCode.InvalidSyntax): never {
  if (error instanceof ScimPatchError) throw ScimError.fromPatch(error);
  if (error instanceof ScimFilterError) throw ScimError.fromFilter(error);
  if (isStackOverflow(error)) throw ScimError.badRequest(overflowType, 'The request nests too deeply');
  throw error;
}

/**
 * PostgreSQL cannot store U+0000 in text or jsonb (a 500 there): refuse it on both engines, naming the
 * attribute. Walks the (already size-bounded) parsed resource.
 */
export function checkNoNul(value: unknown, path: string): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) {
      throw ScimError.badRequest(ScimErrorCode.InvalidValue, `${path} contains a NUL character (U+0000)`);
    }
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => checkNoNul(item, `${path}[${String(index)}]`));
    return;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, member] of Object.entries(value))
      checkNoNul(member, path === 'User' ? key : `${path}.${key}`);
  }
}

/** Ids are quoted in details, cut to 100 characters: a path id may be 5,000 characters long. */
export function quotedId(id: string): string {
  return id.length <= 100 ? id : `${id.slice(0, 100)}…`;
}
