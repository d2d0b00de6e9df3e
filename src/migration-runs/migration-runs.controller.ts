import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { NamesTenant, RequireScope } from '../auth/scopes.js';
import { ApiErrorResponses } from '../openapi/api-error-responses.js';
import {
  GetMigrationRunsRequest,
  MigrationDetailsRequest,
  MigrationRunsResponse,
} from './dto/migration-runs.dto.js';
import { MigrationRunsService } from './migration-runs.service.js';

@ApiTags('Migration')
@ApiBearerAuth()
@ApiErrorResponses()
@RequireScope('migrations')
@NamesTenant()
@Controller('api/v1/migration')
export class MigrationRunsController {
  constructor(private readonly service: MigrationRunsService) {}

  @Post('getMigrationRuns')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'Migration_GetMigrationRuns',
    summary: 'Runs of a migration (or of all), newest first',
    description:
      'Unknown MigrationId: Succeeded:false, Code "MigrationNotFound". Data is null in this answer.',
  })
  @ApiOkResponse({ type: MigrationRunsResponse })
  async getMigrationRuns(@Body() body: GetMigrationRunsRequest): Promise<MigrationRunsResponse> {
    const runs = await this.service.list(body.MigrationId);
    return { Succeeded: true, Message: null, Code: null, MigrationRuns: runs };
  }

  @Post('details')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'Migration_Details',
    summary: 'Runs of a migration with their details (duration, trigger, host, version, checksum, error)',
  })
  @ApiOkResponse({ type: MigrationRunsResponse })
  async details(@Body() body: MigrationDetailsRequest): Promise<MigrationRunsResponse> {
    const runs = await this.service.details(body.MigrationId);
    return { Succeeded: true, Message: null, Code: null, MigrationRuns: runs };
  }
}
