import { describe, expect, it } from '@jest/globals';
import {
  QueryFailedError,
  QueryRunnerAlreadyReleasedError,
  QueryRunnerProviderAlreadyReleasedError,
} from 'typeorm';
import { classifyDatabaseError } from './database-failures.js';

const withCode = (code: string, message = 'driver error') => Object.assign(new Error(message), { code });

describe('classifyDatabaseError', () => {
  it.each([
    ['SQLITE_FULL', 'storage-full'],
    ['53100', 'storage-full'], // disk_full
    ['SQLITE_IOERR', 'unavailable'],
    ['SQLITE_IOERR_WRITE', 'unavailable'],
    ['SQLITE_IOERR_FSYNC', 'unavailable'],
    ['SQLITE_BUSY', 'busy'],
    ['SQLITE_BUSY_SNAPSHOT', 'busy'],
    ['SQLITE_READONLY', 'unavailable'],
    ['SQLITE_READONLY_DBMOVED', 'unavailable'],
    ['SQLITE_CANTOPEN', 'unavailable'],
    ['SQLITE_TRANSACTION_LOST', 'unavailable'],
    ['57P01', 'unavailable'], // admin_shutdown
    ['57P03', 'unavailable'], // cannot_connect_now
    ['08006', 'unavailable'], // connection_failure
    ['53300', 'unavailable'], // too_many_connections
    ['55P03', 'busy'], // lock_not_available
    ['57014', 'busy'], // query_canceled (statement_timeout)
    ['40P01', 'busy'], // deadlock_detected
    ['40001', 'busy'], // serialization_failure
    ['SQLITE_LOCKED', 'busy'],
    ['ECONNREFUSED', 'unavailable'],
    ['ECONNRESET', 'unavailable'],
  ])('%s is %s', (code, kind) => {
    expect(classifyDatabaseError(withCode(code))).toBe(kind);
  });

  it.each([
    ['SQLITE_CONSTRAINT_UNIQUE'],
    ['SQLITE_ERROR'],
    ['23505'], // unique_violation: the request's conflict
    ['22P02'], // invalid_text_representation: a bug or bad input
    ['42P01'], // undefined_table
    ['ENOENT'],
  ])('%s is not a database failure', (code) => {
    expect(classifyDatabaseError(withCode(code))).toBeUndefined();
  });

  it("reads TypeORM's QueryFailedError down to the driver's code", () => {
    const error = new QueryFailedError('INSERT …', [], withCode('SQLITE_FULL', 'database or disk is full'));
    expect(classifyDatabaseError(error)).toBe('storage-full');
  });

  it.each([
    'Connection terminated unexpectedly',
    'Connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error and is not queryable',
  ])('pg’s “%s” is unavailable', (message) => {
    expect(classifyDatabaseError(new Error(message))).toBe('unavailable');
  });

  it('takes a PostgreSQL query runner released under a transaction (its connection died) as unavailable', () => {
    expect(classifyDatabaseError(new QueryRunnerAlreadyReleasedError())).toBe('unavailable');
    // EntityManager.query on that runner (the audit trail's INSERT) names its provider instead.
    expect(classifyDatabaseError(new QueryRunnerProviderAlreadyReleasedError())).toBe('unavailable');
  });

  it('finds a refused connection inside an AggregateError (a host with several addresses)', () => {
    expect(classifyDatabaseError(new AggregateError([withCode('ECONNREFUSED')], 'connect'))).toBe(
      'unavailable',
    );
  });

  it('leaves plain errors and non-errors alone', () => {
    expect(classifyDatabaseError(new Error('boom'))).toBeUndefined();
    expect(classifyDatabaseError(undefined)).toBeUndefined();
    expect(classifyDatabaseError('SQLITE_FULL')).toBeUndefined();
  });
});
