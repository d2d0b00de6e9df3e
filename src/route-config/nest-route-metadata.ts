// Where Nest's public decorators keep what they declare about a route. Nest reads these with its own constants,
// which it does not export; rather than importing files inside @nestjs/common, each key is learned at load time
// from the public decorator that writes it (applied once to a throw-away class), and so is the kind number each
// parameter decorator records. Used by direct routes (src/http/direct-routes.ts) and the DTO precompile.
import {
  Body,
  Get,
  Header,
  HttpCode,
  Param,
  Query,
  Redirect,
  Render,
  Req,
  Res,
  Sse,
  UseFilters,
  UseGuards,
  UseInterceptors,
  UsePipes,
} from '@nestjs/common';

type Decorate = (target: object, key: string, descriptor: PropertyDescriptor) => void;

/** The one metadata key `decorate` adds to a method whose value `matches` (e.g. the path given to @Get). */
function methodKey(decorate: Decorate, matches: (value: unknown) => boolean = () => true): string {
  class Probe {
    handler(): void {}
  }
  const descriptor = Object.getOwnPropertyDescriptor(Probe.prototype, 'handler') as PropertyDescriptor;
  decorate(Probe.prototype, 'handler', descriptor);
  const keys = Reflect.getOwnMetadataKeys(descriptor.value as object).filter((key) =>
    matches(Reflect.getOwnMetadata(key, descriptor.value as object)),
  );
  if (keys.length !== 1) throw new Error(`Nest's route metadata is not where it was (${keys.length} keys)`);
  return String(keys[0]);
}

/** The key parameter decorators write on (class, method), and the entry each one writes there. */
function parameterEntries(decorate: ParameterDecorator): { key: string; entries: Record<string, unknown> } {
  class Probe {
    handler(): void {}
  }
  decorate(Probe.prototype, 'handler', 0);
  const keys = Reflect.getOwnMetadataKeys(Probe, 'handler').filter((k): k is string => typeof k === 'string');
  const key = keys.find(
    (candidate) => typeof Reflect.getOwnMetadata(candidate, Probe, 'handler') === 'object',
  );
  if (key === undefined) throw new Error("Nest's route parameter metadata is not where it was");
  return {
    key: String(key),
    entries: Reflect.getOwnMetadata(key, Probe, 'handler') as Record<string, unknown>,
  };
}

/** The kind number a parameter decorator records (the part of the entry's name before ':'). */
function kindOf(decorate: ParameterDecorator): number {
  const [name] = Object.keys(parameterEntries(decorate).entries);
  return Number(name.split(':')[0]);
}

class Noop {}
class NoopFilter {
  catch(): void {}
}
const PROBE_PATH = 'route-metadata-probe';

export const NestRouteMetadata = {
  /** On (controller, method name): `{ "<kind>:<index>": { index, data, pipes, factory? } }`. */
  routeArgs: parameterEntries(Body()).key,
  /** On (controller, method name): true when @Res({ passthrough: true }). */
  responsePassthrough: (() => {
    class Probe {
      handler(): void {}
    }
    Res({ passthrough: true })(Probe.prototype, 'handler', 0);
    const keys = Reflect.getOwnMetadataKeys(Probe, 'handler').filter(
      (key) => Reflect.getOwnMetadata(key, Probe, 'handler') === true,
    );
    if (keys.length !== 1) throw new Error("Nest's @Res passthrough metadata is not where it was");
    return String(keys[0]);
  })(),
  path: methodKey(Get(PROBE_PATH), (value) => value === PROBE_PATH),
  httpCode: methodKey(HttpCode(299), (value) => value === 299),
  headers: methodKey(Header('x-probe', '1')),
  render: methodKey(Render(PROBE_PATH), (value) => value === PROBE_PATH),
  redirect: methodKey(Redirect(PROBE_PATH)),
  sse: methodKey(Sse(PROBE_PATH), (value) => value === true),
  guards: methodKey(UseGuards(Noop)),
  interceptors: methodKey(UseInterceptors(Noop)),
  filters: methodKey(UseFilters(NoopFilter)),
  pipes: methodKey(UsePipes(Noop as never)),
} as const;

/** The kinds of parameter a direct route handles itself, as Nest records them; every other kind keeps Nest's. */
export const ParameterKind = {
  body: kindOf(Body()),
  query: kindOf(Query()),
  param: kindOf(Param('probe')),
  request: kindOf(Req()),
  response: kindOf(Res()),
} as const;
