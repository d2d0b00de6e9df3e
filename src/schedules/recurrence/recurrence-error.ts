// The single error type of the recurrence engine: every invalid or contradictory input names the field at fault,
// with the API's field path (`Recurrence.Pattern`, `Recurrence.Exceptions[1].OriginalTime`), so the HTTP layer can
// report it as `{Field, Message}` without knowing the engine.

export class RecurrenceError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'RecurrenceError';
  }
}
