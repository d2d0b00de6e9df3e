// Schedule CRUD (DESIGN §3). Every write is validated by compiling it with the recurrence engine first and is
// stored in one transaction, so a rejected or failed write leaves nothing behind.
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, type Repository } from 'typeorm';
import type { FieldError } from '../errors/api-error.js';
import type { ScheduleDto, ScheduleInput } from './dto/schedule.dto.js';
import { Schedule, ScheduleItem } from './entities/schedule.entity.js';
import { compileSeries, RecurrenceError } from './recurrence/index.js';
import { toItemEntities, toScheduleDto } from './schedule-mapping.js';
import { ScheduleError } from './schedules.errors.js';
import { SeriesCache } from './series-cache.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface WriteResult {
  schedule: ScheduleDto;
  /** Says which exceptions match no occurrence (they are stored but have no effect). */
  message: string | null;
}

export interface SchedulePage {
  schedules: ScheduleDto[];
  pageIndex: number;
  totalPages: number;
}

@Injectable()
export class SchedulesService {
  constructor(
    private readonly dataSource: DataSource,
    @InjectRepository(Schedule) private readonly schedules: Repository<Schedule>,
    private readonly cache: SeriesCache,
  ) {}

  async create(input: ScheduleInput): Promise<WriteResult> {
    const message = checkItems(input);
    const schedule = Object.assign(new Schedule(), { id: randomUUID(), version: 1, createdAt: new Date() });
    schedule.items = toItemEntities(schedule.id, input.ScheduleItems, randomUUID);
    await this.dataSource.transaction((manager) => manager.getRepository(Schedule).save(schedule));
    return { schedule: toScheduleDto(schedule), message };
  }

  async get(id: string): Promise<ScheduleDto> {
    return toScheduleDto(await this.load(id));
  }

  async list(pageIndex: number, pageSize: number): Promise<SchedulePage> {
    const [page, total] = await this.schedules.findAndCount({
      order: { createdAt: 'ASC', id: 'ASC' },
      skip: (pageIndex - 1) * pageSize,
      take: pageSize,
    });
    const full =
      page.length === 0
        ? []
        : await this.schedules.find({
            where: page.map((schedule) => ({ id: schedule.id })),
            relations: { items: { recurrences: { exceptions: true } } },
          });
    const byId = new Map(full.map((schedule) => [schedule.id, schedule]));
    return {
      schedules: page.map((schedule) => toScheduleDto(byId.get(schedule.id)!)),
      pageIndex,
      totalPages: Math.ceil(total / pageSize),
    };
  }

  async replace(id: string, input: ScheduleInput): Promise<WriteResult> {
    const message = checkItems(input);
    const schedule = await this.dataSource.transaction(async (manager) => {
      const repository = manager.getRepository(Schedule);
      const existing = await repository.findOne({ where: { id: normalizeId(id) } });
      if (!existing) throw ScheduleError.notFound(id);
      // Children cascade from their items; the new item set replaces the old one whole.
      await manager.getRepository(ScheduleItem).delete({ scheduleId: existing.id });
      existing.version += 1;
      existing.items = toItemEntities(existing.id, input.ScheduleItems, randomUUID);
      return repository.save(existing);
    });
    this.cache.forget(schedule.id);
    return { schedule: toScheduleDto(schedule), message };
  }

  async remove(id: string): Promise<void> {
    const result = await this.schedules.delete({ id: normalizeId(id) });
    if (!result.affected) throw ScheduleError.notFound(id);
    this.cache.forget(normalizeId(id));
  }

  private async load(id: string): Promise<Schedule> {
    const schedule = await this.schedules.findOne({
      where: { id: normalizeId(id) },
      relations: { items: { recurrences: { exceptions: true } } },
    });
    if (!schedule) throw ScheduleError.notFound(id);
    return schedule;
  }
}

export function normalizeId(id: string): string {
  if (!GUID.test(id)) {
    throw ScheduleError.invalid([{ Field: 'id', Message: `id must be a GUID, got "${id.slice(0, 60)}"` }]);
  }
  return id.toLowerCase();
}

/** Compiles every item (all errors at once, with their paths); returns the unmatched-exception message. */
function checkItems(input: ScheduleInput): string | null {
  const errors: FieldError[] = [];
  const unmatched: string[] = [];
  input.ScheduleItems.forEach((item, index) => {
    try {
      const series = compileSeries(item);
      for (const exception of series.unmatchedExceptions) {
        unmatched.push(`ScheduleItems[${index}].Recurrence.Exceptions[${exception}]`);
      }
    } catch (error) {
      if (!(error instanceof RecurrenceError)) throw error;
      errors.push({
        Field: `ScheduleItems[${index}].${error.field}`,
        Message: `${error.field} ${error.message}`,
      });
    }
  });
  if (errors.length > 0) throw ScheduleError.invalid(errors);
  return unmatched.length === 0
    ? null
    : `Stored, but these exceptions match no occurrence and have no effect: ${unmatched.join(', ')}.`;
}
