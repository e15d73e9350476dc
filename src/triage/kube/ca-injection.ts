import type { KubeObject } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import type { ResourceRef } from '../envelope/findings.js';
import { ownerOf } from './pod-owners.js';
import { containers, isPodReady, ref } from './pods.js';

/**
 * A webhook configuration annotated `cert-manager.io/inject-ca-from: <namespace>/<certificate>` has its `caBundle`
 * written by cert-manager's cainjector, each time that Certificate is renewed. When the API server's call fails
 * `x509: certificate signed by unknown authority`, the serving certificate was renewed and the caBundle was not: the
 * webhook's backend serves the right certificate and is not the thing to change. A cainjector that is not running
 * (OOM-killed in a loop, crash-looping) is.
 */

const INJECT_FROM = ['cert-manager.io/inject-ca-from', 'cert-manager.io/inject-ca-from-secret'] as const;
const UNKNOWN_AUTHORITY = 'x509: certificate signed by unknown authority';
/** The cainjector's pods as cert-manager's Helm chart and static manifests label them. */
const CAINJECTOR = 'cainjector';

export interface StaleCaBundle {
  owner: ResourceRef;
  change: string;
  evidence: string[];
  related: ResourceRef[];
}

function memoryLimit(spec: unknown): string | undefined {
  const limit = (spec as { resources?: { limits?: { memory?: unknown } } } | undefined)?.resources?.limits?.memory;
  return typeof limit === 'string' ? limit : undefined;
}

/** What keeps a cert-manager-injected caBundle stale, when the call failed on an unknown authority. */
export function staleCaBundleBehind(
  ctx: AnalyzerContext,
  config: KubeObject,
  hookName: string,
  message: string,
): StaleCaBundle | undefined {
  if (!message.includes(UNKNOWN_AUTHORITY)) return undefined;
  const annotations = config.metadata.annotations ?? {};
  const key = INJECT_FROM.find((k) => typeof annotations[k] === 'string');
  if (key === undefined) return undefined;
  const source = annotations[key] as string;
  const injectors = ctx
    .objects('pods')
    .filter(
      (p) =>
        p.metadata.labels?.['app.kubernetes.io/component'] === CAINJECTOR ||
        p.metadata.labels?.['app.kubernetes.io/name'] === CAINJECTOR,
    );
  const broken = injectors.filter((p) => !isPodReady(p));
  // A running cainjector (or none read) leaves the stale bundle unexplained: the backend's own account stands.
  if (injectors.length === 0 || broken.length < injectors.length) return undefined;
  const pod = broken[0] as KubeObject;
  const owner = ownerOf(ctx, pod) ?? ref('Pod', pod.metadata.name, pod.metadata.namespace);
  const container = containers(pod).find((c) => !c.ready) ?? containers(pod)[0];
  const killed = container?.lastTerminated?.reason ?? container?.terminated?.reason;
  const limit = memoryLimit(container?.spec);
  const oom = killed === 'OOMKilled';
  const state = [
    container?.waitingReason,
    killed
      ? `last terminated ${killed}${container?.lastTerminated?.exitCode !== undefined ? ` (exit ${container.lastTerminated.exitCode})` : ''}`
      : undefined,
    container ? `${container.restartCount} restarts` : undefined,
    limit ? `memory limit ${limit}` : undefined,
  ].filter((s): s is string => typeof s === 'string');
  const configRef = ref(String(config.kind), config.metadata.name);
  return {
    owner,
    change: oom
      ? `raise the memory limit of ${owner.kind} ${owner.namespace}/${owner.name}${limit ? ` (now ${limit})` : ''}, cert-manager's cainjector, so it runs and writes the current CA into ${config.kind} ${config.metadata.name}`
      : `bring ${owner.kind} ${owner.namespace}/${owner.name}, cert-manager's cainjector, back to a running pod so it writes the current CA into ${config.kind} ${config.metadata.name}`,
    evidence: [
      `webhook ${hookName}: ${UNKNOWN_AUTHORITY}: its caBundle does not verify the certificate its backend serves`,
      `${config.kind} ${config.metadata.name} takes its caBundle from ${source} (${key}), written by cert-manager's cainjector`,
      `${pod.metadata.namespace}/${pod.metadata.name}: not ready${state.length > 0 ? `, ${state.join(', ')}` : ''}`,
    ],
    related: [configRef],
  };
}
