// The SCIM users area (operation 3, docs/scim.md): /api/v1/scim/Users plus RFC 7644 §4 discovery, answering errors
// in the SCIM error schema through the global filter's renderer hook (and an onSend hook for the few answers that
// bypass the filter).
import { Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TypeOrmModule } from '@nestjs/typeorm';
import { registerEntities } from '../database/entity-registry.js';
import { ScimGroupEntity, ScimGroupMemberEntity } from './entities/scim-group.entity.js';
import { ScimUserEmailEntity } from './entities/scim-user-email.entity.js';
import { ScimUserStatsEntity } from './entities/scim-user-stats.entity.js';
import { ScimUserStatsDeltaEntity } from './entities/scim-user-stats-delta.entity.js';
import { ScimUserEntity } from './entities/scim-user.entity.js';
import { ScimDiscoveryController } from './scim-discovery.controller.js';
import {
  allowedScimMethods,
  registerScimErrorRenderer,
  rewritePlatformError,
  SCIM_CONTENT_TYPE,
  SCIM_ERROR_SCHEMA,
} from './scim-error.renderer.js';
import { ScimGroupsController } from './scim-groups.controller.js';
import { ScimGroupsRepository } from './scim-groups.repository.js';
import { ScimGroupsService } from './scim-groups.service.js';
import { ScimRootSearchController } from './scim-root-search.controller.js';
import { ScimUsersController } from './scim-users.controller.js';
import { ScimUsersRepository } from './scim-users.repository.js';
import { ScimUsersService } from './scim-users.service.js';

type FastifyInstance = ReturnType<ReturnType<NestFastifyApplication['getHttpAdapter']>['getInstance']>;

/** `/Users/.search`, `/Groups/.search`, `/.search` (POST-only paths), with or without a query string. */
const SEARCH_PATH = /\/\.search\/?(?:\?|$)/i;

@Module({
  imports: [
    TypeOrmModule.forFeature(
      registerEntities([
        ScimUserEntity,
        ScimUserEmailEntity,
        ScimUserStatsEntity,
        ScimUserStatsDeltaEntity,
        ScimGroupEntity,
        ScimGroupMemberEntity,
      ]),
    ),
  ],
  controllers: [ScimUsersController, ScimGroupsController, ScimRootSearchController, ScimDiscoveryController],
  providers: [ScimUsersService, ScimUsersRepository, ScimGroupsService, ScimGroupsRepository],
})
export class ScimModule implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {
    // Also covers errors raised before routing (unknown SCIM path, malformed JSON, 401/403 from the API-key hook).
    registerScimErrorRenderer();
  }

  onModuleInit(): void {
    // No HTTP adapter in the maintenance CLI: nothing to hook there.
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    // RFC 7644 §3.12 / RFC 9110 §15.5.6: a SCIM path that exists but not for this method is 405 with Allow.
    // `/Users/.search` answers POST only; other methods would otherwise reach `/Users/:id` as the id ".search".
    fastify.addHook('onRequest', (request, reply, done) => {
      if (!request.is404 && !SEARCH_PATH.test(request.url)) {
        done();
        return;
      }
      const allowed = allowedScimMethods(request.url);
      if (allowed === undefined || allowed.includes(request.method)) {
        done();
        return;
      }
      void reply
        .code(405)
        .header('allow', allowed.join(', '))
        .header('content-type', SCIM_CONTENT_TYPE)
        .send(
          JSON.stringify({
            schemas: [SCIM_ERROR_SCHEMA],
            status: '405',
            detail: `${request.method} is not allowed on ${request.url.split('?')[0]}; use ${allowed.join(', ')}.`,
          }),
        );
    });
    fastify.addHook('onSend', (request, reply, payload, done) => {
      if (reply.statusCode < 400) {
        done(null, payload);
        return;
      }
      const contentType = reply.getHeader('content-type');
      const rewritten = rewritePlatformError(
        request.url,
        reply.statusCode,
        typeof contentType === 'string' ? contentType : undefined,
        payload,
      );
      if (rewritten === undefined) {
        done(null, payload);
        return;
      }
      reply.header('content-type', SCIM_CONTENT_TYPE);
      done(null, rewritten);
    });
  }
}
