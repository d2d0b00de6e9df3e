// RFC 5545 §3.1 content lines: unfolding (CRLF, LF or CR; a break then a space or tab continues the line), decoding
// the body's octets in its charset, and the streaming meter that refuses an over-long line as the body arrives. Each
// line keeps the physical line number it starts on, so every import error can name its line.
import { TextDecoder } from 'node:util';
import { MAX_LINE_LENGTH, overlongLineProblem } from './ical-limits.js';

export class IcalSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly property: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ContentLine {
  line: number;
  text: string;
  /** Set when the line is longer than MAX_LINE_LENGTH: `text` is then only its first physical line. */
  overLength?: number;
}

/** Unfolds CRLF, LF or CR line breaks followed by one space or tab (§3.1); blank lines are skipped. */
export function unfold(text: string): ContentLine[] {
  return [...unfoldLines(text)];
}

const LINE_BREAK = /\r\n|\n|\r/g;

/**
 * `unfold` one content line at a time, so a caller can stop at the first line over a limit without the rest having
 * been split. A line longer than MAX_LINE_LENGTH is measured but not joined (a 25 MB line costs a scan, not a copy).
 */
export function* unfoldLines(text: string): Generator<ContentLine> {
  let current: { line: number; parts: string[]; length: number } | undefined;
  const flushed = (): ContentLine | undefined => {
    if (current === undefined) return undefined;
    const { line, parts, length } = current;
    current = undefined;
    return length > MAX_LINE_LENGTH
      ? { line, text: parts[0], overLength: length }
      : { line, text: parts.join('') };
  };
  const breaks = new RegExp(LINE_BREAK.source, 'g');
  let index = 0;
  for (let from = 0; from <= text.length; index++) {
    const found = breaks.exec(text);
    const to = found === null ? text.length : found.index;
    const physical = text.slice(from, to);
    from = found === null ? text.length + 1 : to + found[0].length;
    const first = physical.charCodeAt(0);
    if (first === 0x20 || first === 0x09) {
      if (current === undefined) {
        // A continuation after a blank line or at the start: nothing to continue.
        if (physical.trim() === '') continue;
        throw new IcalSyntaxError(index + 1, '', 'a folded continuation line with no content line before it');
      }
      current.length += physical.length - 1;
      if (current.length <= MAX_LINE_LENGTH) current.parts.push(physical.slice(1));
    } else {
      const line = flushed();
      if (line !== undefined) yield line;
      if (physical.trim() !== '') current = { line: index + 1, parts: [physical], length: physical.length };
    }
  }
  const last = flushed();
  if (last !== undefined) yield last;
}

/** Octets of a content line kept to name its property in a refusal (names are short). */
const NAME_OCTETS = 64;

/**
 * At most this many octets a character in any charset the import decodes (GB18030 and UTF-32 take 4): a body in
 * another charset than UTF-8 is measured in octets against this many times MAX_LINE_LENGTH, so its refusal, too,
 * never comes before the parse's.
 */
const MAX_OCTETS_PER_CHARACTER = 4;

/**
 * Measures the content lines of a body as its chunks arrive: a line is refused (IcalSyntaxError naming
 * its physical line and property) the moment its unfolded length passes the limit, so a 25 MB line is neither
 * buffered nor decoded. A UTF-8 body's code points are counted (octets that do not continue a UTF-8 sequence),
 * never more than the characters `unfoldLines` counts after decoding, so it refuses only lines the parse would
 * refuse too. A body in another charset is counted in octets against MAX_OCTETS_PER_CHARACTER × MAX_LINE_LENGTH:
 * a bound on the same characters whatever the charset (zero octets, UTF-16's other halves, are skipped, so its
 * ASCII breaks, folds and property names read as in UTF-8; a character counts 1–4). Line numbers and folds follow
 * `unfoldLines` (CRLF, LF or CR; a break then a space or tab continues the line).
 */
export class ContentLineMeter {
  /** Physical lines ended so far. */
  private breaks = 0;
  private afterCr = false;
  private atLineStart = true;
  /** Octets of the physical line so far: an empty one ends the content line (as a blank line does). */
  private physicalOctets = 0;
  private current: { line: number; units: number; head: number[] } | undefined;
  private bomPending: boolean;
  private readonly utf8: boolean;
  private readonly limit: number;

  /** `charset`: the Content-Type's charset parameter (UTF-8 when absent). */
  constructor(charset?: string) {
    this.utf8 = isUtf8(charset);
    this.bomPending = this.utf8;
    this.limit = this.utf8 ? MAX_LINE_LENGTH : MAX_OCTETS_PER_CHARACTER * MAX_LINE_LENGTH;
  }

  /** Measures the next chunk of the body; throws once a line is over the limit. */
  feed(chunk: Uint8Array): void {
    let at = this.skipBom(chunk);
    for (; at < chunk.length; at++) {
      const octet = chunk[at];
      // Outside UTF-8 a zero octet is half of a UTF-16 character (`\n` is 0A 00), or a NUL the parse refuses anyway.
      if (octet === 0x00 && !this.utf8) continue;
      if (this.afterCr) {
        this.afterCr = false;
        if (octet === 0x0a) continue;
      }
      if (octet === 0x0d || octet === 0x0a) {
        this.endPhysicalLine(octet === 0x0d);
        continue;
      }
      this.physicalOctets++;
      if (this.atLineStart) {
        this.atLineStart = false;
        // A fold's space or tab is not part of the line; a continuation with nothing before it is the parse's error.
        if (octet === 0x20 || octet === 0x09) continue;
        this.current = { line: this.breaks + 1, units: 0, head: [] };
      }
      if (this.current === undefined) continue;
      if (this.current.head.length < NAME_OCTETS) this.current.head.push(octet);
      const counted = !this.utf8 || (octet & 0xc0) !== 0x80;
      if (counted && ++this.current.units > this.limit) this.refuse(this.current);
    }
  }

  private skipBom(chunk: Uint8Array): number {
    if (!this.bomPending || chunk.length === 0) return 0;
    this.bomPending = false;
    return chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
  }

  private endPhysicalLine(cr: boolean): void {
    if (this.physicalOctets === 0) this.current = undefined;
    this.breaks++;
    this.afterCr = cr;
    this.atLineStart = true;
    this.physicalOctets = 0;
  }

  private refuse({ line, head }: { line: number; head: number[] }): never {
    // Property names are ASCII in every charset the import reads (without the zero octets of UTF-16).
    throw new IcalSyntaxError(line, nameOf(Buffer.from(head).toString('latin1')), overlongLineProblem());
  }
}

const NAME = /^[A-Za-z0-9-]+/;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Whether `charset` (a Content-Type parameter) names UTF-8 or its subset US-ASCII: RFC 5545 §3.1's default. */
function isUtf8(charset: string | undefined): boolean {
  return charset === undefined || /^(utf-?8|us-ascii|ascii)$/i.test(charset.trim());
}

/**
 * The content lines of a body in bytes. RFC 5545 §3.1: unfolding restores the original octet sequence, so a
 * multi-octet UTF-8 character split by a fold (as 75-octet folding does) is joined before it is decoded; bytes
 * that are not valid UTF-8 (or not valid in the declared `charset`) are a syntax error naming their line, never
 * silently replaced. A NUL character is refused the same way (PostgreSQL cannot store it).
 */
export function* decodeLines(body: Buffer, charset?: string): Generator<ContentLine> {
  for (const line of unfoldDecoded(body, isUtf8(charset) ? UTF8 : decoderFor(charset!))) {
    if (line.text.includes('\u0000')) {
      throw new IcalSyntaxError(
        line.line,
        nameOf(line.text),
        'contains a NUL character (U+0000), which is not accepted',
      );
    }
    yield line;
  }
}

function decoderFor(charset: string): TextDecoder {
  try {
    return new TextDecoder(charset.trim(), { fatal: true });
  } catch {
    throw new UnsupportedCharsetError(charset);
  }
}

/** Fast path: the whole body decodes; otherwise each unfolded line is decoded from its octets. */
function* unfoldDecoded(body: Buffer, decoder: TextDecoder): Generator<ContentLine> {
  let text: string | undefined;
  try {
    text = decoder.decode(body);
  } catch {
    // A fold inside a character, or bytes that are not valid: find which.
  }
  if (text !== undefined) {
    yield* unfoldLines(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    return;
  }
  const hasBom = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
  // latin1 maps each octet to one character and back, so folds are found and joined on the octets themselves.
  for (const { line, text, overLength } of unfoldLines(body.subarray(hasBom ? 3 : 0).toString('latin1'))) {
    if (overLength !== undefined) {
      yield { line, text, overLength };
      continue;
    }
    try {
      yield { line, text: decoder.decode(Buffer.from(text, 'latin1')) };
    } catch {
      throw new IcalSyntaxError(
        line,
        nameOf(text),
        `is not valid ${decoder.encoding === 'utf-8' ? 'UTF-8' : decoder.encoding}: send UTF-8 (RFC 5545's ` +
          'default), or name the charset in Content-Type (text/calendar; charset=…)',
      );
    }
  }
}

export function nameOf(text: string): string {
  return (NAME.exec(text)?.[0] ?? '').toUpperCase();
}

/** A Content-Type charset no decoder knows: the import answers 415. */
export class UnsupportedCharsetError extends Error {
  constructor(readonly charset: string) {
    super(`charset "${charset}" is not supported; send UTF-8`);
  }
}
