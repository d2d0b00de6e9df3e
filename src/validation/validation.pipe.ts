// The one global validation pipe: DTO classes (class-validator decorators) are compiled once into fast
// validators that bind property names case-insensitively and name every bad field by its path.
import { Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { PlatformError } from '../errors/api-error.js';
import { compileDtoCached } from './compile-dto.js';

export const NOT_DTOS = new Set<unknown>([String, Number, Boolean, Object, Array, undefined]);

@Injectable()
export class DtoValidationPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if ((metadata.type !== 'body' && metadata.type !== 'query') || NOT_DTOS.has(metadata.metatype))
      return value;
    const dto = metadata.metatype as new (...args: never[]) => unknown;
    const result = compileDtoCached(dto, { source: metadata.type }).validate(value);
    if (!result.ok) throw PlatformError.validation(result.errors);
    return result.value;
  }
}
