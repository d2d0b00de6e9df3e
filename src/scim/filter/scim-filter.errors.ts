// RFC 7644 §3.12 error types for filters and PATCH paths. The HTTP layer maps this to 400 with `scimType`.

export type ScimFilterErrorType = 'invalidFilter' | 'invalidPath';

export class ScimFilterError extends Error {
  override readonly name = 'ScimFilterError';

  /**
   * @param position 0-based offset in the parsed text where the problem was found (-1 when it is not
   *   positional, e.g. an unknown attribute found while resolving against the schema).
   */
  constructor(
    message: string,
    readonly position: number,
    readonly scimType: ScimFilterErrorType = 'invalidFilter',
  ) {
    super(message);
  }
}
