// The error answers every documented operation shares, declared once for Swagger.
import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiResponse } from '@nestjs/swagger';

export class FieldErrorDto {
  @ApiProperty({ example: 'Groups[2].ScheduleIds[0]' }) Field!: string;
  @ApiProperty({ example: 'ScheduleIds[0] must be a UUID' }) Message!: string;
}

export class ErrorEnvelopeDto {
  @ApiProperty({ example: false }) Succeeded!: boolean;
  @ApiProperty({ example: 'The request is invalid: Groups[2].ScheduleIds[0].' }) Message!: string;
  @ApiProperty({ example: 'ValidationFailed' }) Code!: string;
  @ApiPropertyOptional({ type: [FieldErrorDto] }) Errors?: FieldErrorDto[];
  @ApiPropertyOptional({ example: '9b2f6a52-3c55-4bd4-8f0c-0c8f0e2f4d1e' }) CorrelationId?: string;
}

export function ApiErrorResponses(options: { auth?: boolean } = {}): ClassDecorator & MethodDecorator {
  const responses = [
    ApiResponse({
      status: 400,
      description:
        'ValidationFailed: every bad field named in Errors (a path that is not valid percent-encoding: Field `path`)',
      type: ErrorEnvelopeDto,
    }),
    ApiResponse({ status: 413, description: 'PayloadTooLarge', type: ErrorEnvelopeDto }),
    ApiResponse({ status: 415, description: 'UnsupportedMediaType', type: ErrorEnvelopeDto }),
    ApiResponse({ status: 429, description: 'TooManyRequests (see Retry-After)', type: ErrorEnvelopeDto }),
    ApiResponse({
      status: 500,
      description: 'InternalError, with the correlation id',
      type: ErrorEnvelopeDto,
    }),
    ApiResponse({
      status: 503,
      description:
        'DatabaseUnavailable (unreachable, restarting, overloaded, or busy with another write past the wait limit), ' +
        'RequestTimeout, Overloaded (the instance sheds load, or runs as many imports and exports as it takes), ' +
        "or ServiceUnavailable (the access token's issuer cannot be reached for its signing key): " +
        'nothing was stored; retry after Retry-After',
      type: ErrorEnvelopeDto,
    }),
    ApiResponse({
      status: 507,
      description: "StorageFull: the database's storage is full, nothing was stored; retry after Retry-After",
      type: ErrorEnvelopeDto,
    }),
  ];
  if (options.auth !== false) {
    responses.push(
      ApiResponse({
        status: 401,
        description:
          'Unauthorized: no credential, an unknown or revoked API key, or a refused access token (see WWW-Authenticate)',
        type: ErrorEnvelopeDto,
      }),
      ApiResponse({
        status: 403,
        description: 'Forbidden: the key or token lacks the scope (or is bound to other tenants)',
        type: ErrorEnvelopeDto,
      }),
    );
  }
  return applyDecorators(...responses);
}

/** The answers of an operation that takes an Idempotency-Key (src/http/idempotency.ts). */
export function ApiIdempotencyResponses(): MethodDecorator {
  return applyDecorators(
    ApiResponse({
      status: 409,
      description:
        'IdempotencyKeyInUse: another request with this Idempotency-Key was being carried out; nothing was done ' +
        'for this one — retry after Retry-After to get its answer. IdempotencyKeyAnswerLost (no Retry-After): an ' +
        'earlier version of the service carried the request out and lost its answer; the resource exists and is ' +
        'not created again — look it up, or use a new key. See docs/failure-modes.md',
      type: ErrorEnvelopeDto,
    }),
    ApiResponse({
      status: 422,
      description: 'IdempotencyKeyMismatch: this Idempotency-Key was used with another request',
      type: ErrorEnvelopeDto,
    }),
  );
}
