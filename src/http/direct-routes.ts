// Direct routes: Fastify calls a controller method itself, instead of through Nest's router pipeline, when the
// route uses nothing that pipeline adds beyond what is done here. Nest's per-request chain of async steps (guards,
// interceptors, pipes, response handling; ~8 promises a request) was the largest single cost left once the
// service's own hooks were trimmed: on bench/load.mjs (2 cores) the service takes 52 µs of CPU a request with
// direct routes and 73 µs without (2026-11-24; raw Fastify 36 µs).
//
// What a direct route does, in Nest's order: status from @HttpCode (else 201 for POST, 200 otherwise) and @Header
// values are set; arguments are extracted (@Body(), @Query(), @Param(name), @Req(), @Res({ passthrough: true }),
// custom parameter decorators such as @Ctx()) and run through the global pipes with the same metadata Nest gives
// them; the method is called; its value (awaited, or the last value of an Observable) is sent by the Nest HTTP
// adapter's reply(), as Nest does. Errors go to Fastify's error handler, which Nest points at the global exception
// filters, so they leave in the same envelope.
//
// One difference is left on purpose: Nest tears down an Observable answer, and destroys an unsent stream, when the
// client goes away mid-answer; here an Observable runs to its end and a stream is left to Fastify. No route of this
// service answers with either; a route that streams should take @Res() (or add an interceptor), which keeps it on
// Nest's pipeline.
//
// A route keeps Nest's pipeline if it, or its controller, has guards, interceptors, exception filters or pipes of
// its own; if the app has global guards or interceptors, or request-scoped globals; if its controller is not a
// static singleton; if it renders, redirects, streams events or takes the raw response (@Res() without
// passthrough, @Next()); or if a parameter is anything else (e.g. @Body('field'), @Headers(), a parameter pipe).
import type {
  ArgumentMetadata,
  ExecutionContext,
  INestApplication,
  PipeTransform,
  Type,
} from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR, APP_PIPE, ModulesContainer } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isObservable, lastValueFrom } from 'rxjs';
import { NestRouteMetadata, ParameterKind } from '../route-config/nest-route-metadata.js';
import { mergeRouteConfig } from '../route-config/route-config.js';

const DIRECT_ROUTE = 'platformDirectRoute';

/** What identifies a controller method across apps: the class and the method's name (never an instance). */
interface MethodRef {
  controller: Type;
  method: string;
}

type Handler = (request: FastifyRequest, reply: FastifyReply) => void;
type ArgumentOf = (request: FastifyRequest, reply: FastifyReply) => unknown;

interface ParamMetadata {
  index: number;
  data?: unknown;
  pipes?: unknown[];
  factory?: (data: unknown, context: ExecutionContext) => unknown;
}

export class DirectRoutes {
  private readonly instances = new Map<Type, object>();
  private readonly pipes: PipeTransform[];
  /** Sends a method's value as Nest does (its HTTP adapter's reply()). */
  private readonly send: (reply: FastifyReply, body: unknown) => unknown;
  private readonly enabled: boolean;
  /** For the start-up log: how many routes are called directly, and which keep Nest's pipeline. */
  direct = 0;
  readonly viaNest: string[] = [];

  /**
   * Call before app.init(): marks every controller method's route config with its MethodRef (Nest copies it to the
   * route), and notes this app's controller instances.
   */
  constructor(app: INestApplication) {
    const adapter = app.getHttpAdapter();
    this.send = (reply, body) => adapter.reply(reply, body, undefined);
    const globals = globalEnhancers(app.get(ModulesContainer));
    this.pipes = globals.pipes;
    this.enabled = globals.others === 0;
    for (const module of app.get(ModulesContainer).values()) {
      for (const wrapper of module.controllers.values()) {
        const controller = wrapper.metatype as Type | null;
        if (!controller || !wrapper.isDependencyTreeStatic() || !wrapper.instance) continue;
        this.instances.set(controller, wrapper.instance);
        const prototype = controller.prototype as Record<string, unknown>;
        for (const method of Object.getOwnPropertyNames(prototype)) {
          const fn = prototype[method];
          if (method === 'constructor' || typeof fn !== 'function') continue;
          if (Reflect.getMetadata(NestRouteMetadata.path, fn) === undefined) continue;
          mergeRouteConfig(fn as (...args: never[]) => unknown, {
            [DIRECT_ROUTE]: { controller, method } satisfies MethodRef,
          });
        }
      }
    }
  }

  /** The handler to use instead of Nest's for a route being added, or undefined to keep Nest's. */
  handlerFor(route: { config?: unknown; url: string; method: string | string[] }): Handler | undefined {
    const ref = (route.config as Record<string, MethodRef | undefined> | undefined)?.[DIRECT_ROUTE];
    if (ref === undefined) return undefined;
    const instance = this.instances.get(ref.controller);
    const handler = this.enabled && instance !== undefined ? this.compile(ref, instance, route) : undefined;
    if (handler !== undefined) this.direct++;
    else this.viaNest.push(`${String(route.method)} ${route.url}`);
    return handler;
  }

  private compile(
    { controller, method }: MethodRef,
    instance: object,
    route: { url: string; method: string | string[] },
  ): Handler | undefined {
    const fn = (instance as Record<string, (...args: unknown[]) => unknown>)[method];
    const enhanced = [
      NestRouteMetadata.guards,
      NestRouteMetadata.interceptors,
      NestRouteMetadata.filters,
      NestRouteMetadata.pipes,
    ].some((key) => hasItems(Reflect.getMetadata(key, controller)) || hasItems(Reflect.getMetadata(key, fn)));
    const special = [NestRouteMetadata.render, NestRouteMetadata.redirect, NestRouteMetadata.sse].some(
      (key) => Reflect.getMetadata(key, fn) !== undefined,
    );
    if (enhanced || special) return undefined;

    const params = (Reflect.getMetadata(NestRouteMetadata.routeArgs, controller, method) ?? {}) as Record<
      string,
      ParamMetadata
    >;
    const types = (Reflect.getMetadata('design:paramtypes', controller.prototype as object, method) ??
      []) as unknown[];
    const passthrough =
      Reflect.getMetadata(NestRouteMetadata.responsePassthrough, controller, method) === true;
    // `awaited`: the value is settled before the call, as Nest awaits what its pipes return. The request and reply
    // are passed as they are (a Fastify reply is itself a thenable that settles only once it is sent).
    const extractors: Array<{ index: number; get: ArgumentOf; awaited: boolean }> = [];
    /** A parameter Nest runs through the global pipes, with the metadata Nest gives them. */
    const piped = (param: ParamMetadata, type: ArgumentMetadata['type'], read: ArgumentOf): void => {
      const metadata = { type, metatype: types[param.index], data: param.data } as ArgumentMetadata;
      extractors.push({
        index: param.index,
        get: (request, reply) => this.pipe(read(request, reply), metadata),
        awaited: true,
      });
    };
    for (const [key, param] of Object.entries(params)) {
      if (hasItems(param.pipes)) return undefined;
      // A custom parameter decorator's entry is named by its own id, not a kind number, and carries its factory.
      if (!/^\d+:/.test(key)) {
        const factory = param.factory;
        if (factory === undefined) return undefined;
        piped(param, 'custom', (request, reply) =>
          factory(param.data, contextOf(request, reply, controller, fn)),
        );
        continue;
      }
      switch (Number(key.split(':')[0])) {
        case ParameterKind.body:
          if (param.data !== undefined) return undefined;
          piped(param, 'body', (request) => request.body);
          break;
        case ParameterKind.query:
          if (param.data !== undefined) return undefined;
          piped(param, 'query', (request) => request.query);
          break;
        case ParameterKind.param: {
          if (typeof param.data !== 'string') return undefined;
          const name = param.data;
          piped(param, 'param', (request) => (request.params as Record<string, string>)[name]);
          break;
        }
        case ParameterKind.request:
          extractors.push({ index: param.index, get: (request) => request, awaited: false });
          break;
        case ParameterKind.response:
          if (!passthrough) return undefined;
          extractors.push({ index: param.index, get: (_request, reply) => reply, awaited: false });
          break;
        // Headers, cookies, files, IP, host, session, @Next() and the rest: Nest's pipeline.
        default:
          return undefined;
      }
    }

    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const status =
      (Reflect.getMetadata(NestRouteMetadata.httpCode, fn) as number | undefined) ??
      (methods.includes('POST') ? 201 : 200);
    const headers = (Reflect.getMetadata(NestRouteMetadata.headers, fn) ?? []) as Array<{
      name: string;
      value: string | (() => string);
    }>;
    const argc = extractors.reduce((max, { index }) => Math.max(max, index + 1), 0);
    // Nest's adapter sends an empty route parameter ("/Users/") to the not-found handler; so does this.
    const paramNames = paramNamesOf(route.url);
    const send = this.send;

    const finish = (reply: FastifyReply, value: unknown): void => {
      if (isObservable(value)) {
        lastValueFrom(value).then(
          (last) => finish(reply, last),
          (error: unknown) => fail(reply, error),
        );
      } else if (isThenable(value)) {
        value.then(
          (settled) => finish(reply, settled),
          (error: unknown) => fail(reply, error),
        );
      } else {
        try {
          void send(reply, value);
        } catch (error) {
          fail(reply, error);
        }
      }
    };

    return (request, reply) => {
      if (paramNames.length > 0) {
        const values = request.params as Record<string, string>;
        if (paramNames.some((name) => values[name] === '')) {
          reply.callNotFound();
          return;
        }
      }
      reply.code(status);
      for (const { name, value } of headers)
        reply.header(name, typeof value === 'function' ? value() : value);
      const args = new Array<unknown>(argc);
      let pending: Array<Promise<void>> | undefined;
      for (let i = 0; i < extractors.length; i++) {
        const { index, get, awaited } = extractors[i];
        const value = get(request, reply);
        if (awaited && isThenable(value))
          (pending ??= []).push(Promise.resolve(value).then((v) => void (args[index] = v)));
        else args[index] = value;
      }
      if (pending === undefined) {
        finish(reply, fn.apply(instance, args));
        return;
      }
      Promise.all(pending)
        .then(() => finish(reply, fn.apply(instance, args)))
        .catch((error: unknown) => fail(reply, error));
    };
  }

  /** The global pipes, in order, as Nest runs them on a parameter (a pipe may answer with a promise). */
  private pipe(value: unknown, metadata: ArgumentMetadata): unknown {
    let current = value;
    for (const pipe of this.pipes) {
      current = isThenable(current)
        ? Promise.resolve(current).then((settled): unknown => pipe.transform(settled, metadata))
        : (pipe.transform(current, metadata) as unknown);
    }
    return current;
  }
}

/** Errors leave through Fastify's error handler, which Nest points at the global exception filters. */
function fail(reply: FastifyReply, error: unknown): void {
  if (reply.sent) return;
  void reply.send(error instanceof Error ? error : new Error(String(error)));
}

function contextOf(
  request: FastifyRequest,
  reply: FastifyReply,
  controller: Type,
  handler: (...args: unknown[]) => unknown,
): ExecutionContext {
  return new HttpExecutionContext([request, reply, undefined], controller, handler);
}

/** What a custom parameter decorator's factory is given: the HTTP request and reply, as Nest's own context gives. */
class HttpExecutionContext implements ExecutionContext {
  constructor(
    private readonly args: [FastifyRequest, FastifyReply, undefined],
    private readonly controller: Type,
    private readonly handler: (...args: unknown[]) => unknown,
  ) {}

  getClass<T>(): Type<T> {
    return this.controller as Type<T>;
  }
  getHandler(): (...args: unknown[]) => unknown {
    return this.handler;
  }
  getArgs<T extends unknown[] = unknown[]>(): T {
    return this.args as unknown as T;
  }
  getArgByIndex<T = unknown>(index: number): T {
    return this.args[index] as T;
  }
  getType<T extends string = 'http'>(): T {
    return 'http' as T;
  }
  switchToHttp(): ReturnType<ExecutionContext['switchToHttp']> {
    const [request, reply, next] = this.args;
    return {
      getRequest: <T>() => request as T,
      getResponse: <T>() => reply as T,
      getNext: <T>() => next as T,
    };
  }
  switchToRpc(): ReturnType<ExecutionContext['switchToRpc']> {
    throw new Error('A direct route is HTTP only');
  }
  switchToWs(): ReturnType<ExecutionContext['switchToWs']> {
    throw new Error('A direct route is HTTP only');
  }
}

function hasItems(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

function paramNamesOf(url: string): string[] {
  return [...url.matchAll(/:(\w+)/g)].map((match) => match[1]);
}

/**
 * The app's global enhancers, read from its modules through Nest's public ModulesContainer: providers of APP_PIPE,
 * APP_GUARD and APP_INTERCEPTOR (Nest registers each under the token `APP_PIPE (UUID: …)`), which is how this
 * service declares its globals — it calls no `app.useGlobal…()`. `pipes`: the static global pipes, in registration
 * order; `others`: guards, interceptors and request-scoped pipes, any of which keeps every route on Nest's pipeline.
 */
export function globalEnhancers(modules: ModulesContainer): { pipes: PipeTransform[]; others: number } {
  const pipes: PipeTransform[] = [];
  let others = 0;
  for (const module of modules.values()) {
    for (const wrapper of module.providers.values()) {
      const token = wrapper.token;
      if (typeof token !== 'string') continue;
      if (token.startsWith(`${APP_PIPE} (`) && wrapper.isDependencyTreeStatic() && wrapper.instance)
        pipes.push(wrapper.instance as PipeTransform);
      else if (
        token.startsWith(`${APP_PIPE} (`) ||
        token.startsWith(`${APP_GUARD} (`) ||
        token.startsWith(`${APP_INTERCEPTOR} (`)
      )
        others++;
    }
  }
  return { pipes, others };
}
