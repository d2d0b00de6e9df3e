// Small builders for schedule bodies; each test states only what it cares about.
type Json = Record<string, unknown>;

export function scheduleItem(overrides: Json = {}): Json {
  return {
    Name: 'Stand-up',
    Start: '2026-01-05T09:00:00+01:00',
    End: '2026-01-05T09:15:00+01:00',
    StartTimeZone: 'Europe/Berlin',
    Recurrence: { RecurrenceType: 'Weekly', Interval: '1', Pattern: 'FREQ=WEEKLY;BYDAY=MO,WE,FR' },
    ...overrides,
  };
}

export function scheduleBody(...items: Json[]): Json {
  return { ScheduleItems: items.length > 0 ? items : [scheduleItem()] };
}

export function oneOff(start: string, end: string): Json {
  return { Name: 'one-off', Start: start, End: end, StartTimeZone: null, Recurrence: null };
}
