import { ApiError } from '../errors/api-error.js';

export enum ReplicationErrorCode {
  ChangeSetNotFound = 'ChangeSetNotFound',
  /** LocalOnly asked of an instance without REPLICATION_SERVER_ID. */
  LocalServerNotConfigured = 'LocalServerNotConfigured',
  ServerNotFound = 'ServerNotFound',
  NodeNotFound = 'NodeNotFound',
}

export class ReplicationError extends ApiError<ReplicationErrorCode> {
  /** Business outcomes (as every RPC operation): 200 with Succeeded:false, keeping the operation's documented fields. */
  readonly status = 200;

  static changeSetNotFound(collection: string, origin: string, reason: string): ReplicationError {
    return new ReplicationError(
      ReplicationErrorCode.ChangeSetNotFound,
      `No change set to evaluate for origin "${origin}" in "${collection}": ${reason}`,
      undefined,
      stateFields(collection, origin),
    );
  }

  static localServerNotConfigured(collection: string, origin: string): ReplicationError {
    return new ReplicationError(
      ReplicationErrorCode.LocalServerNotConfigured,
      'LocalOnly needs REPLICATION_SERVER_ID: this instance does not know which server it answers for.',
      undefined,
      stateFields(collection, origin),
    );
  }

  static serverNotFound(server: string): ReplicationError {
    return new ReplicationError(ReplicationErrorCode.ServerNotFound, `No server "${server}" has registered.`);
  }

  static nodeNotFound(node: string): ReplicationError {
    return new ReplicationError(ReplicationErrorCode.NodeNotFound, `No node "${node}" has registered.`);
  }
}

/** Operation 5's documented fields, for an answer that could not evaluate a change set. */
function stateFields(collection: string, origin: string): Record<string, unknown> {
  return { Servers: null, Collection: collection, Node: origin, ChangeSet: null, FullyReplicated: false };
}
