// RFC 5545 §3.6.5 observances written as explicit onsets: a STANDARD or DAYLIGHT with a DTSTART and RDATEs, no
// RRULE (tzurl's and iCalcreator's exports, Outlook's historical zones, khal and python-icalendar). §3.8.5.2 lets one
// RDATE line list several dates (`RDATE:20200329T020000,20210328T020000`), and DTSTART is itself the observance's
// first onset. ical.js (2.2) reads only the first value of each RDATE line and, given RDATEs and no RRULE, skips
// DTSTART: such a zone's offsets come out wrong, and no zone matches them. The import hands ical.js a copy of the
// VTIMEZONE that says the same in the form it reads: one onset per RDATE line, DTSTART repeated as one.
import ICAL from 'ical.js';
import type { IcalComponent } from './ical-content.js';

type JcalProperty = unknown[];
type JcalComponent = [string, JcalProperty[], JcalComponent[]];

/** The VTIMEZONE as an ical.js component whose observances list every onset as an RDATE line of its own. */
export function vtimezoneComponent(vtimezone: IcalComponent): ICAL.Component {
  const [name, properties, observances] = vtimezone.jcal as JcalComponent;
  return new ICAL.Component([name, properties, observances.map(withOnsetsListed)]);
}

function withOnsetsListed(observance: JcalComponent): JcalComponent {
  const [name, properties, components] = observance;
  const rdates = properties.filter((property) => property[0] === 'rdate');
  if (rdates.length === 0) return observance;
  // [name, parameters, type, value1, value2, …] → one [name, parameters, type, value] per value.
  const onsets = rdates.flatMap(([rdate, parameters, type, ...values]) =>
    values.map((value) => [rdate, parameters, type, value]),
  );
  const dtstart = properties.find((property) => property[0] === 'dtstart');
  const ruled = properties.some((property) => property[0] === 'rrule');
  if (dtstart !== undefined && !ruled && !onsets.some((onset) => sameValue(onset[3], dtstart[3]))) {
    onsets.unshift(['rdate', {}, dtstart[2], dtstart[3]]);
  }
  const others = properties.filter((property) => property[0] !== 'rdate');
  return [name, [...others, ...onsets], components];
}

function sameValue(a: unknown, b: unknown): boolean {
  return typeof a === 'string' && typeof b === 'string' && a.replace(/Z$/, '') === b.replace(/Z$/, '');
}
