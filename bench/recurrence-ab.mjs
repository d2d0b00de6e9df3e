// Two builds of the recurrence engine on the same rules and windows:
//   node bench/recurrence-ab.mjs <dist of build A> <dist of build B>
// e.g. after `git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci && npx nest build)`:
//   node bench/recurrence-ab.mjs /tmp/before/dist dist
// 10,000 rules FREQ=WEEKLY;BYDAY=MO,WE,FR in Europe/Berlin (DTSTART 2020–2026, seeded), one hour each, one random
// 1-hour window of 2026 per rule: hasOccurrenceIn rules/s for each build. 30 passes alternating which build goes
// first, the first pair dropped as warm-up; the figure is each build's median pass. Used to check that a change
// costs nothing on rules that do not use it (RDATE/EXDATE).
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [distA, distB] = process.argv.slice(2);
if (!distA || !distB) {
  console.error('usage: node bench/recurrence-ab.mjs <dist A> <dist B>');
  process.exit(2);
}
const load = (dist) => import(pathToFileURL(path.resolve(dist, 'src/schedules/recurrence/index.js')).href);
const engines = { A: await load(distA), B: await load(distB) };

const RULES = 10_000;
const HOUR = 3_600_000;
const YEAR_START = Date.UTC(2026, 0, 1);
let seed = 12_345;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const items = Array.from({ length: RULES }, () => {
  const start = Date.UTC(2020, 0, 1) + Math.floor(random() * 6 * 365) * 86_400_000 + 8 * HOUR;
  return {
    Start: new Date(start).toISOString(),
    End: new Date(start + HOUR).toISOString(),
    StartTimeZone: 'Europe/Berlin',
    Recurrence: { Pattern: 'FREQ=WEEKLY;BYDAY=MO,WE,FR' },
  };
});
const windows = Array.from({ length: RULES }, () => YEAR_START + Math.floor(random() * 365 * 24) * HOUR);
const series = {
  A: items.map((i) => engines.A.compileSeries(i)),
  B: items.map((i) => engines.B.compileSeries(i)),
};
const rates = { A: [], B: [] };
const hits = { A: 0, B: 0 };
for (let pass = 0; pass < 30; pass++) {
  for (const build of pass % 2 ? ['A', 'B'] : ['B', 'A']) {
    const began = performance.now();
    let found = 0;
    for (let i = 0; i < RULES; i++)
      if (series[build][i].hasOccurrenceIn(windows[i], windows[i] + HOUR)) found++;
    const seconds = (performance.now() - began) / 1000;
    hits[build] = found;
    if (pass >= 2) rates[build].push(RULES / seconds);
  }
}
if (hits.A !== hits.B)
  throw new Error(`the builds disagree: ${hits.A} vs ${hits.B} windows with an occurrence`);
const median = (values) => values.sort((a, b) => a - b)[values.length >> 1];
const fmt = (n) => Math.round(n).toLocaleString('en-US');
console.log(
  `hasOccurrenceIn, 10,000 weekly rules, 1-hour windows of 2026 (median of 28 alternating passes): ` +
    `A ${fmt(median(rates.A))} rules/s, B ${fmt(median(rates.B))} rules/s (B/A ${(median(rates.B) / median(rates.A)).toFixed(2)})`,
);
