// How long the worst inputs a caller can send take to answer, in-process on the compiled code. The unit specs prove
// the same cases by the work done (periods generated, text handed to ical.js), which does not depend on the
// machine; the time each takes is measured here.
// Run after `npm run build`:  node bench/worst-inputs.mjs [--passes 5]
//
// (a) 2,000 rules `FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30` (February 30th: no occurrence ever), each asked whether
//     it generates anything in the 400 years after DTSTART (the write-time check): time per rule;
// (b) a daily rule from 2025 in Europe/Berlin asked for its occurrences on 2500-06-01 (the window jump);
// (c) an import of a calendar with a 25 MB RDATE line (refused: the line limit is 1 MiB);
// (d) imports of calendars whose parts are multiplied (events, RDATE values, alarms, unread lines, unknown
//     components, line length; seeded), as the import-cost fuzz of src/schedules/ical/ical-limits.spec.ts builds
//     them: time per KiB of input, the worst calendar.
// Each figure is the fastest of `passes` passes (scheduling and GC of a loaded machine only ever add time).
import os from 'node:os';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';

const { values } = parseArgs({ options: { passes: { type: 'string', default: '5' } } });
const PASSES = Number(values.passes);
const dist = (p) => new URL(`../dist/src/${p}`, import.meta.url).href;
const load = (p) =>
  import(dist(p)).catch((error) => {
    console.error(`Cannot load dist/src/${p} (run \`npm run build\` first): ${error.message}`);
    process.exit(1);
  });
const { compileSeries } = await load('schedules/recurrence/index.js');
const { importCalendar, IcalImportError } = await load('schedules/ical/ical-import.js');

const YEAR_MS = 366 * 86_400_000;

function fastest(run) {
  let best = Infinity;
  for (let i = 0; i < PASSES; i++) {
    const began = performance.now();
    run();
    best = Math.min(best, performance.now() - began);
  }
  return best;
}

function importOrRefuse(text) {
  try {
    importCalendar(text);
  } catch (error) {
    if (!(error instanceof IcalImportError)) throw error;
  }
}

const ics = (...lines) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', ...lines.flat(), 'END:VCALENDAR', ''].join('\r\n');
const event = (uid, ...lines) => [
  'BEGIN:VEVENT',
  `UID:${uid}`,
  'DTSTART:20260105T090000Z',
  'DTEND:20260105T091500Z',
  ...lines,
  'END:VEVENT',
];
const dates = (count) =>
  Array.from(
    { length: count },
    (_, i) => `2027${String((i % 12) + 1).padStart(2, '0')}01T0900${String(i % 60).padStart(2, '0')}Z`,
  ).join(',');

console.log(
  `Node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; fastest of ${PASSES} passes`,
);

// (a)
const never = Array.from({ length: 2_000 }, () =>
  compileSeries({
    Start: '2026-01-05T09:00:00Z',
    End: '2026-01-05T09:15:00Z',
    StartTimeZone: 'UTC',
    Recurrence: { RecurrenceType: 'SECONDLY', Pattern: 'FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30' },
  }),
);
const neverMs = fastest(() => {
  for (const one of never) {
    if (one.generatesBetween(one.first, one.first + 401 * YEAR_MS) !== false)
      throw new Error('expected never');
  }
});
console.log(
  `(a) never-matching SECONDLY rule, 400-year check: ${((neverMs / never.length) * 1000).toFixed(1)} µs a rule`,
);

// (b)
const berlin = compileSeries({
  Start: '2025-01-01T09:00:00+01:00',
  End: '2025-01-01T10:00:00+01:00',
  StartTimeZone: 'Europe/Berlin',
  Recurrence: { RecurrenceType: 'Daily' },
});
const jumpMs = fastest(() => {
  const found = berlin.occurrencesIn(
    Date.parse('2500-06-01T00:00:00Z'),
    Date.parse('2500-06-02T00:00:00Z'),
    10,
  );
  if (found.length !== 1) throw new Error(`expected one occurrence, found ${found.length}`);
});
console.log(`(b) daily rule from 2025, window on 2500-06-01: ${jumpMs.toFixed(2)} ms`);

// (c)
const rdate = ics(...event('a', `RDATE:${'20270101T090000Z,'.repeat(1_500_000)}20270101T090000Z`));
const rdateMs = fastest(() => importOrRefuse(rdate));
console.log(
  `(c) import refusing a ${(rdate.length / 1e6).toFixed(1)} MB RDATE line: ${rdateMs.toFixed(0)} ms`,
);

// (d)
let seed = 31;
const random = (min, max) => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return min + (seed % (max - min + 1));
};
let worst = { perKib: 0, kib: 0 };
for (let run = 0; run < 8; run++) {
  const parts = {
    events: random(1, 40),
    rdates: random(0, 1_100),
    alarms: random(0, 20),
    unread: random(0, 50),
    unknown: random(0, 2_000),
    lineLength: random(1, 100_000),
  };
  const alarms = Array.from({ length: parts.alarms }, () => 'BEGIN:VALARM\r\nACTION:DISPLAY\r\nEND:VALARM');
  const unread = Array.from({ length: parts.unread }, (_, i) => `ATTENDEE:mailto:${i}@example.com`);
  const one = (i) =>
    event(
      `fuzz-${i}`,
      'RRULE:FREQ=WEEKLY;BYDAY=MO',
      ...(parts.rdates > 0 ? [`RDATE:${dates(parts.rdates)}`] : []),
      `DESCRIPTION:${'d'.repeat(parts.lineLength)}`,
      ...unread,
      ...alarms,
    ).join('\r\n');
  const text = ics(
    Array.from({ length: parts.events }, (_, i) => one(i)).join('\r\n'),
    'BEGIN:FOO\r\nEND:FOO\r\n'.repeat(parts.unknown) + 'X-END:1',
  );
  const kib = text.length / 1024;
  const perKib = fastest(() => importOrRefuse(text)) / kib;
  if (perKib > worst.perKib) worst = { perKib, kib };
}
console.log(
  `(d) generated calendars, 8 shapes: worst ${(worst.perKib * 1000).toFixed(1)} µs per KiB (a ${worst.kib.toFixed(0)} KiB calendar)`,
);
