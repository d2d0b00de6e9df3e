// One error class per area, each with a code enum; services throw these, never HttpException (the filter alone maps codes).
// The global filter turns `status` + `code` into the outcome envelope (Succeeded, Message, Code, Errors).
export interface FieldError {
  Field: string;
  Message: string;
}

export abstract class ApiError<Code extends string = string> extends Error {
  /** HTTP status: 200 for business outcomes reported through Succeeded:false, 4xx for request problems. */
  abstract readonly status: number;

  constructor(
    readonly code: Code,
    message: string,
    readonly fieldErrors?: readonly FieldError[],
    /** Further documented fields of the operation's answer, so a business outcome keeps the response's shape. */
    readonly fields?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export enum PlatformErrorCode {
  ValidationFailed = 'ValidationFailed',
  Unauthorized = 'Unauthorized',
  Forbidden = 'Forbidden',
  NotFound = 'NotFound',
  Conflict = 'Conflict',
  PayloadTooLarge = 'PayloadTooLarge',
  UnsupportedMediaType = 'UnsupportedMediaType',
  TooManyRequests = 'TooManyRequests',
  RequestTimeout = 'RequestTimeout',
  InternalError = 'InternalError',
  ServiceUnavailable = 'ServiceUnavailable',
  /** The database cannot be reached, is restarting, or is overloaded (pool, locks): retry after Retry-After. */
  DatabaseUnavailable = 'DatabaseUnavailable',
  /** The database's storage is full: nothing was stored; retry after Retry-After. */
  StorageFull = 'StorageFull',
  /** An Idempotency-Key already used with another request (method, route, query or body). */
  IdempotencyKeyMismatch = 'IdempotencyKeyMismatch',
  /** An Idempotency-Key another request was being carried out under: retry after Retry-After to get its answer. */
  IdempotencyKeyInUse = 'IdempotencyKeyInUse',
  /** An Idempotency-Key whose request an earlier version carried out without keeping its answer (decideKey). */
  IdempotencyKeyAnswerLost = 'IdempotencyKeyAnswerLost',
  /** The instance sheds load (event loop overloaded, OVERLOAD_EVENT_LOOP_DELAY_MS): retry after Retry-After. */
  Overloaded = 'Overloaded',
  /** The request line and headers are larger than the server reads (answered by the HTTP layer itself). */
  RequestHeaderFieldsTooLarge = 'RequestHeaderFieldsTooLarge',
}

export const PLATFORM_STATUS: Record<PlatformErrorCode, number> = {
  [PlatformErrorCode.ValidationFailed]: 400,
  [PlatformErrorCode.Unauthorized]: 401,
  [PlatformErrorCode.Forbidden]: 403,
  [PlatformErrorCode.NotFound]: 404,
  [PlatformErrorCode.Conflict]: 409,
  [PlatformErrorCode.PayloadTooLarge]: 413,
  [PlatformErrorCode.UnsupportedMediaType]: 415,
  [PlatformErrorCode.TooManyRequests]: 429,
  [PlatformErrorCode.RequestTimeout]: 503,
  [PlatformErrorCode.InternalError]: 500,
  [PlatformErrorCode.ServiceUnavailable]: 503,
  [PlatformErrorCode.DatabaseUnavailable]: 503,
  [PlatformErrorCode.StorageFull]: 507,
  [PlatformErrorCode.IdempotencyKeyMismatch]: 422,
  [PlatformErrorCode.IdempotencyKeyInUse]: 409,
  [PlatformErrorCode.IdempotencyKeyAnswerLost]: 409,
  [PlatformErrorCode.Overloaded]: 503,
  [PlatformErrorCode.RequestHeaderFieldsTooLarge]: 431,
};

/** Retry-After (seconds) on answers a client should retry; a 429 sets its own from the rate limiter. */
export const RETRY_AFTER_SECONDS: ReadonlyMap<string, number> = new Map<string, number>([
  [PlatformErrorCode.DatabaseUnavailable, 5],
  [PlatformErrorCode.StorageFull, 30],
  [PlatformErrorCode.ServiceUnavailable, 5],
  [PlatformErrorCode.RequestTimeout, 5],
  [PlatformErrorCode.IdempotencyKeyInUse, 1],
  [PlatformErrorCode.Overloaded, 2],
]);

const MAX_FIELD_ERRORS = 100;

export class PlatformError extends ApiError<PlatformErrorCode> {
  readonly status: number;

  constructor(code: PlatformErrorCode, message: string, fieldErrors?: readonly FieldError[]) {
    super(code, message, fieldErrors);
    this.status = PLATFORM_STATUS[code];
  }

  /** At most MAX_FIELD_ERRORS entries: a request with 50,000 bad ids gets a readable answer, not a huge one. */
  static validation(errors: readonly FieldError[]): PlatformError {
    const fields = [...new Set(errors.map((error) => error.Field || 'body'))];
    const shown =
      errors.length > MAX_FIELD_ERRORS
        ? [
            ...errors.slice(0, MAX_FIELD_ERRORS),
            { Field: '', Message: `… and ${errors.length - MAX_FIELD_ERRORS} more invalid values` },
          ]
        : errors;
    return new PlatformError(
      PlatformErrorCode.ValidationFailed,
      `The request is invalid: ${fields.slice(0, 5).join(', ')}${fields.length > 5 ? ', …' : ''}.`,
      shown,
    );
  }
}
