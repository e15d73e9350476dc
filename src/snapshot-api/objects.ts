import type { RouteRequest } from './handler.js';
import { readJson, writeJson, writeJsonText } from './http.js';
import { podLog } from './logs.js';
import { negotiate, partial } from './negotiation.js';
import { includeObject, isTrue, optionalInt, optionalString } from './params.js';
import { type Route, selfSubjectRulesReview } from './routes.js';
import { notFound, pathNotFound } from './status.js';
import { toTable } from './tables.js';

/** The answers of every route but lists: single objects, pod logs, the fixed documents and the rules review. */

type RouteOf<T extends Route['type']> = Extract<Route, { type: T }>;

export function answerDocument(target: RouteOf<'document'>, { res }: RouteRequest): void {
  writeJson(res, 200, target.body);
}

export function answerHealth(_target: RouteOf<'health'>, { res }: RouteRequest): void {
  res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end('ok');
}

export function answerUnknown(): never {
  throw pathNotFound();
}

/** The one write a read-only server takes: a caller asking what it may do, which changes nothing. */
export async function answerRulesReview(
  _target: RouteOf<'rulesReview'>,
  { state, req, res }: RouteRequest,
): Promise<void> {
  const { metrics } = state.catalog;
  writeJson(res, 201, selfSubjectRulesReview(await readJson(req), metrics.pods.length + metrics.nodes.length > 0));
}

export function answerSecrets(target: RouteOf<'secrets'>, { state, res }: RouteRequest): void {
  if (target.name !== undefined) throw notFound('secrets', target.name);
  writeJson(res, 200, {
    kind: 'SecretList',
    apiVersion: 'v1',
    metadata: { resourceVersion: state.catalog.resourceVersion },
    items: [],
  });
}

export function answerLog(target: RouteOf<'log'>, { state, url, res }: RouteRequest): void {
  const params = url.searchParams;
  const pod = state.catalog.get('pods', target.namespace, target.name);
  if (!pod) throw notFound('pods', target.name);
  const text = podLog(pod.object, state.logs, {
    previous: isTrue(params.get('previous')),
    ...optionalString('container', params.get('container')),
    ...optionalInt('tailLines', params.get('tailLines')),
    ...optionalInt('limitBytes', params.get('limitBytes')),
  });
  res.writeHead(200, { 'Content-Type': 'text/plain' });
  res.end(text);
}

export function answerGet(target: RouteOf<'get'>, { state, url, req, res }: RouteRequest): void {
  const { catalog } = state;
  const object = catalog.get(target.info.plural, target.namespace, target.name);
  if (!object) throw notFound(target.info.plural, target.name, target.info.group);
  const format = negotiate(req.headers.accept);
  if (format.as === 'Table') {
    writeJson(res, 200, {
      ...toTable(target.info.plural, [object.object], {
        now: catalog.now,
        resourceVersion: catalog.resourceVersion,
        includeObject: includeObject(url.searchParams.get('includeObject')),
      }),
      apiVersion: format.version,
    });
  } else if (format.as === 'PartialObjectMetadata') {
    writeJson(res, 200, partial(object.object, format.version));
  } else {
    writeJsonText(res, 200, object.bytes);
  }
}
