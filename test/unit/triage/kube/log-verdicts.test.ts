import { describe, expect, it } from 'vitest';
import { decisiveLogLine, parseUnresolvedHost, quoteVerdict } from '../../../../src/triage/kube/log-verdicts.js';

describe('log and message classifiers', () => {
  it('picks the most decisive log line over generic errors and stack frames', () => {
    const v = decisiveLogLine(
      'INFO start\nERROR something went wrong\nFATAL: config: required key DB_URL missing\n    at x (y.js:1)',
    );
    expect(v?.kind).toBe('config');
    expect(v?.line).toContain('DB_URL');
    expect(
      decisiveLogLine('panic: runtime error: index out of range [3] with length 3\ngoroutine 1 [running]:')?.kind,
    ).toBe('crash');
    expect(decisiveLogLine('dial tcp 10.0.0.5:5432: connect: connection refused')?.kind).toBe('dependency');
    expect(decisiveLogLine('open /etc/app/config.yaml: no such file or directory')?.kind).toBe('config');
    expect(decisiveLogLine('all good\nstill good')).toBeUndefined();
  });
});

describe('log and message classifiers', () => {
  it('scrubs secrets from the decisive line', () => {
    expect(
      decisiveLogLine('Error: auth failed for postgres://app:hunter2@db:5432/app password=hunter2')?.line,
    ).not.toContain('hunter2');
  });
});

describe('decisive log lines', () => {
  it('quotes the exception a traceback ends with, not the Traceback header', () => {
    const v = decisiveLogLine(
      'INFO starting\nTraceback (most recent call last):\n  File "/app/main.py", line 3, in <module>\n    main()\nValueError: SHARD_COUNT must be a number',
    );
    expect(v?.line).toBe('ValueError: SHARD_COUNT must be a number');
  });

  it('reads libpq, glibc and curl lookup failures as DNS', () => {
    expect(
      decisiveLogLine(
        'psycopg2.OperationalError: could not translate host name "db.shop.svc" to address: Name or service not known',
      )?.kind,
    ).toBe('dns');
    expect(decisiveLogLine('curl: (6) Could not resolve host: api.example.com')?.kind).toBe('dns');
  });

  it('keeps the lines that continue the decisive one, and stops at a stack frame or a new record', () => {
    const v = decisiveLogLine(
      'ERROR: Validate failed: Migrations have failed validation\nDetected failed migration to version 42 (add index).\n\nNeed help? See the docs',
    );
    expect(v?.detail).toBe('Detected failed migration to version 42 (add index).');
    expect(quoteVerdict(v!)).toBe(
      'ERROR: Validate failed: Migrations have failed validation — Detected failed migration to version 42 (add index).',
    );
    expect(decisiveLogLine('FATAL: boom\n    at main (x.js:1)\n2025-01-01 INFO next')?.detail).toBeUndefined();
  });

  it('reduces a structured JSON record to its level, message, error and caller', () => {
    const v = decisiveLogLine(
      '{"level":"fatal","ts":"2026-02-11T10:19:47Z","caller":"cmd/main.go:47","msg":"invalid configuration","error":"required key PSP_URL missing value","stacktrace":"main.main"}',
    );
    expect(v?.kind).toBe('config');
    expect(quoteVerdict(v!)).toBe('fatal: invalid configuration: required key PSP_URL missing value (cmd/main.go:47)');
  });
});

describe('parseUnresolvedHost', () => {
  it('finds the host in Go, libpq, Node, Java and curl wording and tells "no such name" from "no answer"', () => {
    expect(parseUnresolvedHost('dial tcp: lookup db.shop.svc.cluster.local on 10.96.0.10:53: no such host')).toEqual({
      host: 'db.shop.svc.cluster.local',
      nameDoesNotExist: true,
    });
    expect(parseUnresolvedHost('could not translate host name "pg" to address: Name or service not known')).toEqual({
      host: 'pg',
      nameDoesNotExist: true,
    });
    expect(parseUnresolvedHost('Error: getaddrinfo ENOTFOUND redis-master')).toEqual({
      host: 'redis-master',
      nameDoesNotExist: true,
    });
    expect(parseUnresolvedHost('getaddrinfo EAI_AGAIN redis-master')?.nameDoesNotExist).toBe(false);
    expect(
      parseUnresolvedHost('could not translate host name "pg" to address: Temporary failure in name resolution')
        ?.nameDoesNotExist,
    ).toBe(false);
    expect(parseUnresolvedHost('lookup api.example.com on 10.0.0.2:53: server misbehaving')?.nameDoesNotExist).toBe(
      false,
    );
    expect(parseUnresolvedHost('java.net.UnknownHostException: kafka-0.kafka: Name or service not known')?.host).toBe(
      'kafka-0.kafka',
    );
    expect(parseUnresolvedHost('connection refused')).toBeUndefined();
  });
});
