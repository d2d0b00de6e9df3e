// Loads many schedules by id in one round of queries, for the iCalendar export of up to 1,000 schedules.
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, type Repository } from 'typeorm';
import type { ScheduleDto } from './dto/schedule.dto.js';
import { Schedule } from './entities/schedule.entity.js';
import { toScheduleDto } from './schedule-mapping.js';

@Injectable()
export class ScheduleReader {
  constructor(@InjectRepository(Schedule) private readonly schedules: Repository<Schedule>) {}

  /** The schedules with these (lower-case) ids, in the order asked; ids without a schedule are left out. */
  async findMany(ids: readonly string[]): Promise<ScheduleDto[]> {
    if (ids.length === 0) return [];
    const found = await this.schedules.find({
      where: { id: In([...ids]) },
      relations: { items: { recurrences: { exceptions: true } } },
      // One query per relation instead of one join whose rows multiply items by exceptions.
      relationLoadStrategy: 'query',
    });
    const byId = new Map(found.map((schedule) => [schedule.id, schedule]));
    return ids.flatMap((id) => {
      const schedule = byId.get(id);
      return schedule ? [toScheduleDto(schedule)] : [];
    });
  }
}
