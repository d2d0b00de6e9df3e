// RFC 7644 §3.12 `scimType` values a PATCH (or a POST/PUT body normalisation) can fail with. All are HTTP 400.

export type ScimPatchErrorType =
  'invalidSyntax' | 'invalidPath' | 'invalidFilter' | 'noTarget' | 'invalidValue' | 'mutability';

export class ScimPatchError extends Error {
  override readonly name = 'ScimPatchError';

  constructor(
    readonly scimType: ScimPatchErrorType,
    message: string,
    /** Index in `Operations` of the operation that failed, when one did. */
    readonly operationIndex?: number,
  ) {
    super(message);
  }
}
