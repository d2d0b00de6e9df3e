import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ChangeSetStateService } from './change-set-state.service.js';
import { ReplicationNode, ReplicationServer } from './entities/replication.entities.js';
import { ReplicationAgentController } from './replication-agent.controller.js';
import { ReplicationDiagnosticsController } from './replication-diagnostics.controller.js';
import { ReplicationIngestionService } from './replication-ingestion.service.js';
import { ReplicationTopologyController } from './replication-topology.controller.js';
import { ReplicationTopologyService } from './replication-topology.service.js';
import { ReplicationMetrics } from './replication.metrics.js';
import { ReplicationNotifier } from './replication.notifier.js';
import { ReplicationStore } from './replication.store.js';

/** Replication diagnostics (DESIGN §6, operation 5): agent ingestion, the diagnosis with its wait, topology. */
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
  ],
})
export class ReplicationModule {}
