// Recursive-descent parser for RFC 7644 §3.4.2.2 filters (Figure 1 ABNF) and §3.5.2 PATCH paths, with §3.10
// attribute notation. Operators, keywords and literals are case-insensitive; `and` binds tighter than `or`.
// Leniencies for real clients, all unambiguous: `+` counts as a space outside string literals (a query string
// decoded without `+`→space), any run of whitespace separates tokens, `not` may be followed by a space, and
// Entra's `emails[type eq "work"].value eq "x"` is read as `emails[type eq "work" and value eq "x"]`.
// Single-quoted strings (seen in some client docs) are read like JSON strings.
import { ScimFilterError, type ScimFilterErrorType } from './scim-filter.errors.js';
import {
  SCIM_COMPARE_OPERATORS,
  type ScimAttributePath,
  type ScimCompareOperator,
  type ScimFilter,
  type ScimFilterValue,
  type ScimPatchPath,
} from './scim-filter.types.js';

const NAME_START = /[A-Za-z$]/;
const WORD_CHAR = /[A-Za-z0-9_$:.-]/;
const ATTRNAME = /^[A-Za-z$][A-Za-z0-9_$-]*$/;
const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/;

function isCompareOperator(word: string): word is ScimCompareOperator {
  return (SCIM_COMPARE_OPERATORS as readonly string[]).includes(word);
}

function describe(text: string, position: number): string {
  if (position >= text.length) return 'end of input';
  return `"${text.slice(position, position + 12)}"`;
}

class Parser {
  private position = 0;
  private errorType: ScimFilterErrorType;

  constructor(
    private readonly text: string,
    private readonly mode: 'filter' | 'path',
  ) {
    this.errorType = mode === 'filter' ? 'invalidFilter' : 'invalidPath';
  }

  parseFilterText(): ScimFilter {
    this.skipSpace();
    if (this.atEnd()) this.fail('Filter is empty');
    const filter = this.parseOr(false);
    this.expectEnd();
    return filter;
  }

  parsePatchPathText(): ScimPatchPath {
    this.skipSpace();
    if (this.atEnd()) this.fail('Path is empty');
    const path = this.parseAttributePath();
    this.skipSpace();
    if (this.peek() !== '[') {
      this.expectEnd();
      return { path };
    }
    const { filter, subAttribute } = this.parseValueFilterTail(path);
    this.expectEnd();
    return subAttribute === undefined
      ? { path, valueFilter: filter }
      : { path, valueFilter: filter, subAttribute };
  }

  private parseOr(inValueFilter: boolean): ScimFilter {
    let left = this.parseAnd(inValueFilter);
    while (this.acceptKeyword('or')) {
      const right = this.parseAnd(inValueFilter);
      left = { kind: 'or', left, right };
    }
    return left;
  }

  private parseAnd(inValueFilter: boolean): ScimFilter {
    let left = this.parseUnary(inValueFilter);
    while (this.acceptKeyword('and')) {
      const right = this.parseUnary(inValueFilter);
      left = { kind: 'and', left, right };
    }
    return left;
  }

  private parseUnary(inValueFilter: boolean): ScimFilter {
    this.skipSpace();
    if (this.peek() === '(') {
      return this.parseGroup(inValueFilter);
    }
    if (this.startsWithKeyword('not') && this.nextNonSpaceAfter(3) === '(') {
      this.position += 3;
      this.skipSpace();
      return { kind: 'not', filter: this.parseGroup(inValueFilter) };
    }
    const path = this.parseAttributePath();
    this.skipSpace();
    if (this.peek() === '[') {
      if (inValueFilter) this.fail('Value filters cannot be nested');
      const { filter, subAttribute } = this.parseValueFilterTail(path);
      if (subAttribute === undefined) return { kind: 'valuePath', path, filter };
      const condition = this.parseAttributeExpression({ attribute: subAttribute });
      return { kind: 'valuePath', path, filter: { kind: 'and', left: filter, right: condition } };
    }
    return this.parseAttributeExpression(path);
  }

  private parseGroup(inValueFilter: boolean): ScimFilter {
    this.expectChar('(');
    const inner = this.parseOr(inValueFilter);
    this.skipSpace();
    this.expectChar(')');
    return inner;
  }

  /** After an attribute path, at `[`: the bracketed filter and an optional `.subAttr` right after `]`. */
  private parseValueFilterTail(path: ScimAttributePath): { filter: ScimFilter; subAttribute?: string } {
    if (path.subAttribute !== undefined) {
      this.fail(
        `A value filter must follow a top-level attribute, not "${path.attribute}.${path.subAttribute}"`,
      );
    }
    this.expectChar('[');
    const outerErrorType = this.errorType;
    this.errorType = 'invalidFilter';
    this.skipSpace();
    if (this.peek() === ']') this.fail('Value filter is empty');
    const filter = this.parseOr(true);
    this.skipSpace();
    this.expectChar(']');
    this.errorType = outerErrorType;
    if (this.peek() !== '.') return { filter };
    this.position += 1;
    const start = this.position;
    const name = this.readWhile(WORD_CHAR);
    if (!ATTRNAME.test(name)) {
      this.failAt(start, `Expected a sub-attribute name after "].", found ${describe(this.text, start)}`);
    }
    return { filter, subAttribute: name };
  }

  private parseAttributeExpression(path: ScimAttributePath): ScimFilter {
    this.skipSpace();
    const start = this.position;
    const word = this.readWhile(/[A-Za-z]/).toLowerCase();
    if (word === 'pr') return { kind: 'present', path };
    if (!isCompareOperator(word)) {
      this.failAt(
        start,
        `Expected an operator (eq, ne, co, sw, ew, gt, ge, lt, le, pr), found ${describe(this.text, start)}`,
      );
    }
    return { kind: 'compare', path, operator: word, value: this.parseValue() };
  }

  private parseValue(): ScimFilterValue {
    this.skipSpace();
    const start = this.position;
    const char = this.peek();
    if (char === '"' || char === "'") return this.parseString(char);
    const number = JSON_NUMBER.exec(this.text.slice(start));
    if (number !== null) {
      this.position += number[0].length;
      if (this.peek() !== undefined && WORD_CHAR.test(this.peek() ?? '')) {
        this.failAt(start, `Malformed number ${describe(this.text, start)}`);
      }
      return Number(number[0]);
    }
    const word = this.readWhile(WORD_CHAR).toLowerCase();
    if (word === 'true') return true;
    if (word === 'false') return false;
    if (word === 'null') return null;
    return this.failAt(
      start,
      `Expected a value (string in double quotes, number, true, false or null), found ${describe(this.text, start)}`,
    );
  }

  private parseString(quote: '"' | "'"): string {
    const start = this.position;
    let index = start + 1;
    let body = '';
    while (index < this.text.length && this.text[index] !== quote) {
      const char = this.text[index] ?? '';
      if (char === '\\') {
        body += this.text.slice(index, index + 2);
        index += 2;
      } else {
        // A single-quoted string may hold a bare `"`, which JSON needs escaped.
        body += char === '"' ? '\\"' : char;
        index += 1;
      }
    }
    if (index >= this.text.length) this.failAt(start, 'Unterminated string literal');
    let value: unknown;
    try {
      value = JSON.parse(`"${quote === "'" ? body.replace(/\\'/g, "'") : body}"`);
    } catch {
      this.failAt(start, 'Invalid string literal (JSON string escapes expected)');
    }
    this.position = index + 1;
    return value as string;
  }

  private parseAttributePath(): ScimAttributePath {
    this.skipSpace();
    const start = this.position;
    if (!NAME_START.test(this.peek() ?? '')) {
      this.failAt(start, `Expected an attribute name, found ${describe(this.text, start)}`);
    }
    const word = this.readWhile(WORD_CHAR);
    const lastColon = word.lastIndexOf(':');
    const schema = lastColon >= 0 ? word.slice(0, lastColon) : undefined;
    const rest = word.slice(lastColon + 1);
    const restStart = start + lastColon + 1;
    if (schema !== undefined && !/^urn:[^:]+:./i.test(schema)) {
      this.failAt(start, `Attribute prefix "${schema}" is not a schema URN`);
    }
    const parts = rest.split('.');
    if (parts.length > 2) {
      this.failAt(restStart, `Attribute path "${rest}" has more than one sub-attribute level`);
    }
    const attribute = parts[0] ?? '';
    const subAttribute = parts.at(1);
    if (!ATTRNAME.test(attribute)) {
      this.failAt(restStart, `Invalid attribute name "${attribute}"`);
    }
    if (subAttribute !== undefined && !ATTRNAME.test(subAttribute)) {
      this.failAt(restStart + attribute.length + 1, `Invalid sub-attribute name "${subAttribute}"`);
    }
    return {
      ...(schema !== undefined ? { schema } : {}),
      attribute,
      ...(subAttribute !== undefined ? { subAttribute } : {}),
    };
  }

  private acceptKeyword(keyword: string): boolean {
    const save = this.position;
    this.skipSpace();
    if (this.startsWithKeyword(keyword)) {
      this.position += keyword.length;
      return true;
    }
    this.position = save;
    return false;
  }

  private startsWithKeyword(keyword: string): boolean {
    const candidate = this.text.slice(this.position, this.position + keyword.length);
    const after = this.text.charAt(this.position + keyword.length);
    return candidate.toLowerCase() === keyword && !WORD_CHAR.test(after);
  }

  private nextNonSpaceAfter(offset: number): string | undefined {
    let index = this.position + offset;
    while (index < this.text.length && this.isSpace(this.text[index] ?? '')) index += 1;
    return this.text[index];
  }

  private isSpace(char: string): boolean {
    return char === '+' || /\s/.test(char);
  }

  private skipSpace(): void {
    while (this.position < this.text.length && this.isSpace(this.text[this.position] ?? ''))
      this.position += 1;
  }

  private readWhile(pattern: RegExp): string {
    const start = this.position;
    while (this.position < this.text.length && pattern.test(this.text[this.position] ?? ''))
      this.position += 1;
    return this.text.slice(start, this.position);
  }

  private peek(): string | undefined {
    return this.text[this.position];
  }

  private atEnd(): boolean {
    return this.position >= this.text.length;
  }

  private expectChar(char: string): void {
    if (this.peek() !== char) {
      this.fail(`Expected "${char}", found ${describe(this.text, this.position)}`);
    }
    this.position += 1;
  }

  private expectEnd(): void {
    this.skipSpace();
    if (!this.atEnd()) {
      const expected =
        this.mode === 'filter' ? '"and", "or" or the end of the filter' : 'the end of the path';
      this.fail(`Unexpected ${describe(this.text, this.position)}; expected ${expected}`);
    }
  }

  private fail(message: string): never {
    return this.failAt(this.position, message);
  }

  private failAt(position: number, message: string): never {
    throw new ScimFilterError(`${message} at position ${String(position)}`, position, this.errorType);
  }
}

/** Parses a `filter` query parameter. Throws `ScimFilterError` (scimType `invalidFilter`) with the position. */
export function parseFilter(text: string): ScimFilter {
  return new Parser(text, 'filter').parseFilterText();
}

/**
 * Parses a PATCH operation `path`. Throws `ScimFilterError` with scimType `invalidFilter` for a fault inside the
 * brackets and `invalidPath` for anything else.
 */
export function parsePatchPath(text: string): ScimPatchPath {
  return new Parser(text, 'path').parsePatchPathText();
}
