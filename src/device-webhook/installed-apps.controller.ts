import { Controller, Get, Param, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { NamesTenant, RequireScope } from '../auth/scopes.js';
import { ApiErrorResponses, ErrorEnvelopeDto } from '../openapi/api-error-responses.js';
import { WebhookError } from './device-webhook.errors.js';
import { DeviceEventsQuery, DeviceEventsResponse, InstalledAppsResponse } from './dto/installed-apps.dto.js';
import { InstalledAppStore } from './installed-app.store.js';
import { installedAppView, receivedEventView } from './installed-apps.views.js';
import { DOMAIN_PARAM, normaliseDomain } from './webhook-domain.js';

@ApiTags('Webhook')
@ApiBearerAuth()
@ApiErrorResponses()
@RequireScope('admin')
@NamesTenant()
@Controller('api/v1/webhook/homeprovider/:domain/installedapps')
export class InstalledAppsController {
  constructor(private readonly store: InstalledAppStore) {}

  @Get()
  @ApiOperation({
    operationId: 'Webhook_ListInstalledApps',
    summary: "The domain's installed apps (config, permissions; never the tokens)",
  })
  @ApiParam(DOMAIN_PARAM)
  @ApiOkResponse({ type: InstalledAppsResponse })
  async list(@Param('domain') domainParam: string): Promise<InstalledAppsResponse> {
    const rows = await this.store.list(normaliseDomain(domainParam));
    return { Succeeded: true, Message: null, Code: null, InstalledApps: rows.map(installedAppView) };
  }

  @Get(':installedAppId/events')
  @ApiOperation({
    operationId: 'Webhook_ListDeviceEvents',
    summary: 'Events an installed app received, newest first (each event id once)',
    description:
      "Unknown installed app: 404 InstalledAppNotFound. Installed apps are made by SmartThings' signed INSTALL " +
      'lifecycle, so on an instance SmartThings never called every id is answered 404 InstalledAppNotFound.',
  })
  @ApiParam(DOMAIN_PARAM)
  @ApiParam({
    name: 'installedAppId',
    description: "SmartThings' id of the installation (see the list above).",
  })
  @ApiOkResponse({ type: DeviceEventsResponse })
  @ApiNotFoundResponse({ description: 'InstalledAppNotFound', type: ErrorEnvelopeDto })
  async events(
    @Param('domain') domainParam: string,
    @Param('installedAppId') installedAppId: string,
    @Query() query: DeviceEventsQuery,
  ): Promise<DeviceEventsResponse> {
    const ref = { domain: normaliseDomain(domainParam), installedAppId };
    if ((await this.store.find(ref)) === null)
      throw WebhookError.installedAppNotFound(ref.domain, installedAppId);
    const pageIndex = query.PageIndex ?? 1;
    const pageSize = query.PageSize ?? 50;
    const [rows, total] = await this.store.listEvents(ref, pageIndex, pageSize);
    const totalPages = Math.ceil(total / pageSize);
    return {
      Succeeded: true,
      Message: null,
      Code: null,
      InstalledAppId: installedAppId,
      Events: rows.map(receivedEventView),
      PageIndex: pageIndex,
      PageSize: pageSize,
      TotalCount: total,
      TotalPages: totalPages,
      HasPreviousPage: pageIndex > 1,
      HasNextPage: pageIndex < totalPages,
    };
  }
}
