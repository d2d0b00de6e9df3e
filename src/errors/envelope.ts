// The outcome envelope every non-SCIM response uses: Succeeded, Message, Code first.
import type { FieldError } from './api-error.js';

export interface ResultMessage {
  Succeeded: boolean;
  Message: string | null;
  Code: string | null;
}

export interface ErrorEnvelope extends ResultMessage {
  Succeeded: false;
  Errors?: readonly FieldError[];
  CorrelationId?: string;
}

export function ok(message: string | null = null, code: string | null = null): ResultMessage {
  return { Succeeded: true, Message: message, Code: code };
}
