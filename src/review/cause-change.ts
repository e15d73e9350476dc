import type { ResourceRef } from '../triage/envelope/index.js';

/**
 * What kubectl can do to the entity the root cause names, by its kind: how a change to it is undone, and what a
 * plan does when no template knows the fix. The envelope's `change` says what to change; these rules say how, for
 * any kind (a CronJob in another namespace, a LimitRange, a RoleBinding, a webhook configuration, a NodePool …).
 */

/** The kinds whose previous pod template `kubectl rollout undo` restores; for any other kind it fails. */
const ROLLOUT_KINDS: ReadonlySet<string> = new Set(['deployment', 'daemonset', 'statefulset']);

/** Kinds whose pods a person changes through their template. */
export const WORKLOAD_KINDS: ReadonlySet<string> = new Set([
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'CronJob',
  'Job',
  'DeploymentConfig',
]);

/** Short names kubectl accepts for a kind, so `pvc data` names the PersistentVolumeClaim data. */
const SHORT_NAMES: Record<string, readonly string[]> = {
  persistentvolumeclaim: ['pvc'],
  persistentvolume: ['pv'],
  horizontalpodautoscaler: ['hpa'],
  poddisruptionbudget: ['pdb'],
  namespace: ['ns'],
  service: ['svc'],
  serviceaccount: ['sa'],
  deployment: ['deploy'],
  statefulset: ['sts'],
  daemonset: ['ds'],
  configmap: ['cm'],
  cronjob: ['cj'],
  networkpolicy: ['netpol'],
  ingress: ['ing'],
  storageclass: ['sc'],
  resourcequota: ['quota'],
  limitrange: ['limits'],
};

/** Every word kubectl accepts for a kind (`PersistentVolumeClaim` → persistentvolumeclaim, pvc, …). */
export function kindWords(kind: string): string[] {
  const lower = kind.toLowerCase();
  return [lower, `${lower}s`, ...(SHORT_NAMES[lower] ?? [])];
}

/** Whether `kubectl rollout undo` can undo a change to this kind. */
function canRollOutUndo(kindWord: string): boolean {
  const lower = kindWord.toLowerCase();
  return [...ROLLOUT_KINDS].some((k) => kindWords(k).includes(lower));
}

/** The file a read saves an object as, for a rollback that applies it again. */
function manifestFile(kind: string, name: string): string {
  return `${kind.toLowerCase()}-${name}.yaml`;
}

function scope(ref: ResourceRef): string {
  return ref.namespace ? ` -n ${ref.namespace}` : '';
}

/** The read that records an object before it changes, saved as the file its rollback applies. */
function saveCommand(kind: string, name: string, namespace?: string): string {
  return `kubectl get ${kind.toLowerCase()} ${name}${namespace ? ` -n ${namespace}` : ''} -o yaml`;
}

/**
 * A rollback that cannot work (`rollout undo` of a CronJob, a Job, a ConfigMap …) rewritten to apply the object as
 * it was saved; undefined when the rollback is fine. `save` is the read that saves it.
 */
export function validRollback(
  rollback: string,
): { rollback: string; save: { command: string; file: string; kind: string; name: string } } | undefined {
  const m = /^kubectl rollout undo ([A-Za-z.]+)(?:\/| )([a-z0-9][a-z0-9.-]*)(?: -n ([a-z0-9-]+))?/.exec(rollback);
  if (!m || canRollOutUndo(m[1] ?? '')) return undefined;
  const [kind, name, namespace] = [m[1] ?? '', m[2] ?? '', m[3]];
  const file = manifestFile(kind, name);
  return {
    rollback: `kubectl apply -f ${file}`,
    save: { command: saveCommand(kind, name, namespace), file, kind, name },
  };
}

/** The steps of "change the entity as the envelope says", for a cause no template fix applies to. */
export function changeAsSaid(
  resource: ResourceRef,
  change: string,
): { command: string; description: string; mode: 'read' | 'write'; rollback?: string; saves?: string[] }[] {
  const file = manifestFile(resource.kind, resource.name);
  const what = `${resource.kind} ${resource.name}`;
  return [
    {
      command: saveCommand(resource.kind, resource.name, resource.namespace),
      description: `Save ${what} as ${file}; the rollback applies it again.`,
      mode: 'read',
      saves: [file],
    },
    {
      command: `kubectl edit ${resource.kind.toLowerCase()} ${resource.name}${scope(resource)}`,
      description: `Change ${what}: ${change.replace(/[.…\s]+$/, '')}.`,
      mode: 'write',
      rollback: `kubectl apply -f ${file}`,
    },
  ];
}

/** The kind words a command writes before each place it names `name` as an object ('' when none does). */
function namings(command: string, name: string): string[] {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const words: string[] = [];
  for (const m of command.matchAll(new RegExp(`(?<=^|\\s|=|/)${escaped}(?![a-z0-9-]|\\.[a-z0-9])`, 'g'))) {
    const before = command.slice(0, m.index);
    // `-n NAME` works in a namespace, it does not change it.
    if (/(?:^|\s)(?:-n|--namespace)[ =]$/.test(before)) continue;
    words.push(/(?:^|\s)([a-z][a-z.]*)[ /]$/.exec(before)?.[1] ?? '');
  }
  return words;
}

/** Whether a command changes this object: it names it, and not only as an object of another kind. */
export function namesObject(command: string, ref: ResourceRef, knownKinds: readonly string[]): boolean {
  const known = new Set(knownKinds.flatMap(kindWords));
  const own = new Set(kindWords(ref.kind));
  return namings(command, ref.name).some((word) => !known.has(word) || own.has(word));
}

/**
 * Whether a command names `name` as an object of another kind than `kind` (`label namespace keycloak-anyuid` for
 * a RoleBinding): a fix written for another kind of cause.
 */
export function namesAsOtherKind(command: string, name: string, kind: string, knownKinds: readonly string[]): boolean {
  const own = new Set(kindWords(kind));
  const known = new Set(knownKinds.flatMap(kindWords));
  return namings(command, name).some((word) => known.has(word) && !own.has(word));
}
