import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { Public, RequireScope } from '../auth/scopes.js';
import { PlatformError, PlatformErrorCode } from '../errors/api-error.js';
import { MetricsService } from '../http/metrics.service.js';
import { ShutdownState } from './shutdown-state.js';

@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly metrics: MetricsService,
    private readonly shutdown: ShutdownState,
  ) {}

  /** The process is up and serving. */
  @Public()
  @Get('health/live')
  live(): { Status: string } {
    return { Status: 'Live' };
  }

  /** The process can do its work: the database answers, and it is not shutting down. */
  @Public()
  @Get('health/ready')
  async ready(): Promise<{ Status: string; Database: string }> {
    if (this.shutdown.draining) {
      throw new PlatformError(PlatformErrorCode.ServiceUnavailable, 'The instance is shutting down.');
    }
    try {
      await this.dataSource.query('SELECT 1');
    } catch {
      throw new PlatformError(PlatformErrorCode.ServiceUnavailable, 'The database is not reachable.');
    }
    return { Status: 'Ready', Database: this.dataSource.options.type };
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
