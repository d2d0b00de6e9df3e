// Which routes DirectRoutes takes over, and that what it hands a controller method (arguments after the global
// pipes, pipe metadata, execution context of custom decorators) is what Nest's own pipeline hands it. A plain Nest
// app on Fastify, no database; each case runs the same request with and without direct routes.
import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  Body,
  type CallHandler,
  type CanActivate,
  Controller,
  createParamDecorator,
  type ExecutionContext,
  Get,
  Headers,
  HttpCode,
  Injectable,
  type INestApplication,
  type ArgumentMetadata,
  Module,
  type DynamicModule,
  type Provider,
  type NestInterceptor,
  Param,
  ParseIntPipe,
  type PipeTransform,
  Post,
  Query,
  Redirect,
  Req,
  Res,
  UseGuards,
  UsePipes,
} from '@nestjs/common';
import { APP_INTERCEPTOR, APP_PIPE, NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DirectRoutes } from './direct-routes.js';

class Groups {
  Key!: string;
}

/** Records what every parameter it sees was, and marks strings, so a test can tell the pipe ran. */
class RecordingPipe implements PipeTransform {
  readonly seen: Array<{ type: string; metatype: string | undefined; data: unknown; value: unknown }> = [];
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    this.seen.push({ type: metadata.type, metatype: metadata.metatype?.name, data: metadata.data, value });
    return typeof value === 'string' ? `piped:${value}` : value;
  }
}

class AllowAll implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

const Where = createParamDecorator((data: string, context: ExecutionContext) => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  return `${data}:${context.getClass().name}.${context.getHandler().name}:${request.method}`;
});

@Controller('plain')
class PlainController {
  @Post(':id')
  create(
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @Body() body: Groups,
    @Where('at') where: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): unknown {
    reply.header('x-url', request.url);
    return { id, query, body, where };
  }

  @Get('async')
  @HttpCode(202)
  async later(): Promise<{ later: boolean }> {
    await Promise.resolve();
    return { later: true };
  }

  @Get('body-field')
  field(@Body('Key') key: string): string {
    return key;
  }

  @Get('headers')
  headers(@Headers() headers: Record<string, string>): string {
    return headers.host;
  }

  @Get('raw')
  raw(@Res() reply: FastifyReply): void {
    void reply.send({ raw: true });
  }

  @Get('redirect')
  @Redirect('/plain/async', 302)
  redirect(): void {}

  @Get('param-pipe/:n')
  parsed(@Param('n', ParseIntPipe) n: number): number {
    return n;
  }

  @Get('method-pipe')
  @UsePipes(new RecordingPipe())
  methodPipe(@Query() query: object): object {
    return query;
  }
}

@UseGuards(AllowAll)
@Controller('guarded')
class GuardedController {
  @Get()
  get(): { guarded: boolean } {
    return { guarded: true };
  }
}

@Injectable()
class Passing implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler) {
    return next.handle();
  }
}

@Module({ controllers: [PlainController, GuardedController] })
class ProbeModule {
  /** Global enhancers declared as the service declares its own: APP_* providers (never app.useGlobal…()). */
  static with(pipe: RecordingPipe, globalInterceptor: boolean): DynamicModule {
    const providers: Provider[] = [{ provide: APP_PIPE, useValue: pipe }];
    if (globalInterceptor) providers.push({ provide: APP_INTERCEPTOR, useClass: Passing });
    return { module: ProbeModule, providers };
  }
}

interface Started {
  app: NestFastifyApplication;
  pipe: RecordingPipe;
  routes: DirectRoutes | undefined;
}

const apps: INestApplication[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function start(options: { direct: boolean; globalInterceptor?: boolean }): Promise<Started> {
  const pipe = new RecordingPipe();
  const app = await NestFactory.create<NestFastifyApplication>(
    ProbeModule.with(pipe, options.globalInterceptor === true),
    new FastifyAdapter(),
    { logger: false },
  );
  apps.push(app);
  const routes = options.direct ? new DirectRoutes(app) : undefined;
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      const handler = routes?.handlerFor(route);
      if (handler !== undefined) route.handler = handler;
    });
  await app.init();
  return { app, pipe, routes };
}

describe('DirectRoutes', () => {
  it('takes over only routes that use nothing of Nest pipeline beyond global pipes and plain parameters', async () => {
    const { routes } = await start({ direct: true });
    expect(routes?.viaNest.sort()).toEqual(
      [
        'GET /plain/body-field',
        'GET /plain/headers',
        'GET /plain/raw',
        'GET /plain/redirect',
        'GET /plain/param-pipe/:n',
        'GET /plain/method-pipe',
        'GET /guarded',
        // Fastify adds a HEAD route for every GET route, with the same config.
        'HEAD /plain/body-field',
        'HEAD /plain/headers',
        'HEAD /plain/raw',
        'HEAD /plain/redirect',
        'HEAD /plain/param-pipe/:n',
        'HEAD /plain/method-pipe',
        'HEAD /guarded',
      ].sort(),
    );
    // POST /plain/:id, GET and HEAD /plain/async
    expect(routes?.direct).toBe(3);
  });

  it('takes over nothing when the app has a global interceptor', async () => {
    const { routes } = await start({ direct: true, globalInterceptor: true });
    expect(routes?.direct).toBe(0);
    expect(routes?.viaNest).toHaveLength(17);
  });

  it('hands the method the same arguments, pipe metadata and context as Nest does', async () => {
    const request = {
      method: 'POST' as const,
      url: '/plain/42?a=1',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ Key: 'k' }),
    };
    const answers: unknown[] = [];
    const seen: Array<RecordingPipe['seen']> = [];
    for (const direct of [true, false]) {
      const { app, pipe } = await start({ direct });
      const response = await app.getHttpAdapter().getInstance().inject(request);
      answers.push({
        status: response.statusCode,
        url: response.headers['x-url'],
        body: response.json(),
      });
      seen.push(pipe.seen);
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]).toEqual({
      status: 201,
      url: '/plain/42?a=1',
      body: {
        id: 'piped:42',
        query: { a: '1' },
        body: { Key: 'k' },
        where: 'piped:at:PlainController.create:POST',
      },
    });
    const byType = (entries: RecordingPipe['seen']) =>
      [...entries].sort(
        (a, b) => a.type.localeCompare(b.type) || String(a.data).localeCompare(String(b.data)),
      );
    expect(byType(seen[0])).toEqual(byType(seen[1]));
    expect(byType(seen[0]).map(({ type, metatype, data }) => ({ type, metatype, data }))).toEqual([
      { type: 'body', metatype: 'Groups', data: undefined },
      { type: 'custom', metatype: 'String', data: 'at' },
      { type: 'param', metatype: 'String', data: 'id' },
      { type: 'query', metatype: 'Object', data: undefined },
    ]);
  });

  it('keeps @HttpCode and awaits an async method', async () => {
    const { app } = await start({ direct: true });
    const response = await app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/plain/async' });
    expect(response.statusCode).toBe(202);
    expect(response.json()).toEqual({ later: true });
  });
});
