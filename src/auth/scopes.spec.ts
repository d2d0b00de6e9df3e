import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { routeConfigOf } from '../route-config/route-config.js';
import { RouteLimits, routeLimitsOf } from '../route-config/route-limits.js';
import { accessRuleOf, parseScopes, Public, RequireScope } from './scopes.js';

type Method = (...args: never[]) => unknown;

/** Applies decorators in TypeScript's order: method decorators (last listed first), then the class's. */
function decorate(
  cls: { prototype: object },
  methods: Record<string, MethodDecorator[]>,
  classDecorators: ClassDecorator[] = [],
): void {
  for (const [name, decorators] of Object.entries(methods)) {
    const descriptor = Object.getOwnPropertyDescriptor(cls.prototype, name)!;
    for (const decorator of [...decorators].reverse()) decorator(cls.prototype, name, descriptor);
  }
  for (const decorator of [...classDecorators].reverse())
    decorator(cls as unknown as Parameters<ClassDecorator>[0]);
}

const ruleOf = (cls: { prototype: object }, method: string) =>
  accessRuleOf(routeConfigOf((cls.prototype as Record<string, Method>)[method]));

describe('access rules in the route config', () => {
  it("gives every method the class's rule unless the method declares its own", () => {
    class Controller {
      list(): void {}
      live(): void {}
      metrics(): void {}
    }
    decorate(Controller, { live: [Public()], metrics: [RequireScope('admin')] }, [
      RequireScope('replication'),
    ]);
    expect(ruleOf(Controller, 'list')).toEqual({ scope: 'replication' });
    expect(ruleOf(Controller, 'live')).toEqual({ scope: 'public' });
    expect(ruleOf(Controller, 'metrics')).toEqual({ scope: 'admin' });
  });

  it('leaves a method without any declaration without a rule (configure-http makes it admin-only)', () => {
    class Controller {
      handler(): void {}
    }
    decorate(Controller, { handler: [] });
    expect(ruleOf(Controller, 'handler')).toBeUndefined();
  });

  it('keeps route limits and the access rule side by side, whatever the decorator order', () => {
    const publicWhen = (): boolean => true;
    class Controller {
      first(): void {}
      second(): void {}
    }
    decorate(Controller, {
      first: [RouteLimits({ bodyLimit: 10 }), RequireScope('schedules', { publicWhen })],
      second: [RequireScope('mail'), RouteLimits({ extraTimeoutMs: 5 })],
    });
    const proto = Controller.prototype as unknown as Record<string, Method>;
    expect(ruleOf(Controller, 'first')).toEqual({ scope: 'schedules', publicWhen });
    expect(routeLimitsOf(routeConfigOf(proto.first))).toEqual({ bodyLimit: 10 });
    expect(ruleOf(Controller, 'second')).toEqual({ scope: 'mail' });
    expect(routeLimitsOf(routeConfigOf(proto.second))).toEqual({ extraTimeoutMs: 5 });
  });
});

describe('parseScopes', () => {
  it('normalises, de-duplicates and refuses unknown scopes', () => {
    expect(parseScopes(' Mail, users ,mail')).toEqual(['mail', 'users']);
    expect(() => parseScopes('root')).toThrow('Unknown scope(s): root');
    expect(() => parseScopes(' , ')).toThrow('At least one scope is needed');
  });
});
