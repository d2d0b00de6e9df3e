import { describe, it, expect } from '@jest/globals';
import {
  devicesOf,
  eventPlan,
  MAX_MINUTES,
  minutesOf,
  subscriptionPlan,
  type SmartAppConfig,
} from './automation-plan.js';

const device = (DeviceId: string, ComponentId: string | null = 'main') => ({
  ValueType: 'DEVICE',
  DeviceConfig: { DeviceId, ComponentId },
});
const config = (minutes: string | null = '5'): SmartAppConfig => ({
  ContactSensor: [device('door-1'), device('door-2', null)],
  LightSwitch: [device('hall'), device('porch', 'bulb'), device('hall')],
  Minutes: minutes === null ? [] : [{ ValueType: 'STRING', StringConfig: { Value: minutes } }],
});
const summary = (plan: ReturnType<typeof subscriptionPlan>) =>
  plan.map((stage) => stage.map((call) => `${call.method} ${call.path}`));
const NOW = Date.parse('2026-11-22T10:00:00Z');

describe('subscriptionPlan (INSTALL / UPDATE)', () => {
  it('clears subscriptions and schedules, then subscribes every contact sensor', () => {
    const plan = subscriptionPlan('app/1', config());
    expect(summary(plan)).toEqual([
      ['DELETE /installedapps/app%2F1/subscriptions', 'DELETE /installedapps/app%2F1/schedules'],
      ['POST /installedapps/app%2F1/subscriptions', 'POST /installedapps/app%2F1/subscriptions'],
    ]);
    expect(plan[1].map((call) => call.body)).toEqual([
      {
        sourceType: 'DEVICE',
        device: {
          deviceId: 'door-1',
          componentId: 'main',
          capability: 'contactSensor',
          attribute: 'contact',
          stateChangeOnly: true,
          subscriptionName: 'contactSensor_0',
          value: '*',
        },
      },
      expect.objectContaining({
        device: expect.objectContaining({ deviceId: 'door-2', componentId: 'main' }),
      }),
    ]);
    expect(plan[0].every((call) => call.alsoOk.includes(404))).toBe(true);
    expect(plan[1].every((call) => call.alsoOk.includes(409))).toBe(true);
  });

  it('only clears when no sensor is configured', () => {
    expect(summary(subscriptionPlan('a', {}))).toEqual([
      ['DELETE /installedapps/a/subscriptions', 'DELETE /installedapps/a/schedules'],
    ]);
  });
});

describe('devicesOf', () => {
  it('never yields an id that is not a single path segment', () => {
    const stored: SmartAppConfig = {
      LightSwitch: ['..', '.', '../installedapps/x', 'a/b', '%2e%2e', 'ok-1', 'a?b', 'x#y'].map((id) =>
        device(id),
      ),
    };
    expect(devicesOf(stored.LightSwitch).map((d) => d.deviceId)).toEqual(['ok-1']);
  });
});

describe('eventPlan (EVENT)', () => {
  const contact = (value: unknown) =>
    ({ type: 'DEVICE_EVENT', capability: 'contactSensor', attribute: 'contact', value }) as const;

  it('open → cancel lightsOff, then switch every light on (each light once)', () => {
    const { plan, warnings } = eventPlan('a', config(), [contact('open')], NOW);
    expect(warnings).toEqual([]);
    expect(summary(plan)).toEqual([
      ['DELETE /installedapps/a/schedules/lightsOff'],
      ['POST /devices/hall/commands', 'POST /devices/porch/commands'],
    ]);
    expect(plan[1][1].body).toEqual({
      commands: [{ component: 'bulb', capability: 'switch', command: 'on', arguments: [] }],
    });
  });

  it('closed → a one-off lightsOff schedule Minutes from now', () => {
    const { plan } = eventPlan('a', config('2.5'), [contact('closed')], NOW);
    expect(plan).toEqual([
      [
        expect.objectContaining({
          method: 'POST',
          path: '/installedapps/a/schedules',
          body: { name: 'lightsOff', once: { time: NOW + 150_000, overwrite: true } },
        }),
      ],
    ]);
  });

  it('closed with Minutes 0 → off at once; with an unusable Minutes → nothing, with a warning', () => {
    expect(summary(eventPlan('a', config('0'), [contact('closed')], NOW).plan)).toEqual([
      ['POST /devices/hall/commands', 'POST /devices/porch/commands'],
    ]);
    for (const minutes of [null, 'soon', '-1', String(MAX_MINUTES + 1), ' ']) {
      const work = eventPlan('a', config(minutes), [contact('closed')], NOW);
      expect(work.plan).toEqual([]);
      expect(work.warnings).toEqual([expect.stringContaining('Minutes')]);
    }
  });

  it('TIMER_EVENT lightsOff → switch every light off; other timers and events are ignored', () => {
    const { plan } = eventPlan('a', config(), [{ type: 'TIMER_EVENT', name: 'lightsOff' }], NOW);
    expect(
      plan[0].map((call) => (call.body as { commands: Array<{ command: string }> }).commands[0].command),
    ).toEqual(['off', 'off']);
    const ignored = eventPlan(
      'a',
      config(),
      [
        { type: 'TIMER_EVENT', name: 'somethingElse' },
        { type: 'DEVICE_EVENT', capability: 'switch', attribute: 'switch', value: 'on' },
        { type: 'DEVICE_EVENT', capability: 'contactSensor', attribute: 'tamper', value: 'open' },
        contact('ajar'),
        contact(1),
      ],
      NOW,
    );
    expect(ignored).toEqual({ plan: [], warnings: [] });
  });

  it('keeps the order of several events in one delivery', () => {
    const { plan } = eventPlan('a', config(), [contact('open'), contact('closed')], NOW);
    expect(summary(plan).map((stage) => stage[0])).toEqual([
      'DELETE /installedapps/a/schedules/lightsOff',
      'POST /devices/hall/commands',
      'POST /installedapps/a/schedules',
    ]);
  });

  it('warns when there are no lights to switch', () => {
    expect(eventPlan('a', { Minutes: config().Minutes }, [contact('open')], NOW).warnings).toEqual([
      expect.stringContaining('no lights'),
    ]);
  });
});

describe('config readers', () => {
  it('devicesOf skips entries without a device and defaults the component', () => {
    expect(
      devicesOf([
        device(' d1 ', ''),
        { ValueType: 'STRING', StringConfig: { Value: '1' } },
        device('d1', null),
      ]),
    ).toEqual([{ deviceId: 'd1', componentId: 'main' }]);
    expect(devicesOf(null)).toEqual([]);
  });

  it('minutesOf reads the first Minutes value', () => {
    expect(minutesOf(config(' 10 '))).toBe(10);
    expect(minutesOf(undefined)).toBeUndefined();
  });
});
