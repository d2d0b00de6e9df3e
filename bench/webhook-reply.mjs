// Device webhook reply latency (operation 6) with the production timings (reply budget 2.5 s): how long SmartThings
// waits for a lifecycle answer when its API is fast, slow, or down. The real app (createApp from dist/, MODULES=
// webhook, fresh SQLite file, LOG_LEVEL=silent) listens on 127.0.0.1; a fake SmartThings API in this process
// answers the automation's calls. Requests go over real HTTP (fetch), one at a time, signed with a test key.
// Run after `npm run build`:   node bench/webhook-reply.mjs [--requests 200] [--slow 5]
import 'reflect-metadata';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist/src');
const load = (file) => import(pathToFileURL(path.join(DIST, file)).href);

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '200' },
    slow: { type: 'string', default: '5', description: 'seconds the slow API takes per call' },
  },
});
const REQUESTS = Number(args.requests);
const SLOW_MS = Number(args.slow) * 1000;

const { loadConfig } = await load('config/config.js');
const { createApp } = await load('create-app.js');
const { createRootLogger } = await load('logging/logger.js');
const { buildSigningString, computeDigest } = await load('device-webhook/signature/index.js');

// Signs like SmartThings (the test kit is not part of the build): (request-target) digest date, rsa-sha256.
function signedHeaders(privateKey, requestPath, payload) {
  const headers = { date: new Date().toUTCString(), digest: computeDigest(Buffer.from(payload)) };
  const names = ['(request-target)', 'digest', 'date'];
  const text = buildSigningString({ method: 'POST', path: requestPath, headers, signedHeaderNames: names });
  const signature = sign('sha256', Buffer.from(text.value, 'latin1'), privateKey).toString('base64');
  headers.authorization = `Signature keyId="/SmartThings/bench",signature="${signature}",headers="${names.join(' ')}",algorithm="rsa-sha256"`;
  return headers;
}

// ---- fake SmartThings API ------------------------------------------------------------------------------------
let apiMode = 'fast';
let apiCalls = 0;
const api = http.createServer((request, response) => {
  apiCalls++;
  request.resume();
  if (apiMode === 'down') {
    request.socket.destroy();
    return;
  }
  const answer = () => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{}');
  };
  if (apiMode === 'slow') setTimeout(answer, SLOW_MS).unref();
  else answer();
});
await new Promise((resolve) => api.listen(0, '127.0.0.1', resolve));
const apiUrl = `http://127.0.0.1:${api.address().port}`;

// ---- the service -------------------------------------------------------------------------------------------
const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicKeyPem = keys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-webhook-'));
const keyFile = path.join(dataDir, 'smartthings.pem');
writeFileSync(keyFile, publicKeyPem);
const config = loadConfig({
  DATA_DIR: dataDir,
  DATABASE_URL: `sqlite:${path.join(dataDir, 'bench.sqlite')}`,
  API_KEYS: 'bench-admin-key-0123456789',
  MODULES: 'webhook',
  RATE_LIMIT: '0',
  LOG_LEVEL: 'silent',
  SMARTTHINGS_PUBLIC_KEY_FILE: keyFile,
  SMARTTHINGS_API_URL: apiUrl,
});
const { app } = await createApp(config, createRootLogger('silent'));
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
const WEBHOOK = '/api/v1/webhook/homeprovider/bench';

async function post(body, signed = true) {
  const payload = JSON.stringify(body);
  const headers = signed ? signedHeaders(keys.privateKey, WEBHOOK, payload) : {};
  const started = performance.now();
  const response = await fetch(base + WEBHOOK, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: payload,
  });
  await response.arrayBuffer();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`HTTP ${response.status} for ${body.lifecycle}`);
  return ms;
}

const installedApp = (installedAppId) => ({
  installedAppId,
  locationId: 'loc-1',
  config: {
    contactSensor: [{ valueType: 'DEVICE', deviceConfig: { deviceId: 'door', componentId: 'main' } }],
    lightSwitch: ['l1', 'l2'].map((deviceId) => ({
      valueType: 'DEVICE',
      deviceConfig: { deviceId, componentId: 'main' },
    })),
    minutes: [{ valueType: 'STRING', stringConfig: { value: '5' } }],
  },
  permissions: [],
});
const bodies = {
  ping: () => ({ lifecycle: 'PING', executionId: randomUUID(), pingData: { challenge: randomUUID() } }),
  initialize: () => ({
    lifecycle: 'CONFIGURATION',
    executionId: randomUUID(),
    configurationData: {
      installedAppId: 'x',
      phase: 'INITIALIZE',
      pageId: '',
      previousPageId: '',
      config: {},
    },
  }),
  install: (id) => ({
    lifecycle: 'INSTALL',
    executionId: randomUUID(),
    installData: { authToken: 'a', refreshToken: 'r', installedApp: installedApp(id) },
  }),
  open: (id) => ({
    lifecycle: 'EVENT',
    executionId: randomUUID(),
    eventData: {
      authToken: 'a',
      installedApp: installedApp(id),
      events: [
        {
          eventType: 'DEVICE_EVENT',
          deviceEvent: {
            eventId: randomUUID(),
            deviceId: 'door',
            componentId: 'main',
            capability: 'contactSensor',
            attribute: 'contact',
            value: 'open',
            stateChange: true,
          },
        },
      ],
    },
  }),
};

function stats(label, samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  console.log(
    `${label.padEnd(58)} n=${String(sorted.length).padStart(4)}  p50 ${at(0.5).toFixed(1).padStart(7)} ms` +
      `  p99 ${at(0.99).toFixed(1).padStart(7)} ms  max ${sorted.at(-1).toFixed(1).padStart(7)} ms`,
  );
}

async function series(label, count, make, signed = true) {
  for (let i = 0; i < Math.min(20, count); i++) await post(make(i), signed); // warm-up, discarded
  const samples = [];
  for (let i = 0; i < count; i++) samples.push(await post(make(i), signed));
  stats(label, samples);
}

console.log(
  `node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, load ${os.loadavg()[0].toFixed(2)}`,
);
try {
  await series('PING (unsigned, echo)', REQUESTS, () => bodies.ping(), false);
  await series('CONFIGURATION/INITIALIZE (signature verified)', REQUESTS, () => bodies.initialize());
  const app1 = randomUUID();
  await post(bodies.install(app1));
  apiMode = 'fast';
  await series('EVENT open, fast API (reply after 3 calls completed)', REQUESTS, () => bodies.open(app1));
  apiMode = 'slow';
  const slowCount = 5;
  const slow = [];
  for (let i = 0; i < slowCount; i++) slow.push(await post(bodies.open(randomUUID())));
  stats(`EVENT open, API answering after ${SLOW_MS / 1000} s (budget 2.5 s)`, slow);
  apiMode = 'down';
  const down = [];
  for (let i = 0; i < slowCount; i++) down.push(await post(bodies.open(randomUUID())));
  stats('EVENT open, API dropping every connection (retries go on)', down);
  console.log(`fake API saw ${apiCalls} calls; SmartThings' limit is 10,000 ms per lifecycle call`);
} finally {
  await app.close();
  api.closeAllConnections();
  api.close();
  rmSync(dataDir, { recursive: true, force: true });
}
