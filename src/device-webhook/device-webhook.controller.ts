import { Body, Controller, HttpCode, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import {
  ApiBody,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../auth/scopes.js';
import { RouteLimits } from '../http/route-limits.js';
import { Ctx, RequestContext } from '../logging/request-context.js';
import { ApiErrorResponses, ErrorEnvelopeDto } from '../openapi/api-error-responses.js';
import { DeviceWebhookService } from './device-webhook.service.js';
import { DeviceWebhookBody } from './dto/webhook-body.dto.js';
import { replyMediaType } from './smartapp/accept.js';
import { WebhookSignatureGuard } from './webhook-signature.guard.js';

@ApiTags('Webhook')
@Controller('api/v1/webhook/homeprovider')
export class DeviceWebhookController {
  constructor(private readonly service: DeviceWebhookService) {}

  @Post(':domain')
  @HttpCode(200)
  // The signature covers the exact bytes received (its Digest header), so those are kept beside the parsed body.
  @RouteLimits({ rawBody: true })
  // SmartThings authenticates with its HTTP signature, never with an API key (DESIGN §2, §7).
  @Public()
  @UseGuards(WebhookSignatureGuard)
  @ApiOperation({
    operationId: 'Webhook_HomeProvider',
    summary: 'SmartThings SmartApp webhook: every lifecycle of the door-lights automation',
    description:
      'Signed by SmartThings (HTTP Signatures, rsa-sha256 over "(request-target) digest date") on every ' +
      'lifecycle but PING. Keys bind case-insensitively (camelCase as SmartThings sends, PascalCase as ' +
      'documented). Replies: PING {pingData:{challenge}}, CONFIRMATION {targetUrl}, CONFIGURATION ' +
      '{configurationData:{initialize|page}}, INSTALL {installData:{}}, UPDATE {updateData:{}}, EVENT ' +
      '{eventData:{}}, OAUTH_CALLBACK {oAuthCallbackData:{}}, UNINSTALL {uninstallData:{}}; application/json ' +
      'when Accept admits it, else application/octet-stream with the same bytes.',
  })
  @ApiParam({ name: 'domain', example: 'acme', description: 'The tenant the installation belongs to.' })
  @ApiBody({ type: DeviceWebhookBody })
  @ApiProduces('application/json', 'application/octet-stream')
  @ApiOkResponse({
    description: 'The lifecycle reply (JSON bytes).',
    schema: { type: 'object', example: { installData: {} } },
  })
  @ApiUnauthorizedResponse({
    description: 'Unauthorized: missing, foreign, altered or stale HTTP signature',
    type: ErrorEnvelopeDto,
  })
  @ApiErrorResponses({ auth: false })
  async homeProvider(
    @Param('domain') domain: string,
    @Body() body: DeviceWebhookBody,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Ctx() ctx: RequestContext,
  ): Promise<Buffer> {
    const answer = await this.service.handle(
      domain,
      body,
      { targetUrl: `${request.protocol}://${request.host}${request.url.split('?')[0]}` },
      ctx,
    );
    void reply.header('content-type', replyMediaType(request.headers.accept));
    return Buffer.from(JSON.stringify(answer), 'utf8');
  }
}
