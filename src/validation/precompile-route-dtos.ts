// Compiles every route's body and query DTO at start-up, so an unsupported decorator stops the start (instead of
// failing the first request) and no request pays the one-time compile.
import type { INestApplication } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { NestRouteMetadata, ParameterKind } from '../route-config/nest-route-metadata.js';
import { compileDtoCached, type DtoClass } from './compile-dto.js';
import { NOT_DTOS } from './validation.pipe.js';

export interface RouteDto {
  readonly type: DtoClass;
  readonly source: 'body' | 'query';
  /** The controller method (its decorator metadata names the operation). */
  readonly handler: object;
}

/** Every `@Body()` and `@Query()` DTO class of every controller method (built-in types left out). */
export function* routeDtos(app: INestApplication): Generator<RouteDto> {
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const prototype = (wrapper.metatype as { prototype?: object } | undefined)?.prototype;
      if (!prototype) continue;
      for (const method of Object.getOwnPropertyNames(prototype)) {
        const args = Reflect.getMetadata(NestRouteMetadata.routeArgs, prototype.constructor, method) as
          Record<string, { index: number }> | undefined;
        if (!args) continue;
        const types = (Reflect.getMetadata('design:paramtypes', prototype, method) ?? []) as unknown[];
        for (const [key, { index }] of Object.entries(args)) {
          const kind = Number(key.split(':')[0]);
          const source =
            kind === ParameterKind.body ? 'body' : kind === ParameterKind.query ? 'query' : undefined;
          const type = types[index];
          if (source === undefined || typeof type !== 'function' || NOT_DTOS.has(type)) continue;
          yield { type: type as DtoClass, source, handler: (prototype as Record<string, object>)[method] };
        }
      }
    }
  }
}

export function precompileRouteDtos(app: INestApplication): number {
  let compiled = 0;
  for (const { type, source } of routeDtos(app)) {
    compileDtoCached(type, { source });
    compiled++;
  }
  return compiled;
}
