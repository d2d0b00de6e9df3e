import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { NamesTenant, RequireScope } from '../auth/scopes.js';
import { Ctx, RequestContext } from '../logging/request-context.js';
import { ApiErrorResponses } from '../openapi/api-error-responses.js';
import {
  MailResultMessage,
  SendTestMessageResponse,
  SmtpConfigurationListResponse,
  VerifySmtpConfigurationResponse,
} from './dto/mail-responses.dto.js';
import {
  EnsureSmtpConfigurationRequest,
  ListSmtpConfigurationsQuery,
  SendTestMessageRequest,
  SmtpIdentityRequest,
} from './dto/smtp-configuration.dto.js';
import { MailDeliveryService } from './mail-delivery.service.js';
import { MailOutcomeCode } from './mail.errors.js';
import { SmtpConfigurationsService } from './smtp-configurations.service.js';
import { AuditedBy, type AuditSource } from '../audit/audit-source.js';

@ApiTags('Mail')
@ApiBearerAuth()
@ApiErrorResponses()
@RequireScope('mail')
@NamesTenant()
@Controller('api/v1/mail')
export class MailController {
  constructor(
    private readonly configurations: SmtpConfigurationsService,
    private readonly delivery: MailDeliveryService,
  ) {}

  @Post('ensureSmtpConfiguration')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'Mail_EnsureSmtpConfiguration',
    summary: 'Operation 4: create or update the SMTP configuration (tenant, Host, Port, Username)',
    description:
      'Code Created, Updated or Unchanged. Absent/null/placeholder secrets keep the stored ones. ' +
      'Concurrent identical calls all succeed and leave one configuration.',
  })
  @ApiOkResponse({ type: MailResultMessage })
  async ensure(
    @Body() body: EnsureSmtpConfigurationRequest,
    @Ctx() ctx: RequestContext,
    @AuditedBy() by: AuditSource,
  ): Promise<MailResultMessage> {
    const outcome = await this.configurations.ensure(body, ctx, by);
    return { Succeeded: true, Message: outcome.message, Code: outcome.code };
  }

  @Get('smtpConfigurations')
  @ApiOperation({
    operationId: 'Mail_ListSmtpConfigurations',
    summary: "A tenant's SMTP configurations in fail-over order (secrets only as HasPassword flags)",
  })
  @ApiOkResponse({ type: SmtpConfigurationListResponse })
  async list(@Query() query: ListSmtpConfigurationsQuery): Promise<SmtpConfigurationListResponse> {
    return {
      Succeeded: true,
      Message: null,
      Code: null,
      Result: await this.configurations.list(query.Domain),
    };
  }

  @Post('verifySmtpConfiguration')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'Mail_VerifySmtpConfiguration',
    summary: 'Connect to the SMTP server (TLS per Ssl, login per AuthRequired) and report what happened',
    description:
      'Succeeded:false with Code AuthenticationFailed, ConnectionRefused, HostNotFound, TlsFailed, TimedOut, ' +
      'ConnectionFailed, SecretUnavailable or SmtpConfigurationNotFound.',
  })
  @ApiOkResponse({ type: VerifySmtpConfigurationResponse })
  verify(
    @Body() body: SmtpIdentityRequest,
    @Ctx() ctx: RequestContext,
  ): Promise<VerifySmtpConfigurationResponse> {
    return this.delivery.verify(body, ctx);
  }

  @Post('sendTestMessage')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'Mail_SendTestMessage',
    summary:
      "Send a test message through the tenant's enabled configurations, failing over in Priority order",
  })
  @ApiOkResponse({ type: SendTestMessageResponse })
  sendTestMessage(
    @Body() body: SendTestMessageRequest,
    @Ctx() ctx: RequestContext,
  ): Promise<SendTestMessageResponse> {
    return this.delivery.sendTestMessage(body, ctx);
  }

  @Post('removeSmtpConfiguration')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'Mail_RemoveSmtpConfiguration',
    summary: 'Remove one SMTP configuration (Code Removed, or Succeeded:false SmtpConfigurationNotFound)',
  })
  @ApiOkResponse({ type: MailResultMessage })
  async remove(
    @Body() body: SmtpIdentityRequest,
    @Ctx() ctx: RequestContext,
    @AuditedBy() by: AuditSource,
  ): Promise<MailResultMessage> {
    const message = await this.configurations.remove(body, ctx, by);
    return { Succeeded: true, Message: message, Code: MailOutcomeCode.Removed };
  }
}
