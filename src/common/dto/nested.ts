// The decorator stacks every optional nested DTO repeated: one line per property instead of three or four, and the
// same metadata for the compiled validator (class-validator + class-transformer's @Type).
import { applyDecorators } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsArray, IsOptional, ValidateNested } from 'class-validator';

type DtoType = () => new (...args: never[]) => unknown;

/** An optional (absent or null) nested object validated as `type()`. */
export const OptionalNested = (type: DtoType): PropertyDecorator =>
  applyDecorators(IsOptional(), ValidateNested(), Type(type));

/** An optional (absent or null) array whose elements are validated as `type()`. */
export const OptionalNestedList = (type: DtoType): PropertyDecorator =>
  applyDecorators(IsOptional(), IsArray(), ValidateNested({ each: true }), Type(type));
