// PostgreSQL cannot store U+0000 in text, nor a lone UTF-16 surrogate ("\ud800") in json/jsonb (SQLite can, and
// every consumer of the data would then trip on them), so either anywhere in a request is refused before any
// handler runs: one Fastify hook for every route (SCIM answers it in its own error schema through the global
// filter's renderers, the webhook like any other).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PlatformError, type FieldError } from '../errors/api-error.js';

/** Enough to name what is wrong; a body full of NULs does not need 50,000 entries. */
const MAX_REPORTED = 20;

/** A surrogate code unit that is not half of a pair (with the u flag, a pair is one code point, not \p{Cs}). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * In JSON text, a NUL can only arrive escaped (`\u0000`; a raw control character is not JSON) and a lone surrogate
 * only as an escape (`\ud800`; octets that are not UTF-8 decode to U+FFFD). JSON text without either escape thus
 * parses to strings and keys free of both, and its body need not be walked (50,000 ids: ~10 ms). Surrogate pairs
 * and an escaped backslash before `u0000` also match: those bodies are walked, as before.
 */
const JSON_UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/i;

/** JSON bodies whose text holds no escape that could make an unstorable string (set by the JSON parser). */
const storableJsonBodies = new WeakSet<FastifyRequest>();

/** Called by the JSON body parser with the body's text, before it is parsed. */
export function noteJsonText(request: FastifyRequest, text: string): void {
  if (!jsonTextMayHoldUnstorable(text)) storableJsonBodies.add(request);
}

/** Whether JSON text can hold an unstorable string once parsed (exported for its test). */
export function jsonTextMayHoldUnstorable(text: string): boolean {
  return JSON_UNSTORABLE_ESCAPE.test(text);
}

function unstorable(text: string): boolean {
  return text.includes('\u0000') || LONE_SURROGATE.test(text);
}

/**
 * The paths (Context.Domain, Ids[3], Operations[0].value.name) of every string or key holding a NUL or a lone
 * surrogate.
 */
export function nulFields(value: unknown, root: string, out: string[] = []): string[] {
  // An explicit stack: a deeply nested body cannot overflow the call stack.
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0 && out.length < MAX_REPORTED) {
    const [current, path] = stack.pop()!;
    if (typeof current === 'string') {
      if (unstorable(current)) out.push(path);
    } else if (Buffer.isBuffer(current)) {
      // A text body kept as octets (the iCalendar import): its route decodes it and names the line itself.
      continue;
    } else if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--)
        stack.push([current[index], `${path}[${index}]`]);
    } else if (current !== null && typeof current === 'object') {
      const entries: Array<[string, unknown]> = Object.entries(current);
      for (let index = entries.length - 1; index >= 0; index--) {
        const [key, inner] = entries[index];
        const child = path === '' ? key : `${path}.${key}`;
        if (unstorable(key)) out.push(JSON.stringify(child).slice(1, -1));
        else stack.push([inner, child]);
      }
    }
  }
  return out;
}

/**
 * Whether any string or key in `value` holds a NUL or a lone surrogate: the common answer (no) without building a
 * path per element, which cost ~2 ms for operation 1's 10,000 ids; nulFields names them when there are some.
 */
function anyUnstorable(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current === 'string') {
      if (unstorable(current)) return true;
    } else if (Array.isArray(current)) {
      for (const element of current) {
        if (typeof element !== 'string') stack.push(element);
        else if (unstorable(element)) return true;
      }
    } else if (current !== null && typeof current === 'object' && !Buffer.isBuffer(current)) {
      for (const key of Object.keys(current)) {
        if (unstorable(key)) return true;
        stack.push((current as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

/** preValidation hook: 400 ValidationFailed naming every field (body, query string, path) with either. */
export function refuseNulCharacters(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: (error?: Error) => void,
): void {
  const bodyStorable = storableJsonBodies.has(request) || !anyUnstorable(request.body);
  if (bodyStorable && !anyUnstorable(request.query) && !anyUnstorable(request.params)) {
    done();
    return;
  }
  const fields = [
    ...nulFields(request.body, ''),
    ...nulFields(request.query, ''),
    ...nulFields(request.params, ''),
  ];
  if (fields.length === 0) {
    done();
    return;
  }
  const errors: FieldError[] = fields.map((field) => ({
    Field: field === '' ? 'body' : field,
    Message:
      `${field === '' ? 'The body' : field} contains a NUL character (U+0000) or a lone UTF-16 surrogate, ` +
      'which is not accepted',
  }));
  done(PlatformError.validation(errors));
}
