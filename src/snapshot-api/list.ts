import type { ServerResponse } from 'node:http';
import type { ResourceInfo } from '../cluster/resources.js';
import type { StoredObject } from '../cluster/stored-object.js';
import { objectKey } from './catalog.js';
import type { RouteRequest } from './handler.js';
import { writeJson, writeJsonParts } from './http.js';
import { labelCandidates } from './label-index.js';
import { type Format, negotiate, partial } from './negotiation.js';
import { paginate } from './paging.js';
import { includeObject, isTrue, optionalInt } from './params.js';
import type { Route } from './routes.js';
import {
  fieldMatcher,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  validateFieldSelector,
} from './selectors.js';
import type { SnapshotState } from './state.js';
import { toTable } from './tables.js';

const COMMA = Buffer.from(',');
const LIST_CLOSE = Buffer.from(']}');

/** Lists and watches of one kind: selectors, paging and the representation the client asked for. */
export function answerList(target: Extract<Route, { type: 'list' }>, { state, url, req, res }: RouteRequest): void {
  const { info, namespace } = target;
  const params = url.searchParams;
  const selected = select(state, info, namespace, params);
  const format = negotiate(req.headers.accept);
  if (isTrue(params.get('watch'))) {
    watch(state, info, selected, params, format, res);
    return;
  }
  const { catalog } = state;
  const limit = optionalInt('limit', params.get('limit')).limit;
  const continueToken = params.get('continue') || undefined;
  const page = paginate(state.continueContext, selected, objectKey, {
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
      ...toTable(
        info.plural,
        page.items.map((o) => o.object),
        {
          now: catalog.now,
          resourceVersion: catalog.resourceVersion,
          includeObject: includeObject(params.get('includeObject')),
          ...(page.continueToken ? { continueToken: page.continueToken } : {}),
          ...(page.remaining !== undefined ? { remaining: page.remaining } : {}),
        },
      ),
      apiVersion: format.version,
    });
    return;
  }
  if (format.as === 'PartialObjectMetadata') {
    writeJson(res, 200, {
      kind: 'PartialObjectMetadataList',
      apiVersion: format.version,
      metadata,
      items: page.items.map((o) => partial(o.object, format.version)),
    });
    return;
  }
  const head = JSON.stringify({
    kind: `${info.kind}List`,
    apiVersion: info.group === '' ? info.version : `${info.group}/${info.version}`,
    metadata,
  });
  writeJsonParts(res, 200, [Buffer.from(`${head.slice(0, -1)},"items":[`), ...joined(page.items), LIST_CLOSE]);
}

/**
 * The items' texts joined by commas: the same bytes as serializing them, without doing so, and bytes as they were
 * kept, so that nothing is encoded again. Items whose texts follow each other in one buffer, a comma between them
 * (a parsed-snapshot cache entry lays them out so, see snapshot-cache.ts), go as one slice of it.
 */
function joined(items: readonly StoredObject[]): Buffer[] {
  const parts: Buffer[] = [];
  // The run of spans being joined: its buffer, from `start` to `end`.
  let source: Buffer | undefined;
  let start = 0;
  let end = 0;
  const flush = () => {
    if (source === undefined) return;
    if (parts.length > 0) parts.push(COMMA);
    parts.push(source.subarray(start, end));
    source = undefined;
  };
  for (const item of items) {
    if (source !== undefined) {
      const next = item.endAfter(source, end);
      if (next >= 0) {
        end = next;
        continue;
      }
    }
    flush();
    const itemSource = item.spanSource;
    if (itemSource !== undefined) {
      source = itemSource;
      start = item.spanStart;
      end = item.spanEnd;
      continue;
    }
    if (parts.length > 0) parts.push(COMMA);
    parts.push(item.bytes);
  }
  flush();
  return parts;
}

function select(
  state: SnapshotState,
  info: ResourceInfo,
  namespace: string | undefined,
  params: URLSearchParams,
): readonly StoredObject[] {
  const labelSelector = params.get('labelSelector') ?? '';
  const fieldSelector = params.get('fieldSelector') ?? '';
  const labels = parseLabelSelector(labelSelector);
  const fields = parseFieldSelector(fieldSelector);
  validateFieldSelector(info.plural, fields);
  return state.selection(info.plural, namespace, labelSelector, fieldSelector, () => {
    const { catalog } = state;
    const candidates =
      labelCandidates(labels, (key) => catalog.labelKey(info.plural, namespace, key)) ??
      (namespace === undefined ? catalog.objects(info.plural) : catalog.objectsKeyedIn(info.plural, namespace));
    const fieldsMatch = fields.length > 0 ? fieldMatcher(info.plural, fields) : undefined;
    // With nothing to test, a namespace without a slash (as every real one is) is exactly the objects keyed in it.
    const exact = namespace === undefined || !namespace.includes('/');
    if (exact && labels.length === 0 && fieldsMatch === undefined) return candidates;
    const matching: StoredObject[] = [];
    for (let i = 0; i < candidates.length; i++) {
      const o = candidates[i] as StoredObject;
      if (namespace !== undefined && o.namespace !== namespace) continue;
      if (labels.length > 0 && !matchesLabels(labels, o.labels)) continue;
      if (fieldsMatch !== undefined && !fieldsMatch(o)) continue;
      matching.push(o);
    }
    return matching;
  });
}

/**
 * A snapshot never changes, so a watch replays the current state as ADDED events (unless the client already has
 * this resourceVersion) and then stays quiet until `timeoutSeconds` or shutdown, like an idle real watch.
 */
function watch(
  state: SnapshotState,
  info: ResourceInfo,
  selected: readonly StoredObject[],
  params: URLSearchParams,
  format: Format,
  res: ServerResponse,
): void {
  const { catalog } = state;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
  const since = params.get('resourceVersion');
  if (since !== catalog.resourceVersion) {
    for (const object of selected) {
      const text =
        format.as === 'Table'
          ? JSON.stringify({
              ...toTable(info.plural, [object.object], {
                now: catalog.now,
                resourceVersion: catalog.resourceVersion,
                includeObject: includeObject(params.get('includeObject')),
              }),
              apiVersion: format.version,
            })
          : object.text;
      res.write(`{"type":"ADDED","object":${text}}\n`);
    }
  }
  const timeout = optionalInt('timeoutSeconds', params.get('timeoutSeconds')).timeoutSeconds;
  if (timeout !== undefined) state.after(timeout * 1000, () => res.end());
}
