import type { Agent } from 'node:http';
import { HttpMethod, RequestContext } from '@kubernetes/client-node';
import * as z from 'zod';
import { boundedGet, ResponseTooLargeError } from './bounded-get.js';
import { httpFailure, redactCredentials, transportFailure } from './classify.js';
import { eksTokenMinter } from './eks-token.js';
import { KeptAgents } from './kept-agents.js';
import { type KubeconfigSource, loadKubeconfig } from './kubeconfig.js';
import { collectPages } from './paging.js';
import {
  assertReadPath,
  getTarget,
  listTarget,
  logTarget,
  metricsTarget,
  type ReadScope,
  type ReadTarget,
  tableTarget,
} from './read-only-guard.js';
import { type ResourceInfo, resourceForKind } from './resources.js';
import { scopeReader } from './scoped-reader.js';
import {
  ClusterReadError,
  type ClusterReader,
  type GetQuery,
  type KubeObject,
  type ListQuery,
  type LogQuery,
  type MetricsQuery,
  ReadOnlyViolationError,
  type ServerTable,
} from './types.js';

export interface ClusterReaderOptions {
  kubeconfig: KubeconfigSource;
  /** Context to use instead of the kubeconfig's current context. */
  context?: string;
  /** Deadline for each HTTP request (each page of a list counts as one). Default 10 s. */
  requestTimeoutMs?: number;
  /** Objects per page when listing. Default DEFAULT_PAGE_SIZE. */
  pageSize?: number;
  userAgent?: string;
  /** Upper bound on the bytes of one log read (sent as `limitBytes`). Default 1 MiB. */
  maxLogBytes?: number;
  /** Upper bound on the bytes of any one response; past it the read fails. Default 64 MiB. */
  maxResponseBytes?: number;
  /** The namespaces this reader may read (read-only-guard.ts); reads outside are refused before sending. */
  scope?: ReadScope;
}

/** A reader bound to one cluster; `server` and `context` are safe to print. */
export interface KubeClusterReader extends ClusterReader {
  readonly server: string;
  readonly context: string;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
/**
 * Objects per page when listing: four times kubectl's 500, so 3,000 pods take 2 round trips instead of 6. API servers
 * accept any limit (and may answer with fewer); a page too large for DEFAULT_MAX_RESPONSE_BYTES is fetched again in
 * smaller pages (paging.ts), so large objects cost round trips rather than the read.
 */
const DEFAULT_PAGE_SIZE = 2000;
const DEFAULT_MAX_LOG_BYTES = 1024 * 1024;
const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

const ItemSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: z.looseObject({ name: z.string().min(1) }),
});

const ListSchema = z.looseObject({
  kind: z.string().optional(),
  metadata: z.looseObject({ continue: z.string().optional() }).optional(),
  items: z.array(ItemSchema).nullable(),
});

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether ListSchema accepts `raw`, checked by hand: a list of thousands of objects is validated much faster so.
 * Only a yes is taken as an answer; anything else goes to the schema, which decides and says what is wrong.
 */
function isWellFormedList(raw: unknown): boolean {
  if (!isRecord(raw)) return false;
  if (raw['kind'] !== undefined && typeof raw['kind'] !== 'string') return false;
  const metadata = raw['metadata'];
  if (metadata !== undefined) {
    if (!isRecord(metadata)) return false;
    if (metadata['continue'] !== undefined && typeof metadata['continue'] !== 'string') return false;
  }
  const items = raw['items'];
  if (items === null) return true;
  if (!Array.isArray(items)) return false;
  for (const item of items) {
    if (!isRecord(item)) return false;
    if (item['apiVersion'] !== undefined && typeof item['apiVersion'] !== 'string') return false;
    if (item['kind'] !== undefined && typeof item['kind'] !== 'string') return false;
    const meta = item['metadata'];
    if (!isRecord(meta)) return false;
    const name = meta['name'];
    if (typeof name !== 'string' || name.length < 1) return false;
  }
  return true;
}

function positiveInt(value: number | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${what} must be a positive integer`);
  return value;
}

function groupVersion(info: ResourceInfo): string {
  return info.group === '' ? info.version : `${info.group}/${info.version}`;
}

type Loaded = ReturnType<typeof loadKubeconfig>;

/** What every request of one reader shares: the server, its credentials, and the limits each request obeys. */
interface Connection {
  loaded: Loaded;
  base: URL;
  basePath: string;
  timeoutMs: number;
  maxBytes: number;
  userAgent: string;
  authenticate: (ctx: RequestContext, signal: AbortSignal) => Promise<void>;
  /** Connections kept open between requests (kept-agents.ts). */
  agents: KeptAgents;
}

/**
 * Applies the kubeconfig's credentials to a request. Credential plugins (exec, OIDC) cache what they fetch; applying
 * them one at a time means concurrent first reads start one plugin process instead of one per read. A plugin that
 * hangs holds the queue only until the waiting read's deadline.
 */
function credentialQueue(loaded: Loaded): Connection['authenticate'] {
  const eksToken = loaded.eks ? eksTokenMinter(loaded.eks) : undefined;
  let authChain: Promise<unknown> = Promise.resolve();
  return (ctx, signal) => {
    const run = untilAborted(
      authChain.then(async () => {
        await loaded.kc.applySecurityAuthentication(ctx);
        if (eksToken) ctx.setHeaderParam('Authorization', `Bearer ${eksToken()}`);
      }),
      signal,
    );
    authChain = run.catch(() => undefined);
    return run;
  };
}

/**
 * The URL a target becomes: the server's base path, then the guarded path and parameters. The check runs again on
 * the parsed result, so nothing in the server URL or in the parsing can turn it into a different request.
 */
function requestUrl(conn: Pick<Connection, 'base' | 'basePath'>, target: ReadTarget, params: URLSearchParams): URL {
  const { base, basePath } = conn;
  assertReadPath(target.path, params);
  const query = params.size > 0 ? `?${params.toString()}` : '';
  const url = new URL(`${base.origin}${basePath}${target.path}${query}`);
  const path = url.pathname.startsWith(`${basePath}/`) ? url.pathname.slice(basePath.length) : '';
  if (url.origin !== base.origin || url.hash !== '' || url.username !== '' || path !== target.path) {
    throw new ReadOnlyViolationError(`refused before sending: ${target.describe} does not resolve to a read path`);
  }
  assertReadPath(path, url.searchParams);
  return url;
}

/** Applies credentials, then checks they changed neither the method nor the URL. */
async function authenticated(
  conn: Connection,
  ctx: RequestContext,
  request: { verb: string; target: ReadTarget; url: URL; signal: AbortSignal },
  failure: (error: unknown) => Error,
): Promise<void> {
  const { verb, target, url, signal } = request;
  try {
    await conn.authenticate(ctx, signal);
  } catch (error) {
    if (signal.aborted) throw failure(error);
    const detail = redactCredentials(error instanceof Error ? error.message : String(error), credentialValues(ctx));
    throw new ClusterReadError(
      `could not ${verb} ${target.describe}: obtaining credentials for ${conn.loaded.displayServer} failed: ${detail}`,
      'unauthorized',
      undefined,
      { cause: new Error(detail) },
    );
  }
  // Authentication may only add headers and TLS material; the method and URL stay the ones checked above.
  if (ctx.getHttpMethod() !== HttpMethod.GET || ctx.getUrl() !== url.toString()) {
    throw new ReadOnlyViolationError('refused before sending: the request changed while credentials were applied');
  }
}

/** The response body of a successful GET; a redirect, an error status or an oversized body is a read error. */
async function boundedBody(
  conn: Connection,
  ctx: RequestContext,
  request: { verb: string; target: ReadTarget; url: URL; signal: AbortSignal },
  failure: (error: unknown) => Error,
): Promise<string> {
  const { verb, target, url, signal } = request;
  let response: Awaited<ReturnType<typeof boundedGet>>;
  try {
    response = await boundedGet({
      url,
      headers: ctx.getHeaders(),
      agent: conn.agents.for(ctx.getAgent() as Agent | undefined),
      signal,
      maxBytes: conn.maxBytes,
    });
  } catch (error) {
    if (error instanceof ResponseTooLargeError) {
      throw new ClusterReadError(
        `could not ${verb} ${target.describe}: ${error.message}; the read was stopped and nothing of it was kept`,
        'invalid',
        undefined,
        { cause: error },
      );
    }
    throw failure(error);
  }
  const { status, body } = response;
  if (status >= 300 && status < 400) {
    throw new ClusterReadError(
      `could not ${verb} ${target.describe}: redirect refused (HTTP ${status}), calmops never follows redirects` +
        describeLocation(response.location, url),
      'invalid',
      status,
    );
  }
  if (status < 200 || status >= 300) throw httpFailure(verb, target.describe, status, body, credentialValues(ctx));
  return body;
}

/** The only code path that sends anything: GET, guarded target, deadline, no redirects, bounded body. */
async function send(
  conn: Connection,
  verb: string,
  target: ReadTarget,
  params: URLSearchParams,
  signal: AbortSignal | undefined,
): Promise<string> {
  const url = requestUrl(conn, target, params);
  const deadline = AbortSignal.timeout(conn.timeoutMs);
  const combined = signal ? AbortSignal.any([deadline, signal]) : deadline;
  const ctx = new RequestContext(url.toString(), HttpMethod.GET);
  ctx.setHeaderParam('Accept', ACCEPT[target.accept]);
  ctx.setHeaderParam('User-Agent', conn.userAgent);
  const failure = (error: unknown) =>
    transportFailure(error, {
      verb,
      describe: target.describe,
      server: conn.loaded.displayServer,
      timeoutMs: conn.timeoutMs,
      timedOut: deadline.aborted,
      cancelled: signal?.aborted === true && !deadline.aborted,
      secrets: credentialValues(ctx),
    });
  if (combined.aborted) throw failure(combined.reason);
  const request = { verb, target, url, signal: combined };
  await authenticated(conn, ctx, request, failure);
  return boundedBody(conn, ctx, request, failure);
}

function parseJson(verb: string, target: ReadTarget, body: string): unknown {
  try {
    return JSON.parse(body);
  } catch (error) {
    throw new ClusterReadError(
      `could not ${verb} ${target.describe}: the API server answered with something that is not JSON`,
      'invalid',
      undefined,
      { cause: error },
    );
  }
}

/** One page of a list: checked to be a list of the kind asked for, its objects kept exactly as the server sent them. */
function listPage(
  target: ReturnType<typeof listTarget>,
  raw: unknown,
): { items: KubeObject[]; continueToken: string | undefined } {
  const info = target.resource;
  if (!isWellFormedList(raw)) {
    const parsed = ListSchema.safeParse(raw);
    if (!parsed.success) {
      throw new ClusterReadError(
        `could not list ${target.describe}: the response is not a list (${parsed.error.issues[0]?.message})`,
        'invalid',
        undefined,
        { cause: parsed.error },
      );
    }
  }
  const list = raw as z.infer<typeof ListSchema>;
  const listKind = list.kind;
  if (listKind !== undefined && listKind !== `${info.kind}List`) {
    throw wrongKind('list', target, `kind ${shownKind(listKind)} instead of ${info.kind}List`);
  }
  // Validated above; the raw items are kept so objects stay exactly as the server sent them.
  const rawItems = ((raw as { items?: unknown[] | null }).items ?? []) as Array<z.infer<typeof ItemSchema>>;
  const items: KubeObject[] = [];
  // Thousands of items a page: an indexed loop, with no [index, item] pair made for each.
  for (let index = 0; index < rawItems.length; index++) {
    const item = rawItems[index] as z.infer<typeof ItemSchema>;
    // A list's items carry no kind/apiVersion on the wire; kubectl adds them and so does the snapshot form.
    // One that names another kind means the answer is not the list asked for, whatever else it holds.
    if (item.kind !== undefined && item.kind !== info.kind) {
      throw wrongKind('list', target, `item ${index + 1} has kind ${shownKind(item.kind)} instead of ${info.kind}`);
    }
    items.push(asObjectOf(info, item));
  }
  return { items, continueToken: list.metadata?.continue };
}

/** A got object, checked to be of the kind asked for, with the apiVersion and kind a list's items lack. */
function gotObject(target: ReturnType<typeof getTarget>, raw: unknown): KubeObject {
  const parsed = ItemSchema.safeParse(raw);
  const kind = parsed.success ? (parsed.data.kind ?? target.resource.kind) : undefined;
  if (!parsed.success || kind !== target.resource.kind || resourceForKind(kind) === undefined) {
    throw new ClusterReadError(
      `could not get ${target.describe}: the response is not a ${target.resource.kind}` +
        (parsed.success && parsed.data.kind !== undefined ? ` (kind ${shownKind(parsed.data.kind)})` : ''),
      'invalid',
    );
  }
  const object = raw as KubeObject;
  return { apiVersion: object.apiVersion ?? groupVersion(target.resource), kind, ...object } as KubeObject;
}

/** A server-printed Table, checked to hold only rows of the kind asked for. */
function serverTable(verb: string, target: ReturnType<typeof tableTarget>, raw: unknown): ServerTable {
  const parsed = TableSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ClusterReadError(
      `could not ${verb} ${target.describe}: the server did not answer with a Table`,
      'invalid',
    );
  }
  const rows = parsed.data.rows ?? [];
  for (const row of rows) {
    const kind = (row.object as { kind?: unknown } | undefined)?.kind;
    if (kind !== undefined && kind !== target.resource.kind) {
      throw wrongKind(verb, target, `a row holds kind ${shownKind(String(kind))} instead of ${target.resource.kind}`);
    }
  }
  return parsed.data as ServerTable;
}

/** Resource usage from metrics.k8s.io: one object, or a list's items, each with the apiVersion and kind set. */
function metricsObjects(query: MetricsQuery, target: ReturnType<typeof metricsTarget>, raw: unknown): KubeObject[] {
  const list = raw as { kind?: unknown; items?: unknown };
  const items = query.name === undefined ? list.items : [raw];
  if (!Array.isArray(items) || items.some((i) => ItemSchema.safeParse(i).success === false)) {
    throw new ClusterReadError(`could not get ${target.describe}: the answer is not ${target.kind}`, 'invalid');
  }
  return (items as KubeObject[]).map((item) => ({
    apiVersion: 'metrics.k8s.io/v1beta1',
    kind: target.kind,
    ...item,
  }));
}

function connect(loaded: Loaded, limits: Pick<Connection, 'timeoutMs' | 'maxBytes' | 'userAgent'>): Connection {
  const base = new URL(loaded.server);
  return {
    loaded,
    base,
    basePath: base.pathname.replace(/\/+$/, ''),
    ...limits,
    authenticate: credentialQueue(loaded),
    agents: new KeptAgents(),
  };
}

/**
 * A read-only Kubernetes reader on `@kubernetes/client-node`: the client's KubeConfig supplies the server, TLS
 * material and credentials (tokens, client certificates, and, where allowed, exec and auth-provider plugins), but
 * requests go out through one function here that only issues GET, only for targets the read-only guard built, always
 * with a deadline, never following a redirect and never reading more than a byte limit. Objects come back as the raw
 * JSON the API server sent, after checking they are of the kind asked for.
 *
 * The reader keeps no per-read state, so any number of reads may run at once.
 */
export function createClusterReader(options: ClusterReaderOptions): KubeClusterReader {
  const loaded = loadKubeconfig(options.kubeconfig, options.context);
  const timeoutMs = positiveInt(options.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS, 'requestTimeoutMs');
  const pageSize = positiveInt(options.pageSize, DEFAULT_PAGE_SIZE, 'pageSize');
  const maxLogBytes = positiveInt(options.maxLogBytes, DEFAULT_MAX_LOG_BYTES, 'maxLogBytes');
  const maxBytes = positiveInt(options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, 'maxResponseBytes');
  const conn = connect(loaded, { timeoutMs, maxBytes, userAgent: options.userAgent ?? 'calmops' });

  async function list(query: ListQuery, signal?: AbortSignal): Promise<KubeObject[]> {
    const target = listTarget(query);
    return collectPages(
      async ({ limit, continueToken }) => {
        const params = new URLSearchParams(target.params);
        params.set('limit', String(limit));
        if (continueToken !== undefined) params.set('continue', continueToken);
        return listPage(target, parseJson('list', target, await send(conn, 'list', target, params, signal)));
      },
      { pageSize, maxItems: target.maxItems, describe: target.describe },
    );
  }

  async function get(query: GetQuery, signal?: AbortSignal): Promise<KubeObject> {
    const target = getTarget(query);
    return gotObject(target, parseJson('get', target, await send(conn, 'get', target, target.params, signal)));
  }

  async function logs(query: LogQuery, signal?: AbortSignal): Promise<string> {
    const target = logTarget(query, maxLogBytes);
    return send(conn, 'read', target, target.params, signal);
  }

  async function table(query: ListQuery & { name?: string }, signal?: AbortSignal): Promise<ServerTable> {
    const target = tableTarget(query);
    const verb = query.name === undefined ? 'list' : 'get';
    return serverTable(verb, target, parseJson(verb, target, await send(conn, verb, target, target.params, signal)));
  }

  async function metrics(query: MetricsQuery, signal?: AbortSignal): Promise<KubeObject[]> {
    const target = metricsTarget(query);
    return metricsObjects(
      query,
      target,
      parseJson('get', target, await send(conn, 'get', target, target.params, signal)),
    );
  }

  const reader = { list, get, logs, table, metrics, server: loaded.displayServer, context: loaded.context };
  return options.scope === undefined ? reader : scopeReader(reader, options.scope);
}

const ACCEPT: Record<ReadTarget['accept'], string> = {
  json: 'application/json',
  // kubectl's own Accept for printing: a Table where the server can print one, the object otherwise.
  table: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
  text: 'text/plain, */*',
};

const TableSchema = z.looseObject({
  kind: z.literal('Table'),
  columnDefinitions: z.array(
    z.looseObject({ name: z.string(), type: z.string(), priority: z.number().int().min(0).default(0) }),
  ),
  rows: z.array(z.looseObject({ cells: z.array(z.unknown()), object: z.unknown().optional() })).nullable(),
});

/**
 * A list item as an object of its kind: `apiVersion` and `kind` first, then the rest as sent. An item that already
 * reads so (the snapshot API server sends them that way) is taken as it is, rather than copied into the same shape.
 */
function asObjectOf(info: ResourceInfo, item: z.infer<typeof ItemSchema>): KubeObject {
  if (typeof item.apiVersion === 'string' && item.kind === info.kind) {
    let position = 0;
    let inOrder = true;
    for (const key in item) {
      if (position === 0) inOrder = key === 'apiVersion';
      else if (position === 1) inOrder = key === 'kind';
      else break;
      if (!inOrder) break;
      position++;
    }
    if (inOrder && position === 2) return item as KubeObject;
  }
  return { apiVersion: item.apiVersion ?? groupVersion(info), kind: info.kind, ...item } as KubeObject;
}

function wrongKind(verb: string, target: ReadTarget, what: string): ClusterReadError {
  return new ClusterReadError(
    `could not ${verb} ${target.describe}: the answer is not what was asked for (${what}); nothing of it was kept`,
    'invalid',
  );
}

/** A kind from the server, fit to print: it is the server's text, so only a short plain word is shown as is. */
function shownKind(kind: string): string {
  return /^[A-Za-z0-9.]{1,63}$/.test(kind) ? kind : JSON.stringify(kind.slice(0, 63)).replace(/[^\x20-\x7e]/g, '?');
}

/** Where a redirect pointed, for the message: origin and path only (a query could carry anything). */
function describeLocation(location: string | undefined, from: URL): string {
  if (location === undefined) return '';
  let target: URL;
  try {
    target = new URL(location, from);
  } catch {
    return '; it pointed to an invalid location';
  }
  const where = target.origin === from.origin ? target.pathname : `${target.origin}${target.pathname}`;
  return `; it pointed to ${where.slice(0, 200).replace(/[^\x21-\x7e]/g, '?')}`;
}

/** The credential values the client put on a request, so messages can be scrubbed of them exactly. */
function credentialValues(ctx: RequestContext): string[] {
  const headers = ctx.getHeaders();
  const values: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (!/^(authorization|proxy-authorization)$/i.test(name) || typeof value !== 'string') continue;
    values.push(value);
    const credential = value.replace(/^\S+\s+/, '');
    if (credential !== value) values.push(credential);
  }
  return values;
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
