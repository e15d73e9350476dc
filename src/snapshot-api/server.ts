import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ResourceInfo } from '../cluster/resources.js';
import type { SnapshotLogs } from '../cluster/snapshot.js';
import type { KubeObject, ResourceKind } from '../cluster/types.js';
import { buildCatalog, objectKey, type SnapshotCatalog } from './catalog.js';
import { FaultInjector, type FaultRule, type RequestFacts, type RequestVerb } from './faults.js';
import { podLog } from './logs.js';
import { type ContinueContext, paginate } from './paging.js';
import { type Route, route, selfSubjectRulesReview } from './routes.js';
import {
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  SelectorSyntaxError,
  validateFieldSelector,
} from './selectors.js';
import { ApiStatusError, badRequest, methodNotAllowed, notFound, pathNotFound, reasonForCode } from './status.js';
import { type IncludeObject, toTable } from './tables.js';

/**
 * A read-only Kubernetes API server backed by a snapshot: enough of the REST API (discovery, get, list, watch, pod
 * logs, Table printing) that kubectl and @kubernetes/client-node work against it unchanged.
 */

export type { FaultEffect, FaultMatch, FaultRule } from './faults.js';

export interface SnapshotServerOptions {
  objects: readonly KubeObject[];
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

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  verb: RequestVerb | 'other';
  resource?: string;
  namespace?: string;
  /** The HTTP status sent; undefined while pending, for hung requests, or when the connection was reset. */
  status?: number;
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
  setObjects(objects: readonly KubeObject[], logs?: SnapshotLogs): void;
}

export class SnapshotServerError extends Error {
  override readonly name = 'SnapshotServerError';
}

const READ_METHODS = new Set(['GET', 'HEAD']);
const MAX_SELECTIONS = 64;

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

export async function startSnapshotServer(options: SnapshotServerOptions): Promise<SnapshotServer> {
  validateOptions(options);
  const now = resolveNow(options.now);
  let catalog = buildCatalog(options.objects, now ? { now } : {});
  let logs = options.logs ?? {};
  const injector = new FaultInjector({
    latencyMs: options.latencyMs ?? 0,
    faultRate: options.faultRate ?? 0,
    faultStatus: options.faultStatus ?? 500,
    seed: options.seed ?? 1,
    rules: options.faults ?? [],
  });
  const continueContext: ContinueContext = {
    resourceVersion: catalog.resourceVersion,
    ...(options.continueTtlMs !== undefined ? { ttlMs: options.continueTtlMs } : {}),
    now: () => Date.now(),
  };
  // The objects a list query selects, kept for the pages that follow: a list of thousands is read in several pages,
  // each asking the same query again. Bounded, since every new selector is a new entry; emptied with the catalog.
  let selections = new Map<string, readonly KubeObject[]>();
  const selection = (
    resource: ResourceKind,
    namespace: string | undefined,
    labelSelector: string,
    fieldSelector: string,
    select: () => readonly KubeObject[],
  ): readonly KubeObject[] => {
    const key = JSON.stringify([resource, namespace ?? null, labelSelector, fieldSelector]);
    let selected = selections.get(key);
    if (selected === undefined) {
      selected = select();
      if (selections.size >= MAX_SELECTIONS) selections.clear();
      selections.set(key, selected);
    }
    return selected;
  };
  let recorded: RecordedRequest[] = [];
  let received = 0;
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    received += 1;
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) writeStatus(res, internalError(error));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://snapshot.invalid');
    const method = (req.method ?? 'GET').toUpperCase();
    const target = route(url.pathname);
    const facts = describe(target, url, method);
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      verb: READ_METHODS.has(method) ? facts.verb : 'other',
      ...(facts.resource ? { resource: facts.resource } : {}),
      ...(facts.namespace ? { namespace: facts.namespace } : {}),
    };
    recorded.push(record);
    res.on('finish', () => {
      record.status = res.statusCode;
    });

    const decision = injector.decide(facts);
    if (decision.delayMs > 0) await sleep(decision.delayMs, timers);
    if (decision.effect?.type === 'hang') return;
    if (decision.effect?.type === 'reset') {
      req.socket.destroy();
      return;
    }
    if (decision.effect?.type === 'status') {
      writeStatus(res, injected(decision.effect.status, facts, decision.effect.message));
      return;
    }
    try {
      // The one write a read-only server takes: a caller asking what it may do, which changes nothing.
      if (target.type === 'rulesReview') {
        if (method !== 'POST') throw methodNotAllowed();
        writeJson(res, 201, selfSubjectRulesReview(await readJson(req)));
        return;
      }
      if (!READ_METHODS.has(method)) throw methodNotAllowed();
      respond(target, url, req, res);
    } catch (error) {
      if (error instanceof ApiStatusError) writeStatus(res, error);
      else if (error instanceof SelectorSyntaxError) writeStatus(res, badRequest(error.message));
      else throw error;
    }
  }

  function respond(target: Route, url: URL, req: IncomingMessage, res: ServerResponse): void {
    const params = url.searchParams;
    switch (target.type) {
      case 'document':
        writeJson(res, 200, target.body);
        return;
      case 'health':
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('ok');
        return;
      case 'unknown':
      case 'rulesReview':
        throw pathNotFound();
      case 'secrets':
        if (target.name !== undefined) throw notFound('secrets', target.name);
        writeJson(res, 200, {
          kind: 'SecretList',
          apiVersion: 'v1',
          metadata: { resourceVersion: catalog.resourceVersion },
          items: [],
        });
        return;
      case 'log': {
        const pod = catalog.get('pods', target.namespace, target.name);
        if (!pod) throw notFound('pods', target.name);
        const text = podLog(pod, logs, {
          previous: isTrue(params.get('previous')),
          ...optionalString('container', params.get('container')),
          ...optionalInt('tailLines', params.get('tailLines')),
          ...optionalInt('limitBytes', params.get('limitBytes')),
        });
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end(text);
        return;
      }
      case 'get': {
        const object = catalog.get(target.info.plural, target.namespace, target.name);
        if (!object) throw notFound(target.info.plural, target.name, target.info.group);
        const format = negotiate(req.headers.accept);
        if (format.as === 'Table') {
          writeJson(res, 200, {
            ...toTable(target.info.plural, [object], {
              now: catalog.now,
              resourceVersion: catalog.resourceVersion,
              includeObject: includeObject(params.get('includeObject')),
            }),
            apiVersion: format.version,
          });
        } else if (format.as === 'PartialObjectMetadata') {
          writeJson(res, 200, partial(object, format.version));
        } else {
          writeJsonText(res, 200, catalog.text(object));
        }
        return;
      }
      case 'list':
        list(target.info, target.namespace, params, req, res);
        return;
    }
  }

  function list(
    info: ResourceInfo,
    namespace: string | undefined,
    params: URLSearchParams,
    req: IncomingMessage,
    res: ServerResponse,
  ): void {
    const labelSelector = params.get('labelSelector') ?? '';
    const fieldSelector = params.get('fieldSelector') ?? '';
    const labels = parseLabelSelector(labelSelector);
    const fields = parseFieldSelector(fieldSelector);
    validateFieldSelector(info.plural, fields);
    const selected = selection(info.plural, namespace, labelSelector, fieldSelector, () => {
      const candidates =
        namespace === undefined ? catalog.objects(info.plural) : catalog.objectsKeyedIn(info.plural, namespace);
      const matching: KubeObject[] = [];
      for (const o of candidates) {
        if (namespace !== undefined && o.metadata.namespace !== namespace) continue;
        if (labels.length > 0 && !matchesLabels(labels, o.metadata.labels)) continue;
        if (fields.length > 0 && !matchesFields(info.plural, fields, o)) continue;
        matching.push(o);
      }
      return matching;
    });
    const format = negotiate(req.headers.accept);
    if (isTrue(params.get('watch'))) {
      watch(info, selected, params, format, res);
      return;
    }
    const limit = optionalInt('limit', params.get('limit')).limit;
    const continueToken = params.get('continue') || undefined;
    const page = paginate(continueContext, selected, objectKey, {
      ...(limit !== undefined ? { limit } : {}),
      ...(continueToken ? { continueToken } : {}),
    });
    const metadata = {
      resourceVersion: catalog.resourceVersion,
      ...(page.continueToken ? { continue: page.continueToken } : {}),
      ...(page.remaining !== undefined ? { remainingItemCount: page.remaining } : {}),
    };
    if (format.as === 'Table') {
      writeJson(res, 200, {
        ...toTable(info.plural, page.items, {
          now: catalog.now,
          resourceVersion: catalog.resourceVersion,
          includeObject: includeObject(params.get('includeObject')),
          ...(page.continueToken ? { continueToken: page.continueToken } : {}),
          ...(page.remaining !== undefined ? { remaining: page.remaining } : {}),
        }),
        apiVersion: format.version,
      });
      return;
    }
    if (format.as === 'PartialObjectMetadata') {
      writeJson(res, 200, {
        kind: 'PartialObjectMetadataList',
        apiVersion: format.version,
        metadata,
        items: page.items.map((o) => partial(o, format.version)),
      });
      return;
    }
    // The items are the catalog's texts joined: the same bytes as serializing the whole list, without doing so.
    const head = JSON.stringify({
      kind: `${info.kind}List`,
      apiVersion: info.group === '' ? info.version : `${info.group}/${info.version}`,
      metadata,
    });
    const items = page.items.map((o) => catalog.text(o)).join(',');
    writeJsonText(res, 200, `${head.slice(0, -1)},"items":[${items}]}`);
  }

  /**
   * A snapshot never changes, so a watch replays the current state as ADDED events (unless the client already has
   * this resourceVersion) and then stays quiet until `timeoutSeconds` or shutdown, like an idle real watch.
   */
  function watch(
    info: ResourceInfo,
    selected: readonly KubeObject[],
    params: URLSearchParams,
    format: Format,
    res: ServerResponse,
  ): void {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    const since = params.get('resourceVersion');
    if (since !== catalog.resourceVersion) {
      for (const object of selected) {
        const text =
          format.as === 'Table'
            ? JSON.stringify({
                ...toTable(info.plural, [object], {
                  now: catalog.now,
                  resourceVersion: catalog.resourceVersion,
                  includeObject: includeObject(params.get('includeObject')),
                }),
                apiVersion: format.version,
              })
            : catalog.text(object);
        res.write(`{"type":"ADDED","object":${text}}\n`);
      }
    }
    const timeout = optionalInt('timeoutSeconds', params.get('timeoutSeconds')).timeoutSeconds;
    if (timeout !== undefined) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        res.end();
      }, timeout * 1000);
      timers.add(timer);
    }
  }

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
      return catalog;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close((error) => (error ? reject(error) : resolve()));
        // Hung requests and open watches would otherwise keep close() waiting forever.
        server.closeAllConnections();
      }),
    setFaults: (rules) => injector.setRules(rules),
    setLatency: (latencyMs) => injector.setLatency(latencyMs),
    setFaultRate: (faultRate, faultStatus) => injector.setFaultRate(faultRate, faultStatus),
    requestCount: () => received,
    requests: () => recorded,
    resetRequests: () => {
      recorded = [];
      received = 0;
    },
    setObjects: (objects, nextLogs) => {
      const next = buildCatalog(objects, now ? { now } : {});
      // A replaced snapshot must never share a resourceVersion with the one before it: watchers and continue
      // tokens that hold the old version would otherwise be served the new objects as if nothing had changed.
      const version = Math.max(Number(next.resourceVersion) || 1, Number(catalog.resourceVersion) || 1) + 1;
      catalog = { ...next, resourceVersion: String(version) };
      selections = new Map();
      logs = nextLogs ?? {};
      continueContext.resourceVersion = catalog.resourceVersion;
    },
  };
}

function describe(target: Route, url: URL, method: string): RequestFacts {
  const base = {
    path: url.pathname,
    url: `${method} ${url.pathname}${url.search}`,
    hasContinue: url.searchParams.has('continue') && url.searchParams.get('continue') !== '',
  };
  switch (target.type) {
    case 'list':
      return {
        ...base,
        verb: isTrue(url.searchParams.get('watch')) ? 'watch' : 'list',
        resource: target.info.plural,
        ...(target.namespace !== undefined ? { namespace: target.namespace } : {}),
      };
    case 'get':
      return {
        ...base,
        verb: 'get',
        resource: target.info.plural,
        ...(target.namespace !== undefined ? { namespace: target.namespace } : {}),
      };
    case 'log':
      return { ...base, verb: 'log', resource: 'pods', namespace: target.namespace };
    case 'secrets':
      return {
        ...base,
        verb: target.name === undefined ? 'list' : 'get',
        resource: 'secrets',
        ...(target.namespace !== undefined ? { namespace: target.namespace } : {}),
      };
    default:
      return { ...base, verb: 'discovery' };
  }
}

interface Format {
  as: 'Table' | 'PartialObjectMetadata' | 'Object';
  version: string;
}

/** Pick the representation from the Accept header, honouring the client's order of preference. */
function negotiate(accept: string | undefined): Format {
  for (const mediaType of (accept ?? '').split(',')) {
    const [type, ...rawParams] = mediaType.split(';').map((p) => p.trim());
    if (type !== 'application/json' && type !== '*/*') continue;
    const params = new Map(
      rawParams.map((p) => {
        const [k = '', v = ''] = p.split('=');
        return [k.trim(), v.trim()] as const;
      }),
    );
    const as = params.get('as');
    if (as === undefined) return { as: 'Object', version: '' };
    if (params.get('g') !== 'meta.k8s.io') continue;
    const version = params.get('v') === 'v1beta1' ? 'meta.k8s.io/v1beta1' : 'meta.k8s.io/v1';
    if (as === 'Table') return { as: 'Table', version };
    if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') {
      return { as: 'PartialObjectMetadata', version };
    }
  }
  return { as: 'Object', version: '' };
}

function partial(object: KubeObject, apiVersion: string): object {
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: object.metadata };
}

function includeObject(value: string | null): IncludeObject {
  if (value === null || value === '') return 'Metadata';
  if (value === 'None' || value === 'Metadata' || value === 'Object') return value;
  throw badRequest(`includeObject: unsupported value "${value}", supported values: "None", "Metadata", "Object"`);
}

function isTrue(value: string | null): boolean {
  return value === 'true' || value === '1';
}

function optionalString<K extends string>(key: K, value: string | null): { [P in K]?: string } {
  return (value ? { [key]: value } : {}) as { [P in K]?: string };
}

function optionalInt<K extends string>(key: K, value: string | null): { [P in K]?: number } {
  if (value === null || value === '') return {};
  if (!/^-?\d+$/.test(value)) throw badRequest(`${key}: invalid value "${value}": must be an integer`);
  return { [key]: Number(value) } as { [P in K]?: number };
}

/** A small JSON request body; anything else is a 400, as the API server would answer. */
async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > 64 * 1024) throw badRequest('request body too large');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('the request body is not JSON');
  }
}

function writeJson(res: ServerResponse, code: number, body: unknown): void {
  writeJsonText(res, code, JSON.stringify(body));
}

function writeJsonText(res: ServerResponse, code: number, text: string): void {
  // Encoded once: measuring the text's length in bytes and then sending it would go through it twice.
  const body = Buffer.from(text);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': body.length });
  res.end(body);
}

function writeStatus(res: ServerResponse, error: ApiStatusError): void {
  writeJson(res, error.code, error.toStatus());
}

function internalError(error: unknown): ApiStatusError {
  const message = error instanceof Error ? error.message : String(error);
  return new ApiStatusError(500, 'InternalError', `Internal error occurred: ${message}`);
}

function injected(code: number, facts: RequestFacts, message?: string): ApiStatusError {
  const resource = facts.resource ?? 'the requested resource';
  const verb = facts.verb === 'log' ? 'get' : facts.verb;
  const scope = facts.namespace ? ` in the namespace "${facts.namespace}"` : ' at the cluster scope';
  const text =
    message ??
    (code === 403
      ? `${resource} is forbidden: User "system:serviceaccount:calmops:snapshot-reader" cannot ${verb} resource "${resource}"${scope}`
      : code === 401
        ? 'Unauthorized'
        : `injected fault: ${code} ${reasonForCode(code)} for ${facts.verb} ${resource}`);
  return new ApiStatusError(code, reasonForCode(code), text, facts.resource ? { kind: facts.resource } : undefined);
}

function sleep(ms: number, timers: Set<NodeJS.Timeout>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      resolve();
    }, ms);
    timers.add(timer);
  });
}
