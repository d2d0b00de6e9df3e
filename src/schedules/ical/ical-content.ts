// RFC 5545 §3.1 content lines (unfolding) and §3.4/§3.6 component nesting, with the physical line number each
// property starts on: ical.js parses the properties but reports no line numbers, and every import error must name
// its line. Each unfolded line is handed to ical.js's own property parser (parameters, quoting, escapes, value
// types); BEGIN/END nesting is checked here (ical.js does not check that END names the open component).
import { TextDecoder } from 'node:util';
import ICAL from 'ical.js';

export interface IcalProperty {
  /** Upper case, e.g. DTSTART. */
  readonly name: string;
  /** Physical line (1-based) the content line starts on. */
  readonly line: number;
  /** Parameters as ical.js gives them (lower-case names; VALUE removed, its type is `type`). */
  readonly params: Readonly<Record<string, string | string[]>>;
  /** ical.js's value type: date, date-time, period, recur, text, duration, … */
  readonly type: string;
  /** The value text after the first unquoted colon, unfolded but not unescaped. */
  readonly raw: string;
  /** ical.js's jCal values (text unescaped, lists split). */
  readonly values: readonly unknown[];
  /** The jCal array ical.js classes (ICAL.Property) wrap. */
  readonly jcal: unknown[];
}

export interface IcalComponent {
  /** Upper case, e.g. VEVENT. */
  readonly name: string;
  /** Line of its BEGIN. */
  readonly line: number;
  readonly properties: IcalProperty[];
  readonly components: IcalComponent[];
  /** The jCal array ical.js classes (ICAL.Component) wrap. */
  readonly jcal: [string, unknown[], unknown[]];
  /**
   * Lines inside this component (or a component nested in it) that could not be parsed; only on the components of
   * the VCALENDAR, so one broken event is skipped rather than the whole calendar refused.
   */
  readonly broken: IcalSyntaxError[];
}

export class IcalSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly property: string,
    message: string,
  ) {
    super(message);
  }
}

interface ContentLine {
  line: number;
  text: string;
}

/** Unfolds CRLF, LF or CR line breaks followed by one space or tab (§3.1); blank lines are skipped. */
export function unfold(text: string): ContentLine[] {
  const physical = text.split(/\r\n|\n|\r/);
  const lines: ContentLine[] = [];
  let current: { line: number; parts: string[] } | undefined;
  const flush = (): void => {
    if (current !== undefined) lines.push({ line: current.line, text: current.parts.join('') });
    current = undefined;
  };
  for (let index = 0; index < physical.length; index++) {
    const text = physical[index];
    const first = text.charCodeAt(0);
    if (first === 0x20 || first === 0x09) {
      if (current === undefined) {
        // A continuation after a blank line or at the start: nothing to continue.
        if (text.trim() === '') continue;
        throw new IcalSyntaxError(index + 1, '', 'a folded continuation line with no content line before it');
      }
      current.parts.push(text.slice(1));
    } else {
      flush();
      if (text.trim() !== '') current = { line: index + 1, parts: [text] };
    }
  }
  flush();
  return lines;
}

const BEGIN_END = /^(BEGIN|END):(.*)$/i;

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
export function decodeLines(body: Buffer, charset?: string): ContentLine[] {
  const lines = unfoldDecoded(body, isUtf8(charset) ? UTF8 : decoderFor(charset!));
  for (const { line, text } of lines) {
    if (text.includes('\u0000')) {
      throw new IcalSyntaxError(
        line,
        nameOf(text),
        'contains a NUL character (U+0000), which is not accepted',
      );
    }
  }
  return lines;
}

function decoderFor(charset: string): TextDecoder {
  try {
    return new TextDecoder(charset.trim(), { fatal: true });
  } catch {
    throw new UnsupportedCharsetError(charset);
  }
}

/** Fast path: the whole body decodes; otherwise each unfolded line is decoded from its octets. */
function unfoldDecoded(body: Buffer, decoder: TextDecoder): ContentLine[] {
  try {
    const text = decoder.decode(body);
    return unfold(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    // A fold inside a character, or bytes that are not valid: find which.
  }
  const hasBom = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
  // latin1 maps each octet to one character and back, so folds are found and joined on the octets themselves.
  return unfold(body.subarray(hasBom ? 3 : 0).toString('latin1')).map(({ line, text }) => {
    try {
      return { line, text: decoder.decode(Buffer.from(text, 'latin1')) };
    } catch {
      throw new IcalSyntaxError(
        line,
        nameOf(text),
        `is not valid ${decoder.encoding === 'utf-8' ? 'UTF-8' : decoder.encoding}: send UTF-8 (RFC 5545's ` +
          'default), or name the charset in Content-Type (text/calendar; charset=…)',
      );
    }
  });
}

function nameOf(text: string): string {
  return (NAME.exec(text)?.[0] ?? '').toUpperCase();
}

/** A Content-Type charset no decoder knows: the import answers 415. */
export class UnsupportedCharsetError extends Error {
  constructor(readonly charset: string) {
    super(`charset "${charset}" is not supported; send UTF-8`);
  }
}

/**
 * Parses the body into its one VCALENDAR. Throws IcalSyntaxError naming the line for anything ical.js refuses,
 * unbalanced BEGIN/END, content outside the VCALENDAR, or a second VCALENDAR.
 *
 * `wanted`: when given, only properties with these names (and everything inside a VTIMEZONE, which ical.js reads
 * whole) go through ical.js; the others (DESCRIPTION, ATTENDEE, … — most of a real export) are only checked for the
 * NAME[;PARAM…]:VALUE shape. Half the parse time of a Google export is spent on lines the caller ignores.
 */
export function parseCalendar(
  body: string | Buffer,
  wanted?: ReadonlySet<string>,
  charset?: string,
): IcalComponent {
  return drain(parseCalendarSteps(body, wanted, charset));
}

/** Content lines parsed between two pauses of `parseCalendarSteps`. */
const LINES_PER_STEP = 200;

/** Runs a stepped computation to its end at once (tests, small inputs). */
export function drain<T>(steps: Generator<void, T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done === true) return next.value;
  }
}

/**
 * `parseCalendar` as steps: it pauses (yields) every few hundred content lines, so a caller can give the event loop
 * back between them (a 10 MB calendar is ~200,000 lines, over a second of parsing).
 */
export function* parseCalendarSteps(
  body: string | Buffer,
  wanted?: ReadonlySet<string>,
  charset?: string,
): Generator<void, IcalComponent> {
  const lines =
    typeof body === 'string'
      ? unfold(body.charCodeAt(0) === 0xfeff ? body.slice(1) : body)
      : decodeLines(body, charset);
  if (lines.length === 0) {
    throw new IcalSyntaxError(
      1,
      '',
      'the body is empty; send one VCALENDAR (BEGIN:VCALENDAR … END:VCALENDAR)',
    );
  }
  const stack: IcalComponent[] = [];
  let calendar: IcalComponent | undefined;
  let sinceStep = 0;
  for (const { line, text: content } of lines) {
    if (++sinceStep === LINES_PER_STEP) {
      sinceStep = 0;
      yield;
    }
    const beginEnd = BEGIN_END.exec(content);
    if (beginEnd !== null) {
      const name = beginEnd[2].trim().toUpperCase();
      if (beginEnd[1].toUpperCase() === 'BEGIN') {
        if (stack.length === 0 && (calendar !== undefined || name !== 'VCALENDAR')) {
          throw new IcalSyntaxError(
            line,
            'BEGIN',
            calendar === undefined
              ? `the body must start with BEGIN:VCALENDAR, not BEGIN:${name}`
              : 'a second VCALENDAR; import one calendar per request',
          );
        }
        const component: IcalComponent = {
          name,
          line,
          properties: [],
          components: [],
          jcal: [name.toLowerCase(), [], []],
          broken: [],
        };
        const parent = stack.at(-1);
        if (parent !== undefined) {
          parent.components.push(component);
          parent.jcal[2].push(component.jcal);
        } else {
          calendar = component;
        }
        stack.push(component);
      } else {
        const open = stack.pop();
        if (open === undefined) {
          throw new IcalSyntaxError(line, 'END', `END:${name} without a matching BEGIN`);
        }
        if (open.name !== name) {
          throw new IcalSyntaxError(
            line,
            'END',
            `END:${name} closes BEGIN:${open.name} of line ${open.line}`,
          );
        }
      }
      continue;
    }
    const owner = stack.at(-1);
    const name = (NAME.exec(content)?.[0] ?? '').toUpperCase();
    if (owner === undefined) {
      throw new IcalSyntaxError(
        line,
        name,
        calendar === undefined
          ? 'content before BEGIN:VCALENDAR; the body must start with it'
          : 'content after END:VCALENDAR',
      );
    }
    const full =
      wanted === undefined || wanted.has(name) || stack.some((component) => component.name === 'VTIMEZONE');
    let property: IcalProperty;
    try {
      property = full ? parseProperty(content, line, name) : skimProperty(content, line, name);
    } catch (error) {
      // A broken line inside an event (or to-do, time zone, …) spoils that component only: it is noted on the
      // VCALENDAR's child that holds it, and the importer skips that one and reports it.
      if (!(error instanceof IcalSyntaxError) || stack.length < 2) throw error;
      stack[1].broken.push(error);
      continue;
    }
    owner.properties.push(property);
    owner.jcal[1].push(property.jcal);
  }
  const open = stack.at(-1);
  if (open !== undefined) {
    throw new IcalSyntaxError(open.line, 'BEGIN', `BEGIN:${open.name} is never closed with END:${open.name}`);
  }
  return calendar!;
}

/** Recurrence rules: every part name and enumerated value is case-insensitive (RFC 5545 §2, §3.3.10). */
const RULE_PROPERTIES = new Set(['RRULE', 'EXRULE']);

/**
 * Exchange 2010 writes `DTSTART;TZID="W. Europe Standard Time:20200609T090000"`: the closing quote after the value
 * swallows it, so the line has no value at all. When the last quoted parameter ends in `:` + a date or date-time
 * list and nothing follows, the author meant `TZID="W. Europe Standard Time":20200609T090000`.
 */
const VALUE_IN_QUOTES =
  /^(.*;[A-Za-z-]+=)"([^"]*):([0-9]{8}(?:T[0-9]{6})?Z?(?:,[0-9]{8}(?:T[0-9]{6})?Z?)*)"$/;

/** Vendor quirks that ical.js would refuse, rewritten to what their authors meant (docs/schedules.md). */
export function repairContentLine(source: string, name: string): string {
  let content = source;
  if (valueStart(content) < 0) {
    const quoted = VALUE_IN_QUOTES.exec(content);
    if (quoted !== null) content = `${quoted[1]}"${quoted[2]}":${quoted[3]}`;
  }
  if (RULE_PROPERTIES.has(name)) {
    const at = valueStart(content);
    // ical.js reads only upper-case rule values ("freq=weekly" is refused), and Exchange CDO writes
    // `BYDAY=MO, TU, WE`: a rule has no meaningful white space, so it is removed and the value upper-cased.
    if (at >= 0) content = content.slice(0, at) + content.slice(at).replace(/\s+/g, '').toUpperCase();
  }
  return content;
}

function parseProperty(source: string, line: number, name: string): IcalProperty {
  const content = repairContentLine(source, name);
  let jcal: unknown[];
  try {
    jcal = ICAL.parse.property(content) as unknown[];
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new IcalSyntaxError(line, name, `cannot be parsed (${reason.slice(0, 200)})`);
  }
  if (!Array.isArray(jcal) || typeof jcal[0] !== 'string') {
    throw new IcalSyntaxError(line, name, 'is not a content line NAME[;PARAM=…]:VALUE');
  }
  return {
    name: jcal[0].toUpperCase(),
    line,
    params: jcal[1] as Record<string, string | string[]>,
    type: String(jcal[2]),
    raw: rawValue(content),
    values: jcal.slice(3),
    jcal,
  };
}

/** A property nobody reads: its shape is checked, its value kept as written. */
function skimProperty(content: string, line: number, name: string): IcalProperty {
  const valueAt = valueStart(content);
  const separator = content.charCodeAt(name.length);
  if (name === '' || valueAt < 0 || (separator !== 0x3a && separator !== 0x3b)) {
    throw new IcalSyntaxError(line, name, 'is not a content line NAME[;PARAM=…]:VALUE');
  }
  const raw = content.slice(valueAt);
  return {
    name,
    line,
    params: {},
    type: 'unknown',
    raw,
    values: [raw],
    jcal: [name.toLowerCase(), {}, 'unknown', raw],
  };
}

/** The text after the first colon outside double quotes (§3.1: parameter values may contain quoted colons). */
function rawValue(content: string): string {
  const at = valueStart(content);
  return at < 0 ? '' : content.slice(at);
}

function valueStart(content: string): number {
  let quoted = false;
  for (let index = 0; index < content.length; index++) {
    const char = content.charCodeAt(index);
    if (char === 0x22) quoted = !quoted;
    else if (char === 0x3a && !quoted) return index + 1;
  }
  return -1;
}

/** A parameter's single value (TZID, VALUE, RANGE), undefined when absent. */
export function paramOf(property: IcalProperty, name: string): string | undefined {
  const value = property.params[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(',') : value;
}

/** A TEXT value unescaped by ical.js (§3.3.11), else the text as written. */
export function textOf(property: IcalProperty): string {
  const value = property.values[0];
  return typeof value === 'string' ? value : property.raw;
}
