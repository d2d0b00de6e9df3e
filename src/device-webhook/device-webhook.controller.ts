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
import { PlatformError, PlatformErrorCode } from '../errors/api-error.js';
import { RouteLimits } from '../route-config/route-limits.js';
import { Ctx, RequestContext } from '../logging/request-context.js';
import { ApiErrorResponses, ErrorEnvelopeDto } from '../openapi/api-error-responses.js';
import { DeviceWebhookService } from './device-webhook.service.js';
import { DeviceWebhookBody } from './dto/webhook-body.dto.js';
import { replyMediaType } from './smartapp/accept.js';
import { DOMAIN_PARAM } from './webhook-domain.js';
import { WebhookReplays } from './webhook-replays.js';
import { WebhookSignatureGuard, type SignedWebhookRequest } from './webhook-signature.guard.js';

@ApiTags('Webhook')
@Controller('api/v1/webhook/homeprovider')
export class DeviceWebhookController {
  constructor(
    private readonly service: DeviceWebhookService,
    private readonly replays: WebhookReplays,
  ) {}

  @Post(':domain')
  @HttpCode(200)
  // The signature covers the exact bytes received (its Digest header), so those are kept beside the parsed body.
  @RouteLimits({ rawBody: true })
  // SmartThings authenticates with its HTTP signature, never with an API key: it holds no key of ours.
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
      'when Accept admits it, else application/octet-stream with the same bytes. Sent as the example shows ' +
      '(without a signature, as Swagger UI sends it) a signed lifecycle is answered 401 Unauthorized; only ' +
      'SmartThings can sign one.',
  })
  @ApiParam(DOMAIN_PARAM)
  @ApiBody({ type: DeviceWebhookBody })
  @ApiProduces('application/json', 'application/octet-stream')
  @ApiOkResponse({
    description: 'The lifecycle reply (JSON bytes).',
    // The members depend on the lifecycle (pingData, configurationData, installData, …).
    schema: { type: 'object', additionalProperties: true, example: { installData: {} } },
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
    void reply.header('content-type', replyMediaType(request.headers.accept));
    const signed = (request as SignedWebhookRequest).verifiedSignature;
    const claim = signed && (await this.replays.claim(signed.signature));
    if (claim?.kind === 'repeat') {
      ctx
        .logFor('webhook')
        .warn(
          { domain, keyId: signed!.keyId, answered: claim.reply !== null },
          'device webhook: a signed request seen before was posted again; answered without acting',
        );
      if (claim.reply === null) {
        throw new PlatformError(
          PlatformErrorCode.Conflict,
          'The same signed request is being handled; it is not handled twice.',
        );
      }
      return Buffer.from(claim.reply, 'utf8');
    }
    let answer: string;
    try {
      answer = JSON.stringify(
        await this.service.handle(
          domain,
          body,
          { targetUrl: `${request.protocol}://${request.host}${request.url.split('?')[0]}` },
          ctx,
        ),
      );
    } catch (error) {
      if (claim) await this.replays.release(claim.id);
      throw error;
    }
    if (claim) await this.replays.complete(claim.id, answer);
    return Buffer.from(answer, 'utf8');
  }
}
