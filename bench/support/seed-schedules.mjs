// Schedules inserted straight into the tables (the entities of the built service, 500 per INSERT, one
// transaction), each like a typical stored one: 1 item, a weekly rule (FREQ=WEEKLY;BYDAY=MO,WE,FR, 09:00
// Europe/Berlin, first occurrences spread over 2020–2026 by a fixed pseudo-random sequence) and 1 exception (a
// deleted occurrence), created 1 ms apart so their list order is known. Returns every id in list order.
import { randomUUID } from 'node:crypto';

const BATCH = 500;

export async function seedSchedules(dist, dataSource, count) {
  const { Schedule, ScheduleItem, Recurrence, RecurrenceException } = await import(
    dist('src/schedules/entities/schedule.entity.js')
  );
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const epoch = Date.UTC(2026, 0, 1);
  const ids = [];
  await dataSource.transaction(async (manager) => {
    for (let start = 0; start < count; start += BATCH) {
      const rows = { schedules: [], items: [], recurrences: [], exceptions: [] };
      for (let index = start; index < Math.min(start + BATCH, count); index++) {
        const firstDay = Date.UTC(2020, 0, 6) + Math.floor(random() * 7 * 52) * 7 * 86_400_000; // a Monday
        const day = new Date(firstDay).toISOString().slice(0, 10);
        const [id, itemId, recurrenceId] = [randomUUID(), randomUUID(), randomUUID()];
        ids.push(id);
        rows.schedules.push({ id, version: 1, createdAt: new Date(epoch + index) });
        rows.items.push({
          id: itemId,
          scheduleId: id,
          position: 0,
          name: `Schedule ${index}`,
          start: `${day}T09:00:00`,
          end: `${day}T09:30:00`,
          startTimeZone: 'Europe/Berlin',
        });
        rows.recurrences.push({
          id: recurrenceId,
          scheduleItemId: itemId,
          startTime: null,
          endTime: null,
          offset: null,
          endCount: null,
          recurrenceType: 'Weekly',
          interval: '1',
          duration: null,
          pattern: 'FREQ=WEEKLY;BYDAY=MO,WE,FR',
          recurrenceDates: null,
          exceptionDates: null,
        });
        rows.exceptions.push({
          id: randomUUID(),
          recurrenceId,
          position: 0,
          originalTime: `${new Date(firstDay + 7 * 86_400_000).toISOString().slice(0, 10)}T09:00:00`,
          isDeleted: true,
          newStart: null,
          newEnd: null,
          newStartTime: null,
          newEndTime: null,
        });
      }
      await manager.insert(Schedule, rows.schedules);
      await manager.insert(ScheduleItem, rows.items);
      await manager.insert(Recurrence, rows.recurrences);
      await manager.insert(RecurrenceException, rows.exceptions);
    }
  });
  return ids;
}
