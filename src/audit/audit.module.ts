// The audit trail: every change and refusal, who and from where. Global, because every area writes to
// it (AuditTrail.record in its own transactions) whichever areas a process serves; its reading route is admin-only.
import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { registerEntities } from '../database/entity-registry.js';
import { AuditEventsController } from './audit-events.controller.js';
import { AuditEventsReader } from './audit-events.reader.js';
import { AuditFold } from './audit-fold.js';
import { AuditRetention } from './audit-retention.js';
import { AuditTrail } from './audit-trail.js';
import { AuditEvent, AuditTailEvent } from './entities/audit-event.entity.js';

@Global()
@Module({
  imports: [TypeOrmModule.forFeature(registerEntities([AuditEvent, AuditTailEvent]))],
  controllers: [AuditEventsController],
  providers: [AuditTrail, AuditEventsReader, AuditRetention, AuditFold],
  exports: [AuditTrail, AuditEventsReader, AuditFold],
})
export class AuditModule {}
