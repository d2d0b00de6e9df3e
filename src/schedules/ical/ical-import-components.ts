// The import's components stage: each calendar's own properties are checked, VTIMEZONEs kept by TZID and the VEVENTs
// collected; to-dos, journals, … and broken components are skipped and reported, and so are malformed lines of
// properties nothing reads.
import { textOf, type IcalComponent } from './ical-content.js';
import { type IcalProblem, type ImportReport, Refusal } from './ical-import-report.js';
import type { TimeReader } from './ical-import-times.js';
import { uidOf } from './ical-versions.js';

/** Components of a VCALENDAR that hold no events; skipped and reported. */
const UNREPRESENTABLE: Record<string, string> = {
  VTODO: 'to-dos',
  VJOURNAL: 'journal entries',
  VFREEBUSY: 'free/busy time',
  VAVAILABILITY: 'availability',
};

/**
 * The VEVENTs of every VCALENDAR of the body, in file order; each VCALENDAR's VTIMEZONEs are kept by TZID for its
 * own values, to-dos, journals, … are skipped (X- components are extensions), and malformed lines of properties
 * nothing reads are reported as left out. A step per component (a body may hold 100,000 of them).
 */
export function* collectComponents(
  calendars: readonly IcalComponent[],
  report: ImportReport,
  times: TimeReader,
): Generator<void, IcalComponent[]> {
  const events: IcalComponent[] = [];
  for (const calendar of calendars) {
    const problems = calendarProblems(calendar);
    if (problems.length > 0 && calendars.length > 1) {
      // One of several VCALENDARs (a feed of concatenated files) that is no calendar of events to import: its own
      // events are left out and reported, the others' imported.
      report.skip(calendar, null, problems[0]);
      continue;
    }
    for (const { line, property, message } of problems) {
      report.attempt(() => {
        throw new Refusal(line, property, message);
      });
    }
    reportSkippedLines(calendar, null, report);
    for (const component of calendar.components) {
      collectComponent(component, events, report, times);
      yield;
    }
  }
  for (const event of events) {
    times.noteTzidSpans(event);
    yield;
  }
  return events;
}

/** The iTIP methods (RFC 5546 §1.4) that are messages about events, not events to schedule. */
const ITIP_MESSAGES = new Set(['CANCEL', 'REPLY', 'REFRESH', 'COUNTER', 'DECLINECOUNTER']);

/** VERSION must be 2.0; METHOD, when given, no iTIP message about events. What a calendar breaks of that, by line. */
function calendarProblems(calendar: IcalComponent): IcalProblem[] {
  const problems: IcalProblem[] = [];
  for (const { name, line, raw } of calendar.properties) {
    if (name === 'VERSION' && raw.trim() !== '2.0') {
      problems.push({
        line,
        property: name,
        message: `"${raw}" is not 2.0; only iCalendar 2.0 (RFC 5545) can be imported`,
      });
    }
    const method = name === 'METHOD' ? raw.trim().toUpperCase() : undefined;
    // iTIP (RFC 5546): PUBLISH, REQUEST and ADD carry events; CANCEL, REPLY, COUNTER, … are messages about them. Any
    // other value is no iTIP method (RFC 5545's own example in §4 writes `METHOD:xyz`): the calendar is read as one.
    if (method !== undefined && ITIP_MESSAGES.has(method)) {
      problems.push({
        line,
        property: name,
        message: `METHOD:${method} is a scheduling message about events (RFC 5546), not a calendar of events to import`,
      });
    }
  }
  return problems;
}

function collectComponent(
  component: IcalComponent,
  events: IcalComponent[],
  report: ImportReport,
  times: TimeReader,
): void {
  if (component.name === 'VEVENT') {
    if (report.skipIfBroken(component)) return;
    events.push(component);
    reportSkippedLines(component, uidOf(component) ?? null, report);
  } else if (component.name === 'VTIMEZONE') {
    if (report.skipIfBroken(component)) return;
    const tzid = component.properties.find((property) => property.name === 'TZID');
    if (tzid === undefined) {
      report.skip(component, null, {
        line: component.line,
        property: component.name,
        message: 'a VTIMEZONE without TZID',
      });
    } else times.addVtimezone(textOf(tzid), component);
  } else if (!component.name.startsWith('X-')) {
    const what = UNREPRESENTABLE[component.name];
    report.skip(component, uidOf(component) ?? null, {
      line: component.line,
      property: component.name,
      message:
        `${what === undefined ? `${component.name} components` : `${component.name} components (${what})`} ` +
        'cannot be represented: a schedule holds events (VEVENT) only',
    });
  }
}

/**
 * Lines that could not be parsed of properties nothing reads (or the component can do without, SUMMARY): left out,
 * the rest of the component is kept.
 */
function reportSkippedLines(component: IcalComponent, uid: string | null, report: ImportReport): void {
  const kept = component.name === 'VCALENDAR' ? 'the calendar' : `the ${component.name}`;
  for (const error of component.skippedLines) {
    report.skipLine(uid, {
      line: error.line,
      property: error.property,
      message: `${error.message}; left out, ${kept} is imported without it`,
    });
  }
}
