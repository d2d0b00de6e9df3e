// Lifecycle bodies in the camelCase SmartThings sends (shapes from the SmartThings developer docs,
// "Lifecycles"), a PascalCase twin as the interface document shows them, and signed delivery to the webhook.
import { randomUUID } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import {
  signRequest,
  TEST_SMARTTHINGS_KEY_ID,
} from '../../src/device-webhook/signature/signature-test-kit.js';
import type { TestApp } from '../support/test-app.js';

export type Body = Record<string, unknown>;

export interface AppSetup {
  installedAppId: string;
  locationId?: string;
  contactSensors?: string[];
  lights?: string[];
  minutes?: string;
}

export function configOf(setup: AppSetup): Body {
  const device = (deviceId: string) => ({
    valueType: 'DEVICE',
    deviceConfig: { deviceId, componentId: 'main' },
  });
  return {
    contactSensor: (setup.contactSensors ?? ['door-1']).map(device),
    lightSwitch: (setup.lights ?? ['light-1', 'light-2']).map(device),
    minutes: [{ valueType: 'STRING', stringConfig: { value: setup.minutes ?? '5' } }],
    // Real deliveries carry settings this app does not define; they must be ignored, not rejected.
    someOtherSetting: [{ valueType: 'STRING', stringConfig: { value: 'x' } }],
  };
}

function installedApp(setup: AppSetup): Body {
  return {
    installedAppId: setup.installedAppId,
    locationId: setup.locationId ?? 'e675a3d9-2499-406c-86dc-8a492a886494',
    config: configOf(setup),
    permissions: ['r:devices:door-1', 'x:devices:light-1'],
  };
}

const envelope = (lifecycle: string): Body => ({
  lifecycle,
  executionId: randomUUID(),
  appId: 'fd9949ee-a3bf-4069-b4b3-3e9c1c922e29',
  locale: 'en',
  version: '0.1.0',
  client: { os: 'android', version: '1.7.61', language: 'en-US' },
  settings: {},
});

export const bodies = {
  ping: (challenge: string = randomUUID()): Body => ({ ...envelope('PING'), pingData: { challenge } }),
  confirmation: (confirmationUrl: string): Body => {
    // CONFIRMATION names its lifecycle in messageType.
    const { lifecycle: _lifecycle, ...rest } = envelope('CONFIRMATION');
    return {
      ...rest,
      messageType: 'CONFIRMATION',
      confirmationData: { appId: 'fd9949ee-a3bf-4069-b4b3-3e9c1c922e29', confirmationUrl },
    };
  },
  configuration: (phase: 'INITIALIZE' | 'PAGE', installedAppId = randomUUID()): Body => ({
    ...envelope('CONFIGURATION'),
    configurationData: {
      installedAppId,
      phase,
      pageId: phase === 'PAGE' ? '1' : '',
      previousPageId: '',
      config: {},
    },
  }),
  install: (setup: AppSetup, authToken: string, refreshToken: string): Body => ({
    ...envelope('INSTALL'),
    installData: { authToken, refreshToken, installedApp: installedApp(setup) },
  }),
  update: (setup: AppSetup, authToken: string, refreshToken: string): Body => ({
    ...envelope('UPDATE'),
    updateData: {
      authToken,
      refreshToken,
      installedApp: installedApp(setup),
      previousConfig: configOf({ installedAppId: setup.installedAppId }),
      previousPermissions: ['r:devices:door-1'],
    },
  }),
  contact: (setup: AppSetup, authToken: string, value: 'open' | 'closed', eventId = randomUUID()): Body => ({
    ...envelope('EVENT'),
    eventData: {
      authToken,
      installedApp: installedApp(setup),
      events: [
        {
          eventTime: new Date().toISOString(),
          eventType: 'DEVICE_EVENT',
          deviceEvent: {
            subscriptionName: 'contactSensor_0',
            eventId,
            locationId: setup.locationId ?? 'e675a3d9-2499-406c-86dc-8a492a886494',
            ownerType: 'LOCATION',
            deviceId: (setup.contactSensors ?? ['door-1'])[0],
            componentId: 'main',
            capability: 'contactSensor',
            attribute: 'contact',
            value,
            valueType: 'string',
            stateChange: true,
            data: {},
          },
        },
      ],
    },
  }),
  timer: (setup: AppSetup, authToken: string, name = 'lightsOff', eventId = randomUUID()): Body => ({
    ...envelope('EVENT'),
    eventData: {
      authToken,
      installedApp: installedApp(setup),
      events: [
        {
          eventTime: new Date().toISOString(),
          eventType: 'TIMER_EVENT',
          timerEvent: { eventId, name, type: 'ONCE', time: new Date().toISOString(), expression: null },
        },
      ],
    },
  }),
  oauthCallback: (installedAppId: string, key: 'oAuthCallbackData' | 'oauthCallbackData'): Body => ({
    ...envelope('OAUTH_CALLBACK'),
    [key]: { installedAppId, urlPath: '/callback?code=abc' },
  }),
  uninstall: (setup: AppSetup): Body => ({
    ...envelope('UNINSTALL'),
    uninstallData: { installedApp: installedApp(setup) },
  }),
};

/** The interface document's casing: every key with an upper-case first letter, at every depth. */
export function pascalCase(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(pascalCase);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key.charAt(0).toUpperCase() + key.slice(1),
      pascalCase(inner),
    ]),
  );
}

export const webhookPath = (domain: string): string => `/api/v1/webhook/homeprovider/${domain}`;

export interface DeliverOptions {
  privateKey: KeyObject;
  keyId?: string;
  /** Sign for this path (default: the one posted to). */
  signedPath?: string;
  /** Sign this text but send `body` (tampering). */
  signedBody?: string;
  date?: Date;
  headers?: Record<string, string>;
  unsigned?: boolean;
}

/** POSTs a lifecycle as SmartThings does: raw JSON bytes, signed over (request-target) digest date. */
export function deliver(
  t: TestApp,
  domain: string,
  body: unknown,
  options: DeliverOptions,
): Promise<LightMyRequestResponse> {
  const path = webhookPath(domain);
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  const signed = options.unsigned
    ? {}
    : signRequest({
        privateKey: options.privateKey,
        keyId: options.keyId ?? TEST_SMARTTHINGS_KEY_ID,
        path: options.signedPath ?? path,
        body: options.signedBody ?? payload,
        date: options.date,
      }).headers;
  return t.request({
    method: 'POST',
    url: path,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'SmartThings-Webhook',
      ...signed,
      ...options.headers,
    },
    payload,
  });
}
