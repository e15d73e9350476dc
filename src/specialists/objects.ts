import { isConditionTrue } from '../cluster/conditions.js';
import type { KubeObject } from '../cluster/types.js';
import type { ResourceRef } from '../triage/envelope/index.js';
import type { AnalyzerResult, SpecialistCheck, SpecialistFinding } from './types.js';

/** Small readers of raw API objects the specialist analyzers share. */

export function refOf(o: KubeObject, kind = o.kind ?? 'Object'): ResourceRef {
  return { kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) };
}

export function isReady(pod: KubeObject): boolean {
  return isConditionTrue(pod, 'Ready');
}

/** The Deployment (through its ReplicaSet), StatefulSet, DaemonSet or Job a pod belongs to, by name convention. */
export function workloadOf(pod: KubeObject): ResourceRef | undefined {
  const owner = pod.metadata.ownerReferences?.find((o) => o.controller) ?? pod.metadata.ownerReferences?.[0];
  if (!owner) return undefined;
  const namespace = pod.metadata.namespace;
  if (owner.kind === 'ReplicaSet') {
    const name = owner.name.replace(/-[a-z0-9]{5,10}$/, '');
    return { kind: 'Deployment', name, ...(namespace ? { namespace } : {}) };
  }
  return { kind: owner.kind, name: owner.name, ...(namespace ? { namespace } : {}) };
}

// biome-ignore lint/suspicious/noExplicitAny: raw API JSON, as KubeObject's spec and status; readers narrow it
export type RawObject = Record<string, any>;

export interface ContainerState {
  name: string;
  restartCount: number;
  ready: boolean;
  lastTerminated?: { reason?: string; exitCode?: number };
  waitingReason?: string;
}

export function containerStates(pod: KubeObject): ContainerState[] {
  const statuses = (pod.status?.containerStatuses ?? []) as RawObject[];
  return statuses.map((s) => ({
    name: String(s['name'] ?? ''),
    restartCount: Number(s['restartCount'] ?? 0),
    ready: s['ready'] === true,
    ...(s['lastState']?.terminated
      ? { lastTerminated: { reason: s['lastState'].terminated.reason, exitCode: s['lastState'].terminated.exitCode } }
      : {}),
    ...(s['state']?.waiting?.reason ? { waitingReason: String(s['state'].waiting.reason) } : {}),
  }));
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export function names(items: readonly string[], max = 4): string {
  const shown = items.slice(0, max).join(', ');
  return items.length > max ? `${shown} and ${items.length - max} more` : shown;
}

/** An analyzer's answer with its one check: found when it has findings, ruled out (with what was seen) otherwise. */
export function withCheck(
  analyzer: string,
  findings: SpecialistFinding[],
  what: string,
  detail: string,
): AnalyzerResult {
  return { findings, checks: [{ analyzer, what, outcome: findings.length > 0 ? 'found' : 'ruled-out', detail }] };
}

/** An analyzer's answer that is its one check alone: what it looked at, and why that found, ruled out or read nothing. */
export function onlyCheck(
  analyzer: string,
  what: string,
  outcome: SpecialistCheck['outcome'],
  detail: string,
): AnalyzerResult {
  return { findings: [], checks: [{ analyzer, what, outcome, detail }] };
}
