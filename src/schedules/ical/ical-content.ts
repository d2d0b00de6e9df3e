// RFC 5545 §3.1 content lines (unfolding) and §3.4/§3.6 component nesting, with the physical line number each
// property starts on: ical.js parses the properties but reports no line numbers, and every import error must name
// its line. Each unfolded line is handed to ical.js's own property parser (parameters, quoting, escapes, value
// types); BEGIN/END nesting is checked here (ical.js does not check that END names the open component).
import ICAL from 'ical.js';
import { decodeLines, IcalSyntaxError, nameOf, unfoldLines, type ContentLine } from './ical-content-lines.js';
import {
  listValuesOf,
  MAX_COMPONENTS,
  MAX_DATE_VALUES,
  MAX_DEPTH,
  MAX_IMPORT_DATE_VALUES,
  MAX_IMPORT_PROPERTIES,
  MAX_NESTED_PER_COMPONENT,
  MAX_PROPERTIES_PER_COMPONENT,
  overlongLineProblem,
  readLineProblem,
  tooManyValues,
  tooManyProperties as tooManyPropertiesInAll,
  tooManyValuesInAll,
} from './ical-limits.js';

export {
  ContentLineMeter,
  decodeLines,
  IcalSyntaxError,
  unfold,
  unfoldLines,
  UnsupportedCharsetError,
} from './ical-content-lines.js';

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
  /**
   * Malformed lines of properties nothing reads (a broken ATTENDEE, an `X-…=` left over from a bad fold), left out;
   * on the VCALENDAR (its own lines) and on its components (theirs and their nested components'), to be reported.
   */
  readonly skippedLines: IcalSyntaxError[];
}

const BEGIN_END = /^(BEGIN|END):(.*)$/i;

/**
 * Parses the body into its VCALENDARs, in file order: a feed may concatenate several (`BEGIN:VCALENDAR … END:VCALENDAR`
 * one after another); each keeps its own properties and VTIMEZONEs. Throws IcalSyntaxError naming the line for
 * unbalanced BEGIN/END, content outside a VCALENDAR, or a line of the calendar itself that it needs.
 *
 * `wanted`: when given, only properties with these names (and everything inside a VTIMEZONE, which ical.js reads
 * whole) go through ical.js; the others (DESCRIPTION, ATTENDEE, … — most of a real export) are only checked for the
 * NAME[;PARAM…]:VALUE shape. Half the parse time of a Google export is spent on lines the caller ignores. A broken
 * line of a property that is needed (a wanted one of the calendar or of one of its components, anything in a
 * VTIMEZONE) spoils its component (`broken`); a broken line of any other property is left out (`skippedLines`).
 */
export function parseCalendars(
  body: string | Buffer,
  wanted?: ReadonlySet<string>,
  charset?: string,
): IcalComponent[] {
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
 * `parseCalendars` as steps: it pauses (yields) every few hundred content lines, so a caller can give the event
 * loop back between them (a 10 MB calendar is ~200,000 lines, over a second of parsing).
 */
export function* parseCalendarSteps(
  body: string | Buffer,
  wanted?: ReadonlySet<string>,
  charset?: string,
  kept?: ReadonlySet<string>,
  optional?: ReadonlySet<string>,
): Generator<void, IcalComponent[]> {
  const lines =
    typeof body === 'string'
      ? unfoldLines(body.charCodeAt(0) === 0xfeff ? body.slice(1) : body)
      : decodeLines(body, charset);
  const parser = new CalendarParser(wanted, kept, optional);
  let sinceStep = 0;
  for (const line of lines) {
    if (++sinceStep === LINES_PER_STEP) {
      sinceStep = 0;
      yield;
    }
    parser.read(line);
  }
  return parser.finish();
}

/** The state of one parse: the open components, the VCALENDARs so far and the counts the limits need. */
class CalendarParser {
  private readonly stack: IcalComponent[] = [];
  private readonly calendars: IcalComponent[] = [];
  /** RDATE/EXDATE values per open component, counted before ical.js splits them (ical-limits.ts). */
  private readonly listValues = new Map<IcalComponent, Map<string, number>>();
  private components = 0;
  private lines = 0;
  /** RDATE/EXDATE values of the calendar so far (MAX_IMPORT_DATE_VALUES). */
  private dateValues = 0;
  /** Properties kept so far, in all components (MAX_IMPORT_PROPERTIES). */
  private keptProperties = 0;

  constructor(
    private readonly wanted: ReadonlySet<string> | undefined,
    private readonly kept: ReadonlySet<string> | undefined,
    /** Wanted properties a component can do without (SUMMARY): a broken line of one is left out, not fatal. */
    private readonly optional: ReadonlySet<string> | undefined,
  ) {}

  read({ line, text: content, overLength }: ContentLine): void {
    this.lines++;
    const beginEnd = overLength === undefined ? BEGIN_END.exec(content) : null;
    if (beginEnd === null) this.property(line, content, overLength);
    else if (beginEnd[1].toUpperCase() === 'BEGIN') this.begin(line, beginEnd[2].trim().toUpperCase());
    else this.end(line, beginEnd[2].trim().toUpperCase());
  }

  finish(): IcalComponent[] {
    if (this.lines === 0) {
      throw new IcalSyntaxError(
        1,
        '',
        'the body is empty; send one VCALENDAR (BEGIN:VCALENDAR … END:VCALENDAR)',
      );
    }
    const open = this.stack.at(-1);
    if (open !== undefined) {
      throw new IcalSyntaxError(
        open.line,
        'BEGIN',
        `BEGIN:${open.name} is never closed with END:${open.name}`,
      );
    }
    return this.calendars;
  }

  private begin(line: number, name: string): void {
    const stack = this.stack;
    if (stack.length === 0 && name !== 'VCALENDAR') {
      const last = this.calendars.at(-1);
      throw new IcalSyntaxError(
        line,
        'BEGIN',
        last === undefined
          ? `the body must start with BEGIN:VCALENDAR, not BEGIN:${name}`
          : `BEGIN:${name} outside a VCALENDAR (after the END:VCALENDAR of the one that begins at line ${last.line})`,
      );
    }
    checkComponentCounts(line, ++this.components, stack.length);
    const component: IcalComponent = {
      name,
      line,
      properties: [],
      components: [],
      jcal: [name.toLowerCase(), [], []],
      broken: [],
      skippedLines: [],
    };
    const parent = stack.at(-1);
    if (parent === undefined) this.calendars.push(component);
    else if (stack.length >= 2 && parent.components.length >= MAX_NESTED_PER_COMPONENT) {
      // Read for BEGIN/END balance only; its top-level component is skipped.
      spoil(stack, new IcalSyntaxError(line, 'BEGIN', tooManyNested(parent)));
    } else {
      parent.components.push(component);
      parent.jcal[2].push(component.jcal);
    }
    stack.push(component);
  }

  private end(line: number, name: string): void {
    const open = this.stack.pop();
    if (open === undefined) {
      throw new IcalSyntaxError(line, 'END', `END:${name} without a matching BEGIN`);
    }
    if (open.name !== name) {
      throw new IcalSyntaxError(line, 'END', `END:${name} closes BEGIN:${open.name} of line ${open.line}`);
    }
    this.listValues.delete(open);
  }

  private property(line: number, content: string, overLength: number | undefined): void {
    const stack = this.stack;
    const owner = stack.at(-1);
    const name = nameOf(content);
    if (owner === undefined) {
      throw new IcalSyntaxError(
        line,
        name,
        this.calendars.length === 0
          ? 'content before BEGIN:VCALENDAR; the body must start with it'
          : 'content after END:VCALENDAR',
      );
    }
    // Once a top-level component is to be skipped, only its UID (which the report names) is still worth reading.
    if (stack.length >= 2 && stack[1].broken.length > 0 && name !== 'UID') return;
    const inZone = stack.some((component) => component.name === 'VTIMEZONE');
    const full = this.wanted === undefined || this.wanted.has(name) || inZone;
    // Only the calendar's own lines and its components' are read (not a VALARM's): those the caller wants are needed,
    // unless the component can do without them.
    const needed = inZone || (full && stack.length <= 2 && this.optional?.has(name) !== true);
    // Over a limit (ical-limits.ts): the component is spoilt whatever the property.
    const limit =
      overLength !== undefined
        ? overlongLineProblem(overLength)
        : owner.properties.length >= MAX_PROPERTIES_PER_COMPONENT
          ? tooManyProperties(owner)
          : undefined;
    if (limit !== undefined) return this.broken(new IcalSyntaxError(line, name, limit), true);
    let property: IcalProperty;
    let values = 0;
    try {
      if (full) values = checkReadLine(line, name, content, owner, this.listValues);
      property = full ? parseProperty(content, line, name) : skimProperty(content, line, name);
    } catch (error) {
      if (!(error instanceof IcalSyntaxError)) throw error;
      return this.broken(error, needed);
    }
    // The values of the whole calendar: past the limit the body is refused at this line.
    this.dateValues += values;
    if (this.dateValues > MAX_IMPORT_DATE_VALUES) throw new IcalSyntaxError(line, name, tooManyValuesInAll());
    // Lines nobody reads were checked for their shape; only those named in `kept` are kept.
    if (!full && this.kept !== undefined && !this.kept.has(name)) return;
    if (++this.keptProperties > MAX_IMPORT_PROPERTIES)
      throw new IcalSyntaxError(line, name, tooManyPropertiesInAll());
    owner.properties.push(property);
    owner.jcal[1].push(property.jcal);
  }

  /**
   * A line that cannot be read. One of a property nothing needs is left out and noted on the VCALENDAR or its
   * component that holds it (the importer reports it); one that is needed spoils that component only (the importer
   * skips it and reports it), or, on the VCALENDAR itself, refuses the body.
   */
  private broken(error: IcalSyntaxError, needed: boolean): void {
    const stack = this.stack;
    if (!needed) {
      (stack[1] ?? stack[0]).skippedLines.push(error);
      return;
    }
    if (stack.length < 2) throw error;
    spoil(stack, error);
  }
}

/** The first reason a top-level component is skipped; later ones are not needed (the report names one). */
function spoil(stack: readonly IcalComponent[], error: IcalSyntaxError): void {
  if (stack[1].broken.length === 0) stack[1].broken.push(error);
}

/** Too many components in all, or nested too deep: the calendar is refused at that BEGIN. */
function checkComponentCounts(line: number, components: number, depth: number): void {
  if (components > MAX_COMPONENTS) {
    throw new IcalSyntaxError(
      line,
      'BEGIN',
      `the calendar has more than ${MAX_COMPONENTS.toLocaleString('en')} components; split it`,
    );
  }
  if (depth >= MAX_DEPTH) {
    throw new IcalSyntaxError(line, 'BEGIN', `components are nested more than ${MAX_DEPTH} deep`);
  }
}

function tooManyNested(parent: IcalComponent): string {
  return `${parent.name} of line ${parent.line} has more than ${MAX_NESTED_PER_COMPONENT.toLocaleString('en')} components`;
}

function tooManyProperties(owner: IcalComponent): string {
  return `${owner.name} of line ${owner.line} has more than ${MAX_PROPERTIES_PER_COMPONENT.toLocaleString('en')} properties`;
}

/** The limits of a line read through ical.js, checked on its text before ical.js parses it (ical-limits.ts). */
function checkReadLine(
  line: number,
  name: string,
  content: string,
  owner: IcalComponent,
  listValues: Map<IcalComponent, Map<string, number>>,
): number {
  const tooLong = readLineProblem(name, content.length);
  if (tooLong !== undefined) throw new IcalSyntaxError(line, name, tooLong);
  let counts = listValues.get(owner);
  const counted = counts?.get(name) ?? 0;
  const values = listValuesOf(name, content, valueStart(content), MAX_DATE_VALUES - counted);
  if (values === 0) return 0;
  if (counted + values > MAX_DATE_VALUES) throw new IcalSyntaxError(line, name, tooManyValues(name));
  if (counts === undefined) listValues.set(owner, (counts = new Map<string, number>()));
  counts.set(name, counted + values);
  return values;
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
