// Which VEVENTs are one event (RFC 5545 §3.8.4.7 UID, §3.8.4.4 RECURRENCE-ID) and which of several versions of one
// is current (RFC 5546 §2.1.4: the highest SEQUENCE, then the latest DTSTAMP; a tie goes to the later in the file).
// Also the UID an event without one gets, derived from its content so every import of the file derives the same.
import { createHash } from 'node:crypto';
import { paramOf, textOf, type IcalComponent } from './ical-content.js';

export function uidOf(component: IcalComponent): string | undefined {
  const uid = component.properties.find((property) => property.name === 'UID');
  if (uid === undefined) return undefined;
  const text = textOf(uid).trim();
  return text === '' ? undefined : text;
}

/**
 * A UID for a VEVENT without one (Exchange OWA wrote none): SHA-256 of its DTSTART, SUMMARY and RRULE lines, so the
 * same event gets the same UID in every import of the file (and two copies of it are versions of one event).
 */
export function derivedUid(event: IcalComponent): string {
  const hash = createHash('sha256');
  for (const name of ['DTSTART', 'SUMMARY', 'RRULE']) {
    for (const property of event.properties) {
      if (property.name !== name) continue;
      hash.update(`${name};${JSON.stringify(property.params)}:${property.raw.trim()}\n`);
    }
  }
  return `${hash.digest('hex').slice(0, 32)}@derived-uid.platform-api`;
}

/** SEQUENCE (RFC 5545 §3.8.7.4), 0 when absent or not a number. */
export function sequenceOf(component: IcalComponent): number {
  const property = component.properties.find((candidate) => candidate.name === 'SEQUENCE');
  const value = property === undefined ? NaN : Number.parseInt(property.raw.trim(), 10);
  return Number.isFinite(value) ? value : 0;
}

/** DTSTAMP as written (a UTC date-time, so the text orders like the instant); '' when absent. */
function stampOf(component: IcalComponent): string {
  const property = component.properties.find((candidate) => candidate.name === 'DTSTAMP');
  return property === undefined ? '' : property.raw.trim().toUpperCase();
}

/** > 0 when `a` is the newer version: higher SEQUENCE, then later DTSTAMP; 0 on a tie (the later in the file wins). */
export function compareVersions(a: IcalComponent, b: IcalComponent): number {
  const bySequence = sequenceOf(a) - sequenceOf(b);
  if (bySequence !== 0) return bySequence;
  const stampA = stampOf(a);
  const stampB = stampOf(b);
  return stampA === stampB ? 0 : stampA > stampB ? 1 : -1;
}

/** The schedule id this service's export wrote on a VEVENT (`X-PLATFORM-SCHEDULE-ID`), lower-case; undefined if none. */
export function scheduleIdOf(component: IcalComponent): string | undefined {
  const property = component.properties.find((candidate) => candidate.name === 'X-PLATFORM-SCHEDULE-ID');
  const id = property?.raw.trim().toLowerCase();
  return id !== undefined && SCHEDULE_ID.test(id) ? id : undefined;
}

const SCHEDULE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** DTSTART as written, with its TZID: masters with one UID and one start may be versions of one event. */
export function writtenStart(component: IcalComponent): string | undefined {
  const property = component.properties.find((candidate) => candidate.name === 'DTSTART');
  return property === undefined ? undefined : `${paramOf(property, 'tzid') ?? ''}|${property.raw.trim()}`;
}

/** SUMMARY and LOCATION as written: what tells two events apart that a feed gave one UID and one start. */
function contentOf(component: IcalComponent): string {
  return ['SUMMARY', 'LOCATION']
    .map((name) => component.properties.find((candidate) => candidate.name === name)?.raw.trim() ?? '')
    .join('\n');
}

/**
 * Two masters with one UID: the same event (versions) or two events a feed gave one UID (see `entriesOf`). Masters
 * this service exported from two schedules are two events. Otherwise a different SEQUENCE makes them versions, a
 * different DTSTART two events; with the same SEQUENCE and DTSTART, a different DTSTAMP makes them versions (an edit
 * that did not move the event), and masters of one SEQUENCE and DTSTAMP that differ in SUMMARY or LOCATION are
 * parallel events (a conference feed giving its talks one UID): neither can be the newer.
 */
export function isVersionOf(a: IcalComponent, b: IcalComponent): boolean {
  const idA = scheduleIdOf(a);
  const idB = scheduleIdOf(b);
  if (idA !== undefined && idB !== undefined && idA !== idB) return false;
  if (sequenceOf(a) !== sequenceOf(b)) return true;
  if (writtenStart(a) !== writtenStart(b)) return false;
  return stampOf(a) !== stampOf(b) || contentOf(a) === contentOf(b);
}
