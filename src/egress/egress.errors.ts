import { ApiError } from '../errors/api-error.js';

export enum EgressErrorCode {
  HostNotAllowed = 'HostNotAllowed',
}

/** A caller-supplied destination the egress policy refuses (docs/egress.md). */
export class EgressError extends ApiError<EgressErrorCode> {
  readonly status = 400;

  static hostNotAllowed(field: string, message: string): EgressError {
    return new EgressError(EgressErrorCode.HostNotAllowed, message, [{ Field: field, Message: message }]);
  }
}
