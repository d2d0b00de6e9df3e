import { Controller, Get, Header, type OnModuleDestroy, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Counter, Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { Public, RequireScope } from '../auth/scopes.js';
import { DatabaseHealth } from '../database/database-health.js';
import { portableQuery } from '../database/portable-sql.js';
import { ReadinessConnection } from '../database/readiness-connection.js';
import { sqliteHasRoom, sqliteWritable } from '../database/storage-room.js';
import { PlatformError, PlatformErrorCode } from '../errors/api-error.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { ShutdownState } from './shutdown-state.js';

/** A durable one-row write (the rate-limit table exists on both engines; the key is never a client's bucket). */
const STORAGE_PROBE_KEY = 'platform:storage-probe';
const STORAGE_PROBE =
  'INSERT INTO rate_limits (key, points, expire) VALUES ($1, 0, $2) ON CONFLICT (key) DO UPDATE SET expire = excluded.expire';

@ApiExcludeController()
@Controller()
export class HealthController implements OnModuleDestroy {
  /** Not the pool: readiness is not queued behind the requests' work (readiness-connection.ts). */
  private readonly probe: ReadinessConnection;

  constructor(
    private readonly dataSource: DataSource,
    private readonly metrics: MetricsService,
    private readonly shutdown: ShutdownState,
    private readonly database: DatabaseHealth,
  ) {
    this.probe = new ReadinessConnection(dataSource);
    metrics.registry.registerMetric(
      new Gauge({
        name: 'platform_database_available',
        help: '1 while the database answers; 0 from the first failure to reach it until a statement succeeds again',
        registers: [],
        collect() {
          this.set(database.reachable ? 1 : 0);
        },
      }),
    );
    // As readiness sees it: on SQLite the data folder's free space counts too, so a small background write (the
    // audit fold) that fits into room the WAL already has does not show a storage as fine while readiness is 503.
    const sqliteFull = () => {
      const file = this.sqliteFile();
      return file !== undefined && !sqliteHasRoom(file);
    };
    metrics.registry.registerMetric(
      new Gauge({
        name: 'platform_database_storage_full',
        help:
          '1 from a write that failed for a full storage until a write succeeds again; on SQLite also while the ' +
          'data folder has under 1 MiB free',
        registers: [],
        collect() {
          this.set(database.storageFull || sqliteFull() ? 1 : 0);
        },
      }),
    );
    metrics.registry.registerMetric(
      new Counter({
        name: 'platform_database_failures_total',
        help: 'Statements that failed for the database, not the request (kind: unavailable, storage-full, busy: a lock wait past its limit)',
        labelNames: ['kind'],
        registers: [],
        collect() {
          this.reset();
          for (const kind of ['unavailable', 'storage-full', 'busy'] as const)
            this.inc({ kind }, database.failureCount(kind));
        },
      }),
    );
  }

  async onModuleDestroy(): Promise<void> {
    await this.probe.close();
  }

  /** The process is up and serving. */
  @Public()
  @Get('health/live')
  live(): { Status: string } {
    return { Status: 'Live' };
  }

  /**
   * The process can do its work: it is not shutting down, the database answers (over a connection of its own, so
   * neither a pool busy with requests nor a lock on one table makes the instance unready), and its storage takes writes
   * (on SQLite the data folder is writable and has 1 MiB free — checked every time, so a full or read-only disk
   * shows here before a write fails on it; after a write failed for a full storage, one small write here shows whether space is back —
   * otherwise a balancer that sends nothing to an unready instance would never let a client's write show it).
   */
  @Public()
  @Get('health/ready')
  async ready(): Promise<{ Status: string; Database: string }> {
    if (this.shutdown.draining) {
      throw new PlatformError(PlatformErrorCode.ServiceUnavailable, 'The instance is shutting down.');
    }
    if (this.database.fileLost !== undefined) {
      throw new PlatformError(
        PlatformErrorCode.ServiceUnavailable,
        'The database file was removed or replaced under this instance; it must be restarted.',
      );
    }
    try {
      await this.probe.check();
    } catch {
      throw new PlatformError(PlatformErrorCode.ServiceUnavailable, 'The database is not reachable.');
    }
    // On SQLite a write that failed half-way leaves room in the WAL that the probe's one row fits into while
    // ordinary writes still fail: the file system's free space is asked first, and always.
    const file = this.sqliteFile();
    if (!sqliteWritable(file)) {
      throw new PlatformError(PlatformErrorCode.ServiceUnavailable, "The database's storage is read-only.");
    }
    if (!sqliteHasRoom(file)) {
      throw new PlatformError(PlatformErrorCode.ServiceUnavailable, "The database's storage is full.");
    }
    if (this.database.storageFull) {
      try {
        await portableQuery(this.dataSource, STORAGE_PROBE, [STORAGE_PROBE_KEY, Date.now()]);
      } catch {
        throw new PlatformError(PlatformErrorCode.ServiceUnavailable, "The database's storage is full.");
      }
    }
    return { Status: 'Ready', Database: this.dataSource.options.type };
  }

  /** The SQLite database file; undefined on PostgreSQL (whose disk the service cannot see). */
  private sqliteFile(): unknown {
    return this.dataSource.options.type === 'better-sqlite3' ? this.dataSource.options.database : undefined;
  }

  /** Prometheus exposition; needs an admin key unless METRICS_PUBLIC=true. */
  @RequireScope('admin', { publicWhen: (config) => config.metricsPublic })
  @Get('metrics')
  @Header('Cache-Control', 'no-store')
  async metricsText(@Res() reply: FastifyReply): Promise<void> {
    const body = await this.metrics.registry.metrics();
    await reply.header('Content-Type', this.metrics.registry.contentType).send(body);
  }
}
