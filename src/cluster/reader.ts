import { HttpMethod, IsomorphicFetchHttpLibrary, RequestContext } from '@kubernetes/client-node';
import { z } from 'zod';
import { httpFailure, redactCredentials, transportFailure } from './classify.js';
import { type KubeconfigSource, loadKubeconfig } from './kubeconfig.js';
import { collectPages } from './paging.js';
import { assertReadPath, getTarget, listTarget, logTarget, type ReadTarget } from './read-only-guard.js';
import { type ResourceInfo, resourceForKind } from './resources.js';
import {
  ClusterReadError,
  type ClusterReader,
  type GetQuery,
  type KubeObject,
  type ListQuery,
  type LogQuery,
  ReadOnlyViolationError,
} from './types.js';

export interface ClusterReaderOptions {
  kubeconfig: KubeconfigSource;
  /** Context to use instead of the kubeconfig's current context. */
  context?: string;
  /** Deadline for each HTTP request (each page of a list counts as one). Default 10 s. */
  requestTimeoutMs?: number;
  /** Objects per page when listing. Default 500, as kubectl. */
  pageSize?: number;
  userAgent?: string;
  /** Upper bound on the bytes of one log read (sent as `limitBytes`). Default 1 MiB. */
  maxLogBytes?: number;
}

/** A reader bound to one cluster; `server` and `context` are safe to print. */
export interface KubeClusterReader extends ClusterReader {
  readonly server: string;
  readonly context: string;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
export const DEFAULT_PAGE_SIZE = 500;
export const DEFAULT_MAX_LOG_BYTES = 1024 * 1024;

const ItemSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: z.looseObject({ name: z.string().min(1) }),
});

const ListSchema = z.looseObject({
  metadata: z.looseObject({ continue: z.string().optional() }).optional(),
  items: z.array(ItemSchema).nullable(),
});

function positiveInt(value: number | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${what} must be a positive integer`);
  return value;
}

function groupVersion(info: ResourceInfo): string {
  return info.group === '' ? info.version : `${info.group}/${info.version}`;
}

/**
 * A read-only Kubernetes reader on `@kubernetes/client-node`: the client's KubeConfig supplies the server, TLS
 * material and credentials (tokens, client certificates, exec and auth-provider plugins) and its fetch library
 * sends the request, but every request passes through one function here that only issues GET, only for targets
 * the read-only guard built, always with a deadline. Objects come back as the raw JSON the API server sent.
 *
 * The reader keeps no per-read state, so any number of reads may run at once.
 */
export function createClusterReader(options: ClusterReaderOptions): KubeClusterReader {
  const loaded = loadKubeconfig(options.kubeconfig, options.context);
  const timeoutMs = positiveInt(options.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS, 'requestTimeoutMs');
  const pageSize = positiveInt(options.pageSize, DEFAULT_PAGE_SIZE, 'pageSize');
  const maxLogBytes = positiveInt(options.maxLogBytes, DEFAULT_MAX_LOG_BYTES, 'maxLogBytes');
  const userAgent = options.userAgent ?? 'calmops';
  const http = new IsomorphicFetchHttpLibrary();

  // Credential plugins (exec, OIDC) cache what they fetch; applying them one at a time means concurrent first
  // reads start one plugin process instead of one per read. A plugin that hangs holds the queue only until the
  // waiting read's deadline.
  let authChain: Promise<unknown> = Promise.resolve();
  const authenticate = (ctx: RequestContext, signal: AbortSignal): Promise<void> => {
    const run = untilAborted(
      authChain.then(() => loaded.kc.applySecurityAuthentication(ctx)),
      signal,
    );
    authChain = run.catch(() => undefined);
    return run;
  };

  /** The only code path that sends anything: GET, guarded target, deadline, classified failure. */
  async function send(
    verb: string,
    target: ReadTarget,
    params: URLSearchParams,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    assertReadPath(target.path, params);
    const deadline = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([deadline, signal]) : deadline;
    const query = params.size > 0 ? `?${params.toString()}` : '';
    const ctx = new RequestContext(`${loaded.server}${target.path}${query}`, HttpMethod.GET);
    ctx.setHeaderParam('Accept', target.accept === 'json' ? 'application/json' : 'text/plain, */*');
    ctx.setHeaderParam('User-Agent', userAgent);
    ctx.setSignal(combined);
    const failure = (error: unknown) =>
      transportFailure(error, {
        verb,
        describe: target.describe,
        server: loaded.displayServer,
        timeoutMs,
        timedOut: deadline.aborted,
        cancelled: signal?.aborted === true && !deadline.aborted,
        secrets: credentialValues(ctx),
      });
    if (combined.aborted) throw failure(combined.reason);

    try {
      await authenticate(ctx, combined);
    } catch (error) {
      if (combined.aborted) throw failure(error);
      const detail = redactCredentials(error instanceof Error ? error.message : String(error), credentialValues(ctx));
      throw new ClusterReadError(
        `could not ${verb} ${target.describe}: obtaining credentials for ${loaded.displayServer} failed: ${detail}`,
        'unauthorized',
        undefined,
        { cause: new Error(detail) },
      );
    }
    // The client library copies the method from the context; pin it again in case anything above changed it.
    if (ctx.getHttpMethod() !== HttpMethod.GET) {
      throw new ReadOnlyViolationError(`refused before sending: ${ctx.getHttpMethod()} is not a read`);
    }

    let status: number;
    let body: string;
    try {
      const response = await http.send(ctx).toPromise();
      status = response.httpStatusCode;
      body = await response.body.text();
    } catch (error) {
      throw failure(error);
    }
    if (status < 200 || status >= 300) throw httpFailure(verb, target.describe, status, body, credentialValues(ctx));
    return body;
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

  async function list(query: ListQuery, signal?: AbortSignal): Promise<KubeObject[]> {
    const target = listTarget(query);
    const info = target.resource;
    return collectPages(
      async ({ limit, continueToken }) => {
        const params = new URLSearchParams(target.params);
        params.set('limit', String(limit));
        if (continueToken !== undefined) params.set('continue', continueToken);
        const raw = parseJson('list', target, await send('list', target, params, signal));
        const parsed = ListSchema.safeParse(raw);
        if (!parsed.success) {
          throw new ClusterReadError(
            `could not list ${target.describe}: the response is not a list (${parsed.error.issues[0]?.message})`,
            'invalid',
            undefined,
            { cause: parsed.error },
          );
        }
        const items: KubeObject[] = [];
        // Validated above; the raw items are kept so objects stay exactly as the server sent them.
        const rawItems = ((raw as { items?: unknown[] | null }).items ?? []) as Array<z.infer<typeof ItemSchema>>;
        for (const item of rawItems) {
          // A list's items carry no kind/apiVersion on the wire; kubectl adds them and so does the snapshot form.
          // Anything of another kind (a misbehaving proxy, say) is dropped, so a Secret can never slip through.
          if (item.kind !== undefined && item.kind !== info.kind) continue;
          items.push({ apiVersion: item.apiVersion ?? groupVersion(info), kind: info.kind, ...item } as KubeObject);
        }
        return { items, continueToken: parsed.data.metadata?.continue };
      },
      { pageSize, maxItems: target.maxItems, describe: target.describe },
    );
  }

  async function get(query: GetQuery, signal?: AbortSignal): Promise<KubeObject> {
    const target = getTarget(query);
    const raw = parseJson('get', target, await send('get', target, target.params, signal));
    const parsed = ItemSchema.safeParse(raw);
    const kind = parsed.success ? (parsed.data.kind ?? target.resource.kind) : undefined;
    if (!parsed.success || kind !== target.resource.kind || resourceForKind(kind) === undefined) {
      throw new ClusterReadError(
        `could not get ${target.describe}: the response is not a ${target.resource.kind}`,
        'invalid',
      );
    }
    const object = raw as KubeObject;
    return { apiVersion: object.apiVersion ?? groupVersion(target.resource), kind, ...object } as KubeObject;
  }

  async function logs(query: LogQuery, signal?: AbortSignal): Promise<string> {
    const target = logTarget(query, maxLogBytes);
    return send('read', target, target.params, signal);
  }

  return { list, get, logs, server: loaded.displayServer, context: loaded.context };
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
