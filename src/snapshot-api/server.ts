import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SnapshotLogs } from '../cluster/snapshot.js';
import type { StoredObject } from '../cluster/stored-object.js';
import type { KubeObject } from '../cluster/types.js';
import { hostRefusal } from '../http/request-guard.js';
import type { SnapshotCatalog } from './catalog.js';
import { FaultInjector, type FaultRule } from './faults.js';
import { READ_METHODS, type RouteTable, requestListener } from './handler.js';
import { answerList } from './list.js';
import { answerGroups, answerMetrics } from './metrics.js';
import {
  answerDocument,
  answerGet,
  answerHealth,
  answerLog,
  answerRulesReview,
  answerSecrets,
  answerUnknown,
} from './objects.js';
import { type RecordedRequest, SnapshotState } from './state.js';

/**
 * A read-only Kubernetes API server backed by a snapshot: enough of the REST API (discovery, get, list, watch, pod
 * logs, Table printing) that kubectl and @kubernetes/client-node work against it unchanged.
 */

export type { FaultRule } from './faults.js';

export interface SnapshotServerOptions {
  /**
   * Plain objects, or a loaded snapshot's stored ones (`LoadedSnapshot.served`), which it serves without parsing: in
   * the order it lists them, they are taken as they come instead of sorted.
   */
  objects: readonly (KubeObject | StoredObject)[];
  logs?: SnapshotLogs;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Loopback by default; the server has no authentication. */
  host?: string;
  /** Delay added to every request, in ms. */
  latencyMs?: number;
  /** Fraction (0–1) of resource requests answered with `faultStatus`. */
  faultRate?: number;
  /** 500 by default. */
  faultStatus?: number;
  /** Seed for the fault draws; the same seed and request sequence give the same faults. */
  seed?: number;
  faults?: readonly FaultRule[];
  /** The clock for ages in Table output; defaults to the newest timestamp in the snapshot. */
  now?: Date | string;
  /** Continue tokens older than this answer 410 Expired; tokens never expire when omitted. */
  continueTtlMs?: number;
}

export interface SnapshotServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  catalog: SnapshotCatalog;
  close(): Promise<void>;
  /** Replace the targeted fault rules (counters restart). */
  setFaults(rules: readonly FaultRule[]): void;
  setLatency(latencyMs: number): void;
  setFaultRate(faultRate: number, faultStatus?: number): void;
  /** Requests received so far, of any kind. */
  requestCount(): number;
  /** Every request received so far, oldest first. */
  requests(): readonly RecordedRequest[];
  resetRequests(): void;
  /**
   * Serve other objects (and logs) from now on, as a cluster changes after a fix: the snapshot is replaced whole,
   * with its own resourceVersion, so continue tokens from before are expired.
   */
  setObjects(objects: readonly (KubeObject | StoredObject)[], logs?: SnapshotLogs): void;
}

export class SnapshotServerError extends Error {
  override readonly name = 'SnapshotServerError';
}

function validateOptions(options: SnapshotServerOptions): void {
  const rate = options.faultRate ?? 0;
  if (!(rate >= 0 && rate <= 1)) throw new SnapshotServerError(`faultRate must be between 0 and 1, got ${rate}`);
  const latency = options.latencyMs ?? 0;
  if (!(latency >= 0 && Number.isFinite(latency))) {
    throw new SnapshotServerError(`latencyMs must be a non-negative number, got ${latency}`);
  }
  const status = options.faultStatus ?? 500;
  if (!Number.isInteger(status) || status < 400 || status > 599) {
    throw new SnapshotServerError(`faultStatus must be an HTTP error status (400–599), got ${status}`);
  }
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new SnapshotServerError(`port must be an integer between 0 and 65535, got ${port}`);
  }
}

function resolveNow(now: Date | string | undefined): Date | undefined {
  if (now === undefined) return undefined;
  const date = typeof now === 'string' ? new Date(now) : now;
  if (Number.isNaN(date.getTime())) throw new SnapshotServerError(`now is not a valid time: ${String(now)}`);
  return date;
}

// Every path is read, never written, but the rules review: a caller POSTs there to ask what it may do.
const ROUTES: RouteTable = {
  document: { methods: READ_METHODS, answer: answerDocument },
  health: { methods: READ_METHODS, answer: answerHealth },
  list: { methods: READ_METHODS, answer: answerList },
  get: { methods: READ_METHODS, answer: answerGet },
  log: { methods: READ_METHODS, answer: answerLog },
  secrets: { methods: READ_METHODS, answer: answerSecrets },
  rulesReview: { methods: new Set(['POST']), answer: answerRulesReview },
  groups: { methods: READ_METHODS, answer: answerGroups },
  metrics: { methods: READ_METHODS, answer: answerMetrics },
  unknown: { methods: READ_METHODS, answer: answerUnknown },
};

export async function startSnapshotServer(options: SnapshotServerOptions): Promise<SnapshotServer> {
  validateOptions(options);
  const now = resolveNow(options.now);
  const state = new SnapshotState({
    objects: options.objects,
    ...(options.logs ? { logs: options.logs } : {}),
    ...(now ? { now } : {}),
    ...(options.continueTtlMs !== undefined ? { continueTtlMs: options.continueTtlMs } : {}),
  });
  const injector = new FaultInjector({
    latencyMs: options.latencyMs ?? 0,
    faultRate: options.faultRate ?? 0,
    faultStatus: options.faultStatus ?? 500,
    seed: options.seed ?? 1,
    rules: options.faults ?? [],
  });
  const listener = requestListener(state, injector, ROUTES);
  // Raw pod logs and every object are served here: a page that rebinds its own name to loopback must get nothing.
  const server = createServer((req, res) => {
    const refusal = hostRefusal(req);
    if (refusal === undefined) {
      listener(req, res);
      return;
    }
    const body = JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: refusal,
      reason: 'Forbidden',
      code: 403,
    });
    res.writeHead(403, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    get catalog() {
      return state.catalog;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        state.clearTimers();
        server.close((error) => (error ? reject(error) : resolve()));
        // Hung requests and open watches would otherwise keep close() waiting forever.
        server.closeAllConnections();
      }),
    setFaults: (rules) => injector.setRules(rules),
    setLatency: (latencyMs) => injector.setLatency(latencyMs),
    setFaultRate: (faultRate, faultStatus) => injector.setFaultRate(faultRate, faultStatus),
    requestCount: () => state.requestCount(),
    requests: () => state.requests(),
    resetRequests: () => state.resetRequests(),
    setObjects: (objects, nextLogs) => state.replace(objects, nextLogs),
  };
}
