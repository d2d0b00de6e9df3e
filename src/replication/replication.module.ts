import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ChangeSetStateService } from './change-set-state.service.js';
import { registerEntities } from '../database/entity-registry.js';
import { REPLICATION_ENTITIES, ReplicationNode, ReplicationServer } from './entities/replication.entities.js';
import { ReplicationAgentController } from './replication-agent.controller.js';
import { ReplicationDiagnosticsController } from './replication-diagnostics.controller.js';
import { ReplicationIngestionService } from './replication-ingestion.service.js';
import { ReplicationTopologyController } from './replication-topology.controller.js';
import { ReplicationTopologyService } from './replication-topology.service.js';
import { ReplicationMetrics } from './replication.metrics.js';
import { ReplicationNotifier } from './replication.notifier.js';
import { ReplicationRetention } from './replication-retention.js';
import { ReplicationStore } from './replication.store.js';

/** Replication diagnostics (operation 5, docs/replication.md): agent ingestion, the diagnosis with its wait, topology. */
registerEntities(REPLICATION_ENTITIES);

@Module({
  imports: [TypeOrmModule.forFeature([ReplicationServer, ReplicationNode])],
  controllers: [ReplicationAgentController, ReplicationDiagnosticsController, ReplicationTopologyController],
  providers: [
    ReplicationStore,
    ReplicationNotifier,
    ReplicationIngestionService,
    ChangeSetStateService,
    ReplicationTopologyService,
    ReplicationMetrics,
    ReplicationRetention,
  ],
})
export class ReplicationModule {}
