import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, type Repository } from 'typeorm';
import type { NodeDto, ServerDto } from './dto/topology.dto.js';
import { ReplicationNode, ReplicationServer } from './entities/replication.entities.js';
import { ReplicationError } from './replication.errors.js';
import { ReplicationNotifier } from './replication.notifier.js';
import { ReplicationStore } from './replication.store.js';

export interface TopologyOutcome {
  code: 'Updated' | 'Unchanged';
  message: string;
}

/**
 * Servers and nodes register themselves through the agents' calls; operators list, rename and decommission them.
 * A decommissioned server or node leaves every diagnosis (HasChange, FullyReplicated, safe-to-prune point) but
 * keeps its history, and its agent's reports are still recorded, so bringing it back loses nothing.
 */
@Injectable()
export class ReplicationTopologyService {
  constructor(
    @InjectRepository(ReplicationServer) private readonly servers: Repository<ReplicationServer>,
    @InjectRepository(ReplicationNode) private readonly nodes: Repository<ReplicationNode>,
    private readonly store: ReplicationStore,
    private readonly notifier: ReplicationNotifier,
  ) {}

  async list(includeDecommissioned: boolean): Promise<ServerDto[]> {
    const where = includeDecommissioned ? {} : { decommissionedAt: IsNull() };
    const [servers, nodes] = await Promise.all([this.servers.find({ where }), this.nodes.find({ where })]);
    const byServer = new Map<string, NodeDto[]>();
    for (const node of nodes.sort((a, b) => compareIds(a.id, b.id))) {
      const list = byServer.get(node.serverId) ?? [];
      list.push({
        Id: node.id,
        Name: node.name,
        RegisteredAt: node.registeredAt.toISOString(),
        LastSeenAt: node.lastSeenAt?.toISOString() ?? null,
        LastHeartbeatAt: node.lastHeartbeatAt?.toISOString() ?? null,
        AgentVersion: node.agentVersion,
        DecommissionedAt: node.decommissionedAt?.toISOString() ?? null,
      });
      byServer.set(node.serverId, list);
    }
    return servers
      .sort((a, b) => compareIds(a.id, b.id))
      .map((server) => ({
        Id: server.id,
        Name: server.name,
        RegisteredAt: server.registeredAt.toISOString(),
        DecommissionedAt: server.decommissionedAt?.toISOString() ?? null,
        Nodes: byServer.get(server.id) ?? [],
      }));
  }

  async renameServer(id: string, name: string): Promise<TopologyOutcome> {
    const server = await this.servers.findOneBy({ id });
    if (!server) throw ReplicationError.serverNotFound(id);
    if (server.name === name)
      return { code: 'Unchanged', message: `Server "${id}" is already named "${name}".` };
    await this.servers.update({ id }, { name });
    await this.changed();
    return { code: 'Updated', message: `Server "${id}" renamed to "${name}".` };
  }

  async renameNode(id: string, name: string): Promise<TopologyOutcome> {
    const node = await this.nodes.findOneBy({ id });
    if (!node) throw ReplicationError.nodeNotFound(id);
    if (node.name === name) return { code: 'Unchanged', message: `Node "${id}" is already named "${name}".` };
    await this.nodes.update({ id }, { name });
    await this.changed();
    return { code: 'Updated', message: `Node "${id}" renamed to "${name}".` };
  }

  async decommissionServer(id: string, decommissioned: boolean): Promise<TopologyOutcome> {
    const server = await this.servers.findOneBy({ id });
    if (!server) throw ReplicationError.serverNotFound(id);
    if ((server.decommissionedAt !== null) === decommissioned)
      return { code: 'Unchanged', message: `Server "${id}" is already ${state(decommissioned)}.` };
    await this.servers.update({ id }, { decommissionedAt: decommissioned ? new Date() : null });
    await this.changed();
    return { code: 'Updated', message: `Server "${id}" is now ${state(decommissioned)}.` };
  }

  async decommissionNode(id: string, decommissioned: boolean): Promise<TopologyOutcome> {
    const node = await this.nodes.findOneBy({ id });
    if (!node) throw ReplicationError.nodeNotFound(id);
    if ((node.decommissionedAt !== null) === decommissioned)
      return { code: 'Unchanged', message: `Node "${id}" is already ${state(decommissioned)}.` };
    await this.nodes.update({ id }, { decommissionedAt: decommissioned ? new Date() : null });
    await this.changed();
    return { code: 'Updated', message: `Node "${id}" is now ${state(decommissioned)}.` };
  }

  /** The scope of every diagnosis may have changed: wake all waits, here and on other instances. */
  private async changed(): Promise<void> {
    const notify = this.store.notify(this.notifier.payloadAll());
    if (notify.length > 0) await this.store.sql.transaction(notify);
    this.notifier.publishAll();
  }
}

function state(decommissioned: boolean): string {
  return decommissioned ? 'decommissioned' : 'in service';
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
