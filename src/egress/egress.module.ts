import { Module } from '@nestjs/common';
import { EgressService } from './egress.service.js';

/** Egress policy (docs/egress.md): imported by every area that connects to a destination a caller supplies. */
@Module({ providers: [EgressService], exports: [EgressService] })
export class EgressModule {}
