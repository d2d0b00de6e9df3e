import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import type { MigrationRunDto } from './dto/migration-runs.dto.js';
import { MigrationRun, MigrationRunStatus } from '../database/migration-run.entity.js';
import { MigrationRunner } from '../database/migration-runner.js';
import { MigrationRunsError } from './migration-runs.errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

@Injectable()
export class MigrationRunsService {
  constructor(
    @InjectRepository(MigrationRun) private readonly runs: Repository<MigrationRun>,
    private readonly runner: MigrationRunner,
  ) {}

  /** Operation 8: the runs of one migration (or of all when null), newest first, without details. */
  async list(migrationId: string | null | undefined): Promise<MigrationRunDto[]> {
    const name = migrationId?.trim() || undefined;
    const rows = await this.runs.find({
      where: name === undefined ? {} : { migration: name },
      order: { startedAt: 'DESC', id: 'ASC' },
    });
    if (name !== undefined && rows.length === 0 && !this.isKnownMigration(name))
      throw MigrationRunsError.notFound(name);
    return this.present(rows, false);
  }

  /** Operation 7: with details. `migrationId` is a migration name (all its runs) or one run's Id. */
  async details(migrationId: string): Promise<MigrationRunDto[]> {
    const id = migrationId.trim();
    if (UUID.test(id)) {
      const run = await this.runs.findOne({ where: { id: id.toLowerCase() } });
      if (run) return this.present([run], true);
    }
    const rows = await this.runs.find({ where: { migration: id }, order: { startedAt: 'DESC', id: 'ASC' } });
    if (rows.length === 0 && !this.isKnownMigration(id)) throw MigrationRunsError.notFound(id);
    return this.present(rows, true);
  }

  private isKnownMigration(name: string): boolean {
    return this.runner.migrations.some((migration) => migration.name === name);
  }

  private async present(rows: MigrationRun[], withDetails: boolean): Promise<MigrationRunDto[]> {
    // A Running row while nobody holds the migration lock belongs to a process that died.
    const abandoned =
      rows.some((row) => row.status === MigrationRunStatus.Running) && !(await this.runner.isLocked());
    return rows.map((row) => {
      const status =
        abandoned && row.status === MigrationRunStatus.Running ? MigrationRunStatus.Abandoned : row.status;
      return {
        Id: row.id,
        Migration: row.migration,
        MigrationSource: row.migrationSource,
        TimeStamp: row.startedAt.toISOString(),
        Status: status,
        Data: withDetails ? { ...row.details } : null,
      };
    });
  }
}
