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
      description: 'ValidationFailed: every bad field named in Errors',
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
        'DatabaseUnavailable (unreachable, restarting or overloaded) or RequestTimeout: nothing was stored; retry after Retry-After',
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
        description: 'Unauthorized: missing or unknown API key',
        type: ErrorEnvelopeDto,
      }),
      ApiResponse({ status: 403, description: 'Forbidden: the key lacks the scope', type: ErrorEnvelopeDto }),
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
        'IdempotencyKeyInUse: a request with this Idempotency-Key is still in progress (see Retry-After), or was ' +
        'carried out but its answer was lost (the resource exists; it is not created again)',
      type: ErrorEnvelopeDto,
    }),
    ApiResponse({
      status: 422,
      description: 'IdempotencyKeyMismatch: this Idempotency-Key was used with another request',
      type: ErrorEnvelopeDto,
    }),
  );
}
