// Every operation of the served document sent the way Swagger UI's "Try it out" pre-fills it:
// the parameters' examples and defaults, the request body's example (or Swagger UI's sample of its schema), an
// admin key, against a fresh instance. Each must answer 2xx, except the answers the document itself says the
// example gets (the unsigned webhook's 401). A path id names the resource the operation's own creating POST made
// from its example (ids are assigned by the service: no example id can exist on a fresh instance, and the `id`
// parameters carry no example for that reason).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EgressService } from '../src/egress/egress.service.js';
import { SwaggerUiSampler, type PrefilledRequest } from './support/swagger-ui-request.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

type Json = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  operation: Json;
}

/** Answers other than 2xx the document announces for the pre-filled request, by operationId. */
const DOCUMENTED_EXCEPTIONS: Record<string, { status: number; described: string }> = {
  // Only SmartThings can sign a lifecycle; the operation's description says so.
  Webhook_HomeProvider: { status: 401, described: 'answered 401 Unauthorized' },
  // Installed apps come from a signed INSTALL only.
  Webhook_ListDeviceEvents: { status: 404, described: 'every id is answered 404 InstalledAppNotFound' },
};

/** Where each path's `{id}` comes from: the creating operation whose answer names it. */
const CREATED_BY: Array<[RegExp, string]> = [
  [/^\/api\/v1\/Schedule\/\{id\}/, 'Schedule_Create'],
  [/^\/api\/v1\/scim\/(Users|users)\/\{id\}/, 'Scim_CreateUser'],
  [/^\/api\/v1\/scim\/Groups\/\{id\}/, 'Scim_CreateGroup'],
];

let t: TestApp;
let document: Json;
const created = new Map<string, string>();

function operations(): Operation[] {
  const all: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Json>>))
    for (const [method, operation] of Object.entries(item))
      if (typeof operation.operationId === 'string') all.push({ method, path, operation });
  // Creating POSTs first (their answers name the ids), deletions last.
  const rank = ({ method, path }: Operation): number =>
    method === 'delete' ? 2 : method === 'post' && !path.includes('{') && !path.includes('.search') ? 0 : 1;
  return all.sort((a, b) => rank(a) - rank(b));
}

function url(path: string, request: PrefilledRequest): string {
  let filled = path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = request.path[name];
    if (value === undefined) throw new Error(`${path}: no value for {${name}}`);
    return encodeURIComponent(value);
  });
  const query = new URLSearchParams();
  for (const [name, values] of Object.entries(request.query)) for (const v of values) query.append(name, v);
  if (query.size > 0) filled += `?${query.toString()}`;
  return filled;
}

function idOf(body: Json): string | undefined {
  const result = body.Result as Json | undefined;
  const id = result?.Id ?? body.id;
  return typeof id === 'string' ? id : undefined;
}

beforeAll(async () => {
  t = await startTestApp({ env: { OUTBOUND_DENY: '192.0.2.0/24' } });
  document = (await t.request({ method: 'GET', url: '/docs-json' })).json<Json>();
  // The mail examples name smtp.example.com: it resolves to a documentation address (192.0.2.0/24) when the
  // configuration is stored, and nothing connects beyond loopback (OUTBOUND_DENY refuses that range at connect).
  t.app.get(EgressService).lookup = () => Promise.resolve([{ address: '192.0.2.1', family: 4 }]);
});

afterAll(async () => {
  await t?.close();
});

describe('every example of the document, sent as Swagger UI sends it', () => {
  it('answers 2xx (or the answer the document announces), for every operation', async () => {
    const sampler = new SwaggerUiSampler(document);
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const { method, path, operation } of operations()) {
      const id = String(operation.operationId);
      const request = sampler.prefilled(operation);
      const creator = CREATED_BY.find(([pattern]) => pattern.test(path))?.[1];
      if (creator !== undefined && path.includes('{id}')) request.path.id = created.get(creator) ?? 'none';
      // The export of several schedules names existing ones in its query (no example for the same reason).
      if (id === 'Schedule_ExportIcalMany') request.query.ids = [created.get('Schedule_Create') ?? 'none'];
      if (path.includes('{installedAppId}'))
        request.path.installedAppId = '00000000-0000-4000-8000-000000000000';
      const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_KEY}`, ...request.headers };
      if (request.body !== undefined) headers['content-type'] = request.body.mediaType;
      const response = await t.request({
        method: method.toUpperCase(),
        url: url(path, request),
        headers,
        ...(request.body === undefined
          ? {}
          : {
              payload:
                typeof request.body.value === 'string'
                  ? request.body.value
                  : JSON.stringify(request.body.value),
            }),
      });
      const body =
        response.body.length > 0 && response.headers['content-type']?.toString().includes('json')
          ? response.json<Json>()
          : {};
      const createdId = idOf(body);
      if (createdId !== undefined && !created.has(id)) created.set(id, createdId);
      const exception = DOCUMENTED_EXCEPTIONS[id];
      const status = response.statusCode;
      outcomes.push(
        status >= 200 && status < 300
          ? `${id} 2xx`
          : status === exception?.status
            ? `${id} ${status}`
            : `${id} ${status} ${response.body.slice(0, 300)}`,
      );
      expected.push(exception === undefined ? `${id} 2xx` : `${id} ${exception.status}`);
      if (exception !== undefined)
        expect([id, String(operation.description)]).toEqual([
          id,
          expect.stringContaining(exception.described),
        ]);
    }
    expect(outcomes).toEqual(expected);
  });
});
