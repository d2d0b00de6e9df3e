import { ApiError, type FieldError } from '../errors/api-error.js';

export enum ScheduleErrorCode {
  ScheduleNotFound = 'ScheduleNotFound',
  ValidationFailed = 'ValidationFailed',
  TooManyOccurrences = 'TooManyOccurrences',
}

const STATUS: Record<ScheduleErrorCode, number> = {
  [ScheduleErrorCode.ScheduleNotFound]: 404,
  [ScheduleErrorCode.ValidationFailed]: 400,
  [ScheduleErrorCode.TooManyOccurrences]: 400,
};

export class ScheduleError extends ApiError<ScheduleErrorCode> {
  readonly status: number;

  constructor(code: ScheduleErrorCode, message: string, fieldErrors?: readonly FieldError[]) {
    super(code, message, fieldErrors);
    this.status = STATUS[code];
  }

  static invalid(errors: FieldError[]): ScheduleError {
    return new ScheduleError(
      ScheduleErrorCode.ValidationFailed,
      `The request is invalid: ${errors.map((error) => error.Field).join(', ')}.`,
      errors,
    );
  }

  static notFound(id: string): ScheduleError {
    return new ScheduleError(ScheduleErrorCode.ScheduleNotFound, `No schedule has the id ${id}.`);
  }
}
