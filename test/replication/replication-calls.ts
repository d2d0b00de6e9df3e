// Small factories for the replication agent calls and operation 5 (overrides per test, no copied literals).
import { expect } from '@jest/globals';
import type { TestApp } from '../support/test-app.js';

export const COLLECTION = 'orders';
export const ORIGIN = 'berlin-1';

export interface ReportBody {
  Server: string;
  Node: string;
  Collection?: string;
  Origin?: string;
  AppliedChangeSet: number;
  AppliedAt?: string;
  Errors?: Array<{ Code: string; Message: string; ChangeSet?: number | null; Data?: string | null }>;
}

export const secondsAgo = (seconds: number): string => new Date(Date.now() - seconds * 1000).toISOString();

export async function created(t: TestApp, changeSet: number, overrides: Record<string, unknown> = {}) {
  const response = await t.post('/api/v1/Replication/Agent/changeSetCreated', {
    Collection: COLLECTION,
    Node: ORIGIN,
    ChangeSet: changeSet,
    CreatedAt: secondsAgo(60 - changeSet),
    ...overrides,
  });
  expect(response.statusCode).toBe(200);
  return response.json();
}

export async function report(t: TestApp, body: ReportBody) {
  const response = await t.post('/api/v1/Replication/Agent/report', {
    Collection: COLLECTION,
    Origin: ORIGIN,
    AppliedAt: secondsAgo(1),
    ...body,
  });
  expect(response.statusCode).toBe(200);
  return response.json();
}

export async function heartbeat(t: TestApp, server: string, node: string, at = secondsAgo(0)) {
  const response = await t.post('/api/v1/Replication/Agent/heartbeat', {
    Server: server,
    Node: node,
    At: at,
    AgentVersion: '3.4.1',
  });
  expect(response.statusCode).toBe(200);
  return response.json();
}

export async function state(t: TestApp, body: Record<string, unknown> = {}) {
  const response = await t.post('/api/v1/Replication/Diagnostics/changeSetState', {
    Collection: COLLECTION,
    Node: ORIGIN,
    Increment: 0,
    LocalOnly: false,
    ...body,
  });
  expect(response.statusCode).toBe(200);
  return response.json();
}

interface InfoEntry {
  IsError: boolean;
  Type: string;
  Message: string;
  Data: string;
  Timestamps: string[];
}
interface NodeState {
  Node: { Id: string; Name: string };
  HasChange: boolean;
  Info: InfoEntry[];
}
interface ServerState {
  Server: { Id: string; Name: string };
  HasChange: boolean;
  Nodes: NodeState[];
  Info: InfoEntry[];
}

export function nodeOf(answer: { Servers: ServerState[] }, nodeId: string): NodeState {
  const node = answer.Servers.flatMap((server) => server.Nodes).find(
    (candidate) => candidate.Node.Id === nodeId,
  );
  if (!node) throw new Error(`node ${nodeId} not in the answer`);
  return node;
}

export function serverOf(answer: { Servers: ServerState[] }, serverId: string): ServerState {
  const server = answer.Servers.find((candidate) => candidate.Server.Id === serverId);
  if (!server) throw new Error(`server ${serverId} not in the answer`);
  return server;
}

export const types = (info: InfoEntry[]): string[] => info.map((entry) => entry.Type);
export const dataOf = (info: InfoEntry[], type: string): Record<string, unknown> =>
  JSON.parse(info.find((entry) => entry.Type === type)?.Data ?? 'null') as Record<string, unknown>;
