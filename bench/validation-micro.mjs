// Micro-benchmark of request validation on a ~1 KB nested body: the compiled DTO validator (src/validation) against
// class-transformer.plainToInstance + class-validator.validateSync (what Nest's ValidationPipe does), and ajv on the
// exported jsonSchema (what raw Fastify does). Runs on the compiled output: `npm run build && node bench/validation-micro.mjs`
// (VALIDATION_DIST=<dir containing compile-dto.js> points it at another build).
import 'reflect-metadata';
import { Type, plainToInstance } from 'class-transformer';
import {
  ArrayMinSize,
  IsArray,
  IsISO8601,
  IsNotEmpty,
  IsString,
  IsUUID,
  ValidateNested,
  validateSync,
} from 'class-validator';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';

const dist = process.env.VALIDATION_DIST
  ? pathToFileURL(`${process.env.VALIDATION_DIST.replace(/\/$/, '')}/`)
  : new URL('../dist/src/validation/', import.meta.url);
const { compileDto } = await import(new URL('compile-dto.js', dist).href);

/** Applies property decorators the way TypeScript's emitted __decorate does (last listed runs first). */
function decorate(cls, prop, ...decorators) {
  for (let i = decorators.length - 1; i >= 0; i--) decorators[i](cls.prototype, prop);
}

class GroupDto {}
decorate(GroupDto, 'Key', IsString(), IsNotEmpty());
decorate(GroupDto, 'ScheduleIds', IsArray(), ArrayMinSize(1), IsUUID(undefined, { each: true }));

class CheckDto {}
decorate(CheckDto, 'Start', IsISO8601());
decorate(CheckDto, 'End', IsISO8601());
decorate(
  CheckDto,
  'Groups',
  IsArray(),
  ArrayMinSize(1),
  ValidateNested({ each: true }),
  Type(() => GroupDto),
);

const body = {
  Groups: Array.from({ length: 5 }, (_, i) => ({
    Key: `group-${i}`,
    ScheduleIds: Array.from({ length: 4 }, () => randomUUID()),
  })),
  Start: '2026-01-01T00:00:00Z',
  End: '2026-01-02T00:00:00Z',
};
const camelBody = {
  groups: body.Groups.map((g) => ({ key: g.Key, scheduleIds: g.ScheduleIds })),
  start: body.Start,
  end: body.End,
};
const badBody = {
  ...body,
  Start: 'soon',
  Groups: [...body.Groups.slice(1), { Key: '', ScheduleIds: ['x'] }],
};

const compiled = compileDto(CheckDto);
const ajv = new Ajv({ allErrors: true });
addFormats(ajv);
const ajvValidate = ajv.compile(compiled.jsonSchema);

const classValidator = (input) =>
  validateSync(plainToInstance(CheckDto, input), { whitelist: true, forbidNonWhitelisted: true }).length ===
  0;

// Sanity: every contender agrees before it is timed.
const expectations = [
  ['compiled', (b) => compiled.validate(b).ok],
  ['class-validator', classValidator],
];
for (const [name, fn] of expectations) {
  if (fn(body) !== true || fn(badBody) !== false) throw new Error(`${name} disagrees on the sample bodies`);
}
if (
  compiled.validate(camelBody).ok !== true ||
  ajvValidate(body) !== true ||
  ajvValidate(badBody) !== false
) {
  throw new Error('sample bodies misjudged');
}

let sink = 0;
function measure(fn, input, ms = 1000) {
  for (let i = 0; i < 2000; i++) sink += fn(input) ? 1 : 0; // warm-up
  let ops = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    for (let i = 0; i < 100; i++) sink += fn(input) ? 1 : 0;
    ops += 100;
  }
  return (ops * 1000) / ms;
}
function median3(fn, input) {
  const runs = [measure(fn, input), measure(fn, input), measure(fn, input)].sort((a, b) => a - b);
  return runs[1];
}

const rows = [
  ['compiled validate(), PascalCase body', (b) => compiled.validate(b).ok, body],
  ['compiled validate(), camelCase body', (b) => compiled.validate(b).ok, camelBody],
  ['compiled validate(), invalid body (3 errors)', (b) => compiled.validate(b).ok, badBody],
  ['plainToInstance + validateSync', classValidator, body],
  ['plainToInstance + validateSync, invalid body', classValidator, badBody],
  ['ajv on jsonSchema (raw Fastify)', (b) => ajvValidate(b), body],
];

console.log(`node ${process.version}, body ${JSON.stringify(body).length} bytes (JSON)`);
const results = rows.map(([name, fn, input]) => [name, median3(fn, input)]);
const baseline = results.find(([name]) => name === 'plainToInstance + validateSync')[1];
for (const [name, opsPerSec] of results) {
  console.log(
    `${name.padEnd(48)} ${Math.round(opsPerSec).toLocaleString('en-US').padStart(12)} ops/s  ${(opsPerSec / baseline).toFixed(1).padStart(6)}x`,
  );
}
if (sink < 0) console.log(sink);
