import { describe, expect, it } from 'vitest';
import { parseDependencyFailure } from '../../../../src/triage/kube/dependency-failures.js';

describe('parseDependencyFailure', () => {
  it.each([
    // Go net/http, database/sql, gRPC
    ['dial tcp 10.96.0.20:5432: connect: connection refused', { host: '10.96.0.20', port: 5432, kind: 'connect' }],
    [
      'failed to connect to `host=postgres user=app database=orders`: dial error (dial tcp 10.96.0.20:5432: connect: connection refused)',
      { host: '10.96.0.20', port: 5432, kind: 'connect' },
    ],
    [
      'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 10.96.0.31:50051: i/o timeout"',
      { host: '10.96.0.31', port: 50051, kind: 'connect' },
    ],
    [
      'dial tcp: lookup postgres.db.svc.cluster.local on 10.96.0.10:53: no such host',
      { host: 'postgres.db.svc.cluster.local', kind: 'dns' },
    ],
    ['dial tcp: lookup inventory: i/o timeout', { host: 'inventory', kind: 'dns' }],
    // Node.js
    ['Error: connect ECONNREFUSED 10.96.0.20:5432', { host: '10.96.0.20', port: 5432, kind: 'connect' }],
    ['Error: getaddrinfo ENOTFOUND redis.cache.svc', { host: 'redis.cache.svc', kind: 'dns' }],
    ['Error: getaddrinfo EAI_AGAIN orders', { host: 'orders', kind: 'dns' }],
    // Python
    [
      'psycopg2.OperationalError: could not translate host name "postgres" to address: Name or service not known',
      { host: 'postgres', kind: 'dns' },
    ],
    [
      'redis.exceptions.ConnectionError: Error 111 connecting to redis:6379. Connection refused.',
      { host: 'redis', port: 6379, kind: 'connect' },
    ],
    // Java
    [
      'java.net.UnknownHostException: orders.shop.svc: Name or service not known',
      { host: 'orders.shop.svc', kind: 'dns' },
    ],
    [
      'org.postgresql.util.PSQLException: Connection to postgres.db.svc:5432 refused. Check that the hostname and port are correct and that the postmaster is accepting TCP/IP connections.',
      { host: 'postgres.db.svc', port: 5432, kind: 'connect' },
    ],
    // PostgreSQL's libpq (psql, psycopg, pg_isready) from version 14 on
    [
      'psql: error: connection to server at "postgres.db.svc" (10.96.0.20), port 5432 failed: Connection refused',
      { host: 'postgres.db.svc', port: 5432, kind: 'connect' },
    ],
  ])('reads %j', (line, expected) => {
    expect(parseDependencyFailure(line)).toEqual({ ...expected, line });
  });

  it('reads the host Python requests could not reach', () => {
    const refused =
      "requests.exceptions.ConnectionError: HTTPConnectionPool(host='inventory', port=8080): Max retries exceeded with url: /api/stock (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f3a2c1d0b50>: Failed to establish a new connection: [Errno 111] Connection refused'))";
    expect(parseDependencyFailure(refused)).toMatchObject({ host: 'inventory', port: 8080, kind: 'connect' });
    const unresolved =
      "requests.exceptions.ConnectionError: HTTPConnectionPool(host='inventroy', port=8080): Max retries exceeded with url: /api/stock (Caused by NameResolutionError(\"<urllib3.connection.HTTPConnection object at 0x7f3a2c1d0b50>: Failed to resolve 'inventroy' ([Errno -2] Name or service not known)\"))";
    expect(parseDependencyFailure(unresolved)).toMatchObject({ host: 'inventroy', port: 8080, kind: 'dns' });
  });

  it('treats a name that does not resolve as DNS whatever the client calls it', () => {
    expect(parseDependencyFailure('Error -2 connecting to redis:6379. Name or service not known.')?.kind).toBe('dns');
    expect(
      parseDependencyFailure('Error -3 connecting to redis:6379. Temporary failure in name resolution.')?.kind,
    ).toBe('dns');
  });

  it('finds no host in lines that name none', () => {
    expect(
      parseDependencyFailure('HikariPool-1 - Connection is not available, request timed out after 30000ms.'),
    ).toBeUndefined();
    expect(parseDependencyFailure('Caused by: java.net.ConnectException: Connection refused')).toBeUndefined();
    expect(parseDependencyFailure('level=info msg="listening on :8080"')).toBeUndefined();
  });
});
