// The keys learned from Nest's public decorators are the ones Nest itself reads: checked against what Nest writes
// for a real controller method, through the public Reflector.
import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Body, Controller, Header, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { NestRouteMetadata, ParameterKind } from './nest-route-metadata.js';

@Controller('probe')
class ProbeController {
  @Post(':id')
  @HttpCode(202)
  @Header('x-one', '1')
  handle(
    @Body() _body: unknown,
    @Query() _query: unknown,
    @Param('id') _id: string,
    @Req() _request: unknown,
    @Res({ passthrough: true }) _reply: unknown,
  ): void {}
}

describe('Nest route metadata learned from the public decorators', () => {
  it('finds what a decorated controller method carries', () => {
    const reflector = new Reflector();
    const handler = ProbeController.prototype.handle;
    expect(reflector.get(NestRouteMetadata.path, handler)).toBe(':id');
    expect(reflector.get(NestRouteMetadata.httpCode, handler)).toBe(202);
    expect(reflector.get(NestRouteMetadata.headers, handler)).toEqual([{ name: 'x-one', value: '1' }]);
    expect(Reflect.getMetadata(NestRouteMetadata.responsePassthrough, ProbeController, 'handle')).toBe(true);
    const args = Reflect.getMetadata(NestRouteMetadata.routeArgs, ProbeController, 'handle') as Record<
      string,
      { index: number; data?: unknown }
    >;
    const byIndex = Object.fromEntries(
      Object.entries(args).map(([key, { index, data }]) => [
        index,
        { kind: Number(key.split(':')[0]), data },
      ]),
    );
    expect(byIndex).toEqual({
      0: { kind: ParameterKind.body, data: undefined },
      1: { kind: ParameterKind.query, data: undefined },
      2: { kind: ParameterKind.param, data: 'id' },
      3: { kind: ParameterKind.request, data: undefined },
      4: { kind: ParameterKind.response, data: undefined },
    });
    expect(new Set(Object.values(ParameterKind)).size).toBe(5);
  });
});
