// Memory and work of the iCalendar import under its largest accepted bodies: peak RSS of the service (VmHWM in
// /proc/<pid>/status, its own process) for 1 and for 3 concurrent imports of one calendar that stays under every
// per-event cap (1,300 events × 672 RDATE and 672 EXDATE values, ~29 MB), and the time and answer size of 20,000
// events whose rule never occurs (FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30).
// Run after `npm run build`:  node bench/import-memory.mjs [--events 1300] [--values 672] [--concurrent 1,3]
//   [--secondly 20000] [--dist dist]
// Each figure starts a fresh service (dist/src/main.js) on a fresh SQLite file in a temp folder (or, with
// DATABASE_URL=postgres://…, on that database); extra service settings can be passed as environment variables.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1300' },
    values: { type: 'string', default: '672' },
    concurrent: { type: 'string', default: '1,3' },
    secondly: { type: 'string', default: '20000' },
    dist: { type: 'string', default: 'dist' },
  },
});
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const KEY = 'bench-import-memory-key-0123456789';

/** `n` UTC date-times a day apart from 2027-01-01 09:00, with `hour` as the hour. */
function dates(n, hour) {
  const out = [];
  const start = Date.UTC(2027, 0, 1, hour);
  for (let i = 0; i < n; i++) {
    out.push(
      new Date(start + i * 86_400_000)
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d{3}/, ''),
    );
  }
  return out;
}

/** 80 characters of values a line, folded as a producer would write them. */
function listLines(name, list) {
  const lines = [];
  for (let i = 0; i < list.length; i += 4) lines.push(`${name}:${list.slice(i, i + 4).join(',')}`);
  return lines;
}

/** `events` events of `count` RDATE and `count` EXDATE values each; `pad` characters of DESCRIPTION each. */
export function largeCalendar(events, count, pad = 0) {
  const rdates = listLines('RDATE', dates(count, 9));
  const exdates = listLines('EXDATE', dates(count, 10));
  const description = pad > 0 ? [`DESCRIPTION:${'x'.repeat(pad)}`] : [];
  const parts = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//bench//import-memory//EN'];
  for (let i = 0; i < events; i++) {
    parts.push(
      'BEGIN:VEVENT',
      `UID:memory-${i}@bench`,
      'DTSTART:20270101T090000Z',
      'DTEND:20270101T091500Z',
      'RRULE:FREQ=DAILY',
      ...description,
      ...rdates,
      ...exdates,
      'END:VEVENT',
    );
  }
  parts.push('END:VCALENDAR', '');
  return parts.join('\r\n');
}

export function secondlyCalendar(events) {
  const parts = ['BEGIN:VCALENDAR', 'VERSION:2.0'];
  for (let i = 0; i < events; i++) {
    parts.push(
      'BEGIN:VEVENT',
      `UID:never-${i}@bench`,
      'DTSTART:20260105T090000Z',
      'DTEND:20260105T091500Z',
      'RRULE:FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30',
      'END:VEVENT',
    );
  }
  parts.push('END:VCALENDAR', '');
  return parts.join('\r\n');
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => (port ? resolve(port) : reject(new Error('no port'))));
    });
  });
}

async function startService() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-memory-'));
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(values.dist, 'src', 'main.js')], {
    cwd: ROOT,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dir,
      DATABASE_URL: process.env.DATABASE_URL ?? `sqlite:${path.join(dir, 'bench.db')}`,
      API_KEYS: KEY,
      RATE_LIMIT: '0',
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (i > 600) throw new Error('the service did not get ready');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const status = () => fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status())[1]) * 1024;
  return {
    port,
    rss: () => kib('VmRSS'),
    peak: () => kib('VmHWM'),
    async stop() {
      await new Promise((resolve) => {
        child.once('close', resolve);
        child.kill('SIGTERM');
      });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function post(port, body) {
  const began = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}/api/v1/Schedule/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'text/calendar' },
    body,
  });
  const text = await response.text();
  return {
    status: response.status,
    ms: Math.round(performance.now() - began),
    bytes: Buffer.byteLength(text),
    retryAfter: response.headers.get('retry-after'),
    head: text.slice(0, 240),
  };
}

const MB = (n) => `${(n / 1e6).toFixed(0)} MB`;
console.log(
  `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0].model}, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);

const shapes = [
  // The attack: under every per-event cap (1,000 values), over the per-calendar one (100,000).
  [
    `${values.events} events × ${values.values} RDATE + ${values.values} EXDATE values`,
    Number(values.values),
    0,
  ],
  // The largest calendar of that kind the limits accept: 38 + 38 values an event (98,800), padded to ~29 MB
  // with a DESCRIPTION nobody reads.
  [`${values.events} events × 38 RDATE + 38 EXDATE values, a DESCRIPTION each`, 38, 20_000],
];
for (const [label, count, pad] of shapes) {
  const large = Buffer.from(largeCalendar(Number(values.events), count, pad));
  console.log(`${label}: ${MB(large.length)}`);
  await concurrently(large);
}

async function concurrently(large) {
  for (const n of values.concurrent.split(',').map(Number)) {
    const service = await startService();
    const before = service.rss();
    const answers = await Promise.all(Array.from({ length: n }, () => post(service.port, large)));
    const peak = service.peak();
    console.log(
      `${n} concurrent: RSS before ${MB(before)}, peak ${MB(peak)} (+${MB(peak - before)}); answers ` +
        answers
          .map((a) => `${a.status} in ${a.ms} ms${a.retryAfter ? ` Retry-After ${a.retryAfter}` : ''}`)
          .join(', '),
    );
    for (const a of answers) if (a.status >= 300) console.log(`  ${a.head}`);
    await service.stop();
  }
}

if (Number(values.secondly) > 0) {
  const body = Buffer.from(secondlyCalendar(Number(values.secondly)));
  const service = await startService();
  const answer = await post(service.port, body);
  console.log(
    `${values.secondly} never-occurring SECONDLY rules (${MB(body.length)}): ${answer.status} in ${answer.ms} ms, ` +
      `answer ${answer.bytes.toLocaleString('en')} bytes`,
  );
  await service.stop();
}
