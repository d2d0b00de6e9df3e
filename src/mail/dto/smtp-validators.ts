// Rules of operation 4 that the built-in decorators cannot say: a Host is a host name or an IP address, and a
// Username is required when AuthRequired is true. Synchronous constraints, so the compiled validator (src/validation)
// runs them with the whole normalised body and reports them together with every other bad field.
import {
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import type { DescribedConstraint, JsonSchema } from '../../validation/constraint-checks.js';
import { isSmtpHost, MAX_HOST_LENGTH } from '../smtp/smtp-host.js';

export const MAX_USERNAME_LENGTH = 255;

@ValidatorConstraint({ name: 'isSmtpHost', async: false })
export class IsSmtpHostConstraint implements ValidatorConstraintInterface, DescribedConstraint {
  /** A host name (not only digits and dots: "999.1.1.1" is a mistyped address), an IPv4 or an IPv6 address. */
  readonly jsonSchema: JsonSchema = {
    type: 'string',
    maxLength: MAX_HOST_LENGTH,
    anyOf: [{ format: 'hostname', pattern: '[A-Za-z-]' }, { format: 'ipv4' }, { format: 'ipv6' }],
  };

  validate(value: unknown): boolean {
    return typeof value === 'string' && isSmtpHost(value);
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be a host name or an IP address (at most ${MAX_HOST_LENGTH} characters, no port)`;
  }
}

/** Not @IsOptional on purpose: an optional field skips custom rules when absent, and absence is what we check. */
@ValidatorConstraint({ name: 'isSmtpUsername', async: false })
export class SmtpUsernameConstraint implements ValidatorConstraintInterface, DescribedConstraint {
  readonly jsonSchema: JsonSchema = { maxLength: MAX_USERNAME_LENGTH, pattern: '^[^\\r\\n\\x00]*$' };
  readonly objectJsonSchema: JsonSchema = {
    if: { properties: { AuthRequired: { const: true } }, required: ['AuthRequired'] },
    then: {
      required: ['Username'],
      properties: { Username: { type: 'string', minLength: 1, maxLength: MAX_USERNAME_LENGTH } },
    },
  };

  validate(value: unknown, args: ValidationArguments): boolean {
    if (value === undefined || value === null || value === '') return !authRequired(args);
    return typeof value === 'string' && value.length <= MAX_USERNAME_LENGTH && !/[\r\n\0]/.test(value);
  }

  defaultMessage(args: ValidationArguments): string {
    const value: unknown = args.value;
    if (value === undefined || value === null || value === '')
      return `${args.property} is required when AuthRequired is true`;
    if (typeof value !== 'string') return `${args.property} must be a string`;
    return `${args.property} must be at most ${MAX_USERNAME_LENGTH} characters without line breaks`;
  }
}

function authRequired(args: ValidationArguments): boolean {
  const object = args.object as Record<string, unknown>;
  return object.AuthRequired === true;
}

export const IsSmtpHost = (): PropertyDecorator => Validate(IsSmtpHostConstraint);
export const IsSmtpUsername = (): PropertyDecorator => Validate(SmtpUsernameConstraint);
