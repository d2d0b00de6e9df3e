// The door/lights automation (docs/device-webhook.md) as plain data: which SmartThings API calls (SmartThings REST API:
// installedapps/{id}/subscriptions, installedapps/{id}/schedules, devices/{id}/commands) a lifecycle leads to.
// Executing them (tokens, retries, time budget) is someone else's job, so this file can be tested alone.
import { LIGHTS_OFF_SCHEDULE } from './smartapp-definition.js';
import { SMARTTHINGS_ID } from './smartthings-id.js';

export interface DeviceConfigValue {
  DeviceId?: string | null;
  ComponentId?: string | null;
}

export interface ConfigEntryValue {
  ValueType?: string | null;
  DeviceConfig?: DeviceConfigValue | null;
  StringConfig?: { Value?: string | null } | null;
}

/** The installed app's settings, in the interface document's casing (Config). */
export interface SmartAppConfig {
  ContactSensor?: ConfigEntryValue[] | null;
  LightSwitch?: ConfigEntryValue[] | null;
  Minutes?: ConfigEntryValue[] | null;
}

export interface ApiCall {
  method: 'POST' | 'DELETE';
  /** Relative to SMARTTHINGS_API_URL; every id in it is percent-encoded. */
  path: string;
  body?: unknown;
  /**
   * Answers that mean "already so" and end the call successfully: a delete of something absent (404), a
   * subscription that a retried request already created (409).
   */
  alsoOk: readonly number[];
  /** For logs: what the call is for, without ids or secrets. */
  purpose: string;
}

/** Calls in one stage run together; stages run in order. */
export type ApiPlan = ApiCall[][];

export type AutomationEvent =
  | {
      type: 'DEVICE_EVENT';
      capability: string | null | undefined;
      attribute: string | null | undefined;
      value: unknown;
    }
  | { type: 'TIMER_EVENT'; name: string };

export interface PlannedWork {
  plan: ApiPlan;
  /** Things an operator should know (e.g. an unusable Minutes setting), for the log. */
  warnings: string[];
}

/** The most a one-off schedule may lie ahead: SmartThings refuses schedules two years out or more. */
export const MAX_MINUTES = 365 * 24 * 60;

const enc = encodeURIComponent;

interface DeviceRef {
  deviceId: string;
  componentId: string;
}

export function devicesOf(entries: readonly ConfigEntryValue[] | null | undefined): DeviceRef[] {
  const seen = new Set<string>();
  const devices: DeviceRef[] = [];
  for (const entry of entries ?? []) {
    const deviceId = entry.DeviceConfig?.DeviceId?.trim();
    // Never a path segment that is not an id (stored configurations predate the input check).
    if (!deviceId || !SMARTTHINGS_ID.test(deviceId)) continue;
    const componentId = entry.DeviceConfig?.ComponentId?.trim() || 'main';
    const key = `${deviceId}\u0000${componentId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    devices.push({ deviceId, componentId });
  }
  return devices;
}

/** Minutes from the first Minutes entry; undefined when absent or not a number in 0..MAX_MINUTES. */
export function minutesOf(config: SmartAppConfig | null | undefined): number | undefined {
  const raw = config?.Minutes?.[0]?.StringConfig?.Value;
  if (raw === undefined || raw === null || raw.trim() === '') return undefined;
  const minutes = Number(raw.trim());
  return Number.isFinite(minutes) && minutes >= 0 && minutes <= MAX_MINUTES ? minutes : undefined;
}

/** INSTALL / UPDATE: drop what an earlier configuration set up, then subscribe every contact sensor. */
export function subscriptionPlan(installedAppId: string, config: SmartAppConfig | null | undefined): ApiPlan {
  const base = `/installedapps/${enc(installedAppId)}`;
  const subscribe = devicesOf(config?.ContactSensor).map((device, index): ApiCall => ({
    method: 'POST',
    path: `${base}/subscriptions`,
    body: {
      sourceType: 'DEVICE',
      device: {
        deviceId: device.deviceId,
        componentId: device.componentId,
        capability: 'contactSensor',
        attribute: 'contact',
        stateChangeOnly: true,
        subscriptionName: `contactSensor_${index}`,
        value: '*',
      },
    },
    alsoOk: [409],
    purpose: 'subscribe contact sensor',
  }));
  const clear: ApiCall[] = [
    { method: 'DELETE', path: `${base}/subscriptions`, alsoOk: [404], purpose: 'delete subscriptions' },
    { method: 'DELETE', path: `${base}/schedules`, alsoOk: [404], purpose: 'delete schedules' },
  ];
  return subscribe.length > 0 ? [clear, subscribe] : [clear];
}

function switchCalls(config: SmartAppConfig | null | undefined, command: 'on' | 'off'): ApiCall[] {
  return devicesOf(config?.LightSwitch).map((light) => ({
    method: 'POST',
    path: `/devices/${enc(light.deviceId)}/commands`,
    body: { commands: [{ component: light.componentId, capability: 'switch', command, arguments: [] }] },
    alsoOk: [],
    purpose: `switch ${command}`,
  }));
}

/** EVENT: each new event in order; events that are not the automation's are ignored. */
export function eventPlan(
  installedAppId: string,
  config: SmartAppConfig | null | undefined,
  events: readonly AutomationEvent[],
  nowMs: number,
): PlannedWork {
  const base = `/installedapps/${enc(installedAppId)}`;
  const plan: ApiPlan = [];
  const warnings: string[] = [];
  const push = (stage: ApiCall[]): void => {
    if (stage.length > 0) plan.push(stage);
  };
  const lightsOff = (): void => {
    const off = switchCalls(config, 'off');
    if (off.length === 0) warnings.push('no lights are configured (lightSwitch)');
    push(off);
  };

  for (const event of events) {
    if (event.type === 'TIMER_EVENT') {
      if (event.name === LIGHTS_OFF_SCHEDULE) lightsOff();
      continue;
    }
    if (event.capability !== 'contactSensor' || event.attribute !== 'contact') continue;
    if (event.value === 'open') {
      push([
        {
          method: 'DELETE',
          path: `${base}/schedules/${LIGHTS_OFF_SCHEDULE}`,
          alsoOk: [404],
          purpose: 'cancel lightsOff',
        },
      ]);
      const on = switchCalls(config, 'on');
      if (on.length === 0) warnings.push('no lights are configured (lightSwitch)');
      push(on);
    } else if (event.value === 'closed') {
      const minutes = minutesOf(config);
      if (minutes === undefined) {
        warnings.push(`Minutes is missing or not a number between 0 and ${MAX_MINUTES}; lights stay on`);
      } else if (minutes === 0) {
        lightsOff();
      } else {
        push([
          {
            method: 'POST',
            path: `${base}/schedules`,
            body: {
              name: LIGHTS_OFF_SCHEDULE,
              once: { time: nowMs + Math.round(minutes * 60_000), overwrite: true },
            },
            alsoOk: [],
            purpose: 'schedule lightsOff',
          },
        ]);
      }
    }
  }
  return { plan, warnings };
}
