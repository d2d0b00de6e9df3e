import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { registerEntities } from '../database/entity-registry.js';
import { EgressModule } from '../egress/egress.module.js';
import { SmtpConfiguration } from './entities/smtp-configuration.entity.js';
import { MailDeliveryService } from './mail-delivery.service.js';
import { MailController } from './mail.controller.js';
import { SmtpConfigurationsService } from './smtp-configurations.service.js';

/** Mail (docs/mail.md): SMTP configurations per tenant, verified and used with nodemailer. */
@Module({
  imports: [TypeOrmModule.forFeature(registerEntities([SmtpConfiguration])), EgressModule],
  controllers: [MailController],
  providers: [SmtpConfigurationsService, MailDeliveryService],
})
export class MailModule {}
