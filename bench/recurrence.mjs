// Recurrence engine benchmark: `npm run build && node bench/recurrence.mjs`.
//
// 10,000 rules FREQ=WEEKLY;BYDAY=MO,WE,FR in Europe/Berlin, DTSTART spread over 2020–2026 (seeded), one hour
// each. Measures, in the same process and on the same rules and windows:
//   (a) "any occurrence in a 1-hour window of 2026": rules/s (one query per rule, a different random window each);
//   (b) full expansion over 2026: rules/s and occurrences/s;
// for this engine and, when they can be imported, rrule-temporal, rrule-rust and rrule (rrule.js with TZID).
// Rule objects are built before timing for every library (compiling is reported separately for ours). The timed
// passes of the libraries are interleaved (ours, rrule-temporal, rrule-rust, ours, …) so that load from other
// processes hits all of them alike; each figure is the median pass after one warm-up round. Memory per compiled
// rule is the heap delta after GC divided by the rule count.
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const RULES = 10_000;
const ROUNDS = 11;
// Full expansion is slow for rrule-temporal (seconds per pass), so it gets fewer rounds.
const EXPANSION_ROUNDS = 5;
const ZONE = 'Europe/Berlin';
const RRULE = 'FREQ=WEEKLY;BYDAY=MO,WE,FR';
const HOUR = 3_600_000;
const YEAR_START = Date.UTC(2026, 0, 1);
const YEAR_END = Date.UTC(2027, 0, 1);
const RRULE_JS_SAMPLE = 20;

const engine = await import('../dist/src/schedules/recurrence/index.js').catch((error) => {
  console.error(
    `Cannot load dist/src/schedules/recurrence/index.js (run \`npm run build\` first): ${error.message}`,
  );
  process.exit(1);
});

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pad = (n) => String(n).padStart(2, '0');
const random = mulberry32(20260101);

// DTSTART on a Monday, Wednesday or Friday so that every library agrees on the first occurrence.
const rules = [];
for (let i = 0; i < RULES; i++) {
  let day = Date.UTC(2020, 0, 1) + Math.floor(random() * 7 * 365) * 86_400_000;
  while (![1, 3, 5].includes(new Date(day).getUTCDay())) day += 86_400_000;
  const d = new Date(day);
  const hour = 7 + Math.floor(random() * 11);
  const minute = 15 * Math.floor(random() * 4);
  rules.push({
    local: `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(hour)}:${pad(minute)}:00`,
    basic: `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}T${pad(hour)}${pad(minute)}00`,
  });
}
// One set of window starts (quarter-hour aligned, anywhere in 2026) per round.
const windowSets = Array.from({ length: ROUNDS }, () =>
  Array.from({ length: RULES }, () => YEAR_START + Math.floor(random() * 365 * 24 * 4) * 15 * 60_000),
);

const fmt = (n) => Math.round(n).toLocaleString('en-US');
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

// Each contender: window(windows, i) answers "any occurrence" for rule i; expand(i) counts its 2026 occurrences.
const contenders = [];
const skipped = [];

const items = rules.map((r) => ({
  StartTimeZone: ZONE,
  Recurrence: { StartTime: r.local, Duration: 'PT1H', Pattern: RRULE },
}));
const compileBegan = performance.now();
const compiled = items.map((item) => engine.compileSeries(item));
const compileSeconds = (performance.now() - compileBegan) / 1000;
contenders.push({
  name: 'this engine',
  count: RULES,
  window: (windows, i) => compiled[i].hasOccurrenceIn(windows[i], windows[i] + HOUR),
  expand: (i) => compiled[i].occurrencesIn(YEAR_START, YEAR_END, 10_000).length,
});

// The others answer with start times: a 1-hour occurrence overlaps [w, w + 1 h) iff it starts in (w − 1 h, w + 1 h).
try {
  const { RRuleTemporal } = await import('rrule-temporal');
  const built = rules.map(
    (r) => new RRuleTemporal({ rruleString: `DTSTART;TZID=${ZONE}:${r.basic}\nRRULE:${RRULE}` }),
  );
  const after = new Date(YEAR_START);
  const before = new Date(YEAR_END - 1);
  contenders.push({
    name: 'rrule-temporal',
    count: RULES,
    window: (windows, i) =>
      built[i].between(new Date(windows[i] - HOUR + 1), new Date(windows[i] + HOUR - 1), true).length > 0,
    expand: (i) => built[i].between(after, before, true).length,
  });
} catch (error) {
  skipped.push(['rrule-temporal', error.message]);
}

/**
 * rrule-rust ships native binaries for platforms this registry lacks, so the lockfile cannot hold it (npm ci would
 * fail). The benchmark installs it on first use into bench/.deps (git-ignored) from the npm registry.
 */
async function importRruleRust() {
  try {
    return await import('rrule-rust');
  } catch {
    const { execFileSync } = await import('node:child_process');
    const prefix = new URL('./.deps/', import.meta.url);
    const entry = new URL('./node_modules/rrule-rust/dist/node/index.js', prefix);
    const fs = await import('node:fs');
    if (!fs.existsSync(entry)) {
      console.log('installing rrule-rust@3.1.1 into bench/.deps for the comparison …');
      fs.mkdirSync(prefix, { recursive: true });
      execFileSync(
        'npm',
        ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix.pathname, 'rrule-rust@3.1.1'],
        {
          stdio: 'ignore',
        },
      );
    }
    return import(entry.href);
  }
}

try {
  const { RRuleSet, DateTime } = await importRruleRust();
  // rrule-rust memoises between() per set: a repeated call with the same arguments returns its cached answer
  // (~70x faster). Fresh sets are built, untimed, before every timed pass so each pass really computes.
  const build = () =>
    rules.map((r) => RRuleSet.fromString(`DTSTART;TZID=${ZONE}:${r.basic}\nRRULE:${RRULE}`));
  let built = build();
  const after = DateTime.fromDate(new Date(YEAR_START));
  const before = DateTime.fromDate(new Date(YEAR_END - 1000));
  contenders.push({
    name: 'rrule-rust',
    count: RULES,
    beforePass: () => {
      built = build();
    },
    window: (windows, i) =>
      built[i].between(
        DateTime.fromDate(new Date(windows[i] - HOUR + 1000)),
        DateTime.fromDate(new Date(windows[i] + HOUR - 1000)),
        true,
      ).length > 0,
    expand: (i) => built[i].between(after, before, true).length,
  });
} catch (error) {
  skipped.push(['rrule-rust', error.message]);
}

try {
  const rrulePackage = await import('rrule');
  const { rrulestr } = rrulePackage.default ?? rrulePackage;
  // rrule.js converts every date through Intl for TZID rules, so only a small sample of the rules is timed.
  const built = rules
    .slice(0, RRULE_JS_SAMPLE)
    .map((r) => rrulestr(`DTSTART;TZID=${ZONE}:${r.basic}\nRRULE:${RRULE}`));
  contenders.push({
    name: 'rrule.js',
    count: RRULE_JS_SAMPLE,
    window: (windows, i) =>
      built[i].between(new Date(windows[i] - HOUR + 1), new Date(windows[i] + HOUR - 1), true).length > 0,
    expand: (i) => built[i].between(new Date(YEAR_START), new Date(YEAR_END - 1), true).length,
  });
} catch (error) {
  skipped.push(['rrule.js', error.message]);
}

function measure(kind, rounds) {
  const seconds = new Map(contenders.map((c) => [c.name, []]));
  const results = new Map();
  for (let round = 0; round < rounds; round++) {
    const windows = windowSets[round];
    for (const c of contenders) {
      // rrule.js is far too slow for every round; it gets one timed round.
      if (c.count < RULES && round !== 1) continue;
      c.beforePass?.();
      const began = performance.now();
      let result = 0;
      if (kind === 'window') for (let i = 0; i < c.count; i++) result += c.window(windows, i) ? 1 : 0;
      else for (let i = 0; i < c.count; i++) result += c.expand(i);
      const elapsed = (performance.now() - began) / 1000;
      if (round > 0) seconds.get(c.name).push(elapsed);
      results.set(c.name, result);
    }
  }
  return new Map(
    contenders.map((c) => [c.name, { seconds: median(seconds.get(c.name)), result: results.get(c.name) }]),
  );
}

const windowRuns = measure('window', ROUNDS);
const expansionRuns = measure('expansion', EXPANSION_ROUNDS);

function collector() {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc');
}
const gc = collector();
gc();
gc();
const heapBefore = process.memoryUsage().heapUsed;
const kept = items.map((item) => engine.compileSeries(item));
gc();
gc();
const bytesPerRule = (process.memoryUsage().heapUsed - heapBefore) / kept.length;

console.log(`Recurrence benchmark — ${fmt(RULES)} rules ${RRULE} in ${ZONE}, DTSTART 2020–2026 (seeded)`);
console.log(
  `Node ${process.version}; passes interleaved across libraries; median of ${ROUNDS - 1} (a) and ` +
    `${EXPANSION_ROUNDS - 1} (b) rounds after 1 warm-up round; ` +
    'rule objects built before timing.\n',
);
console.log(
  `this engine: compile ${fmt(RULES / compileSeconds)} rules/s (validate + parse, first use of the zone included)`,
);
console.log(
  `this engine: ${fmt(bytesPerRule)} bytes of heap per compiled rule (heap delta after GC / ${fmt(kept.length)})`,
);
for (const [name, message] of skipped) console.log(`${name}: skipped (${message})`);

const rateOf = (name, runs) => {
  const c = contenders.find((x) => x.name === name);
  const run = runs.get(name);
  return c && run ? c.count / run.seconds : undefined;
};

console.log(
  '\n(a) any occurrence in a 1-hour window of 2026 (ours: overlap test with 1-hour occurrences; others: between()',
);
console.log(
  '    over the window widened by the duration, i.e. the same question asked with start times; hits must agree)',
);
const windowAnchor = rateOf('rrule-temporal', windowRuns);
for (const c of contenders) {
  const run = windowRuns.get(c.name);
  const rate = c.count / run.seconds;
  const ratio = windowAnchor ? `  ${(rate / windowAnchor).toFixed(1)}× rrule-temporal` : '';
  const note = c.count < RULES ? `  (first ${c.count} rules, one round)` : '';
  console.log(
    `    ${c.name.padEnd(15)} ${fmt(rate).padStart(12)} rules/s  hits ${run.result}${ratio}${note}`,
  );
}

console.log('\n(b) full expansion over 2026');
const expansionAnchor = rateOf('rrule-rust', expansionRuns);
for (const c of contenders) {
  const run = expansionRuns.get(c.name);
  const rate = c.count / run.seconds;
  const ratio = expansionAnchor ? `  ${(rate / expansionAnchor).toFixed(1)}× rrule-rust` : '';
  const note = c.count < RULES ? `  (first ${c.count} rules, one round)` : '';
  console.log(
    `    ${c.name.padEnd(15)} ${fmt(rate).padStart(12)} rules/s ${fmt(run.result / run.seconds).padStart(13)} occ/s  ` +
      `(${fmt(run.result)} occurrences)${ratio}${note}`,
  );
}
console.log('\nGoals: (a) ≥ 10× rrule-temporal in the same run; (b) ≥ rrule-rust in the same run.');
if (!expansionAnchor)
  console.log('rrule-rust could not be imported, so goal (b) has no same-run anchor in this run.');
