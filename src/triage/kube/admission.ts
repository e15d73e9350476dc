import type { KubeObject } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import type { ResourceRef } from '../envelope/findings.js';
import { staleCaBundleBehind } from './ca-injection.js';
import { clip, formatAge } from './events.js';
import { podsOfService, policiesDroppingControlPlane, targetPortsOf } from './network-policy.js';
import { isoAge, isPodReady, ref } from './pods.js';
import { parseQuantity } from './quantity.js';
import { backingWorkloads, namespaceExists, namespaceWasRead } from './reach.js';

/**
 * The object behind a refusal. kube-apiserver's admission plugins word their refusals without naming the object
 * that decides (the LimitRanger gives the bound, PodSecurity the level, a webhook its name), so the refusal is
 * followed to that object by what the message says: the LimitRange whose bound it quotes, the Namespace whose
 * `enforce` label sets the level, the webhook configuration that holds the webhook and the Service it calls, the
 * binding that grants an SCC to another service account. The workload's pod template is the other place to fix it.
 */

export interface Constraint {
  owner: ResourceRef;
  change: string;
  alternatives: Array<{ resource: ResourceRef; change: string }>;
  evidence: string[];
  related: ResourceRef[];
}

const inNs = (ctx: AnalyzerContext, o: KubeObject) => (o.metadata.namespace ?? ctx.namespace) === ctx.namespace;

/** The LimitRange whose bound the LimitRanger quotes ("maximum cpu usage per Container is 2, but limit is 4"). */
export function limitRangeBehind(ctx: AnalyzerContext, message: string, workload: ResourceRef): Constraint | undefined {
  const ranges = ctx.objects('limitranges').filter((l) => inNs(ctx, l));
  if (ranges.length === 0) return undefined;
  const m = /(maximum|minimum) (\S+) usage per (\S+) is ([^\s,]+?)(?:[.,]|\s|$)/.exec(message);
  const bound = m ? (m[1] === 'maximum' ? 'max' : 'min') : undefined;
  const resource = m?.[2];
  const type = m?.[3];
  const value = m?.[4] !== undefined ? parseQuantity(m[4]) : undefined;
  const quoting = ranges.filter((l) =>
    (
      (l.spec?.limits ?? []) as Array<{ type?: string; max?: Record<string, string>; min?: Record<string, string> }>
    ).some(
      (item) =>
        bound !== undefined &&
        resource !== undefined &&
        (type === undefined || item.type === type) &&
        item[bound]?.[resource] !== undefined &&
        (value === undefined || parseQuantity(item[bound]?.[resource]) === value),
    ),
  );
  const range = quoting[0] ?? (ranges.length === 1 ? ranges[0] : undefined);
  if (!range) return undefined;
  const owner = ref('LimitRange', range.metadata.name, ctx.namespace);
  const what = m ? `${bound} ${resource} per ${type} ${m[4]}` : 'its bounds';
  return {
    owner,
    change: `change LimitRange ${range.metadata.name} (${what}) so that ${workload.kind} ${workload.name}'s pods fit, if their resources are right`,
    alternatives: [
      {
        resource: workload,
        change: `set the containers' resources of ${workload.kind} ${workload.name} within LimitRange ${range.metadata.name}`,
      },
    ],
    evidence: [`LimitRange ${range.metadata.name}: ${JSON.stringify(range.spec?.limits ?? []).slice(0, 240)}`],
    related: [owner],
  };
}

/** The Namespace whose `pod-security.kubernetes.io/enforce` label sets the level PodSecurity refuses the pods at. */
export function podSecurityBehind(ctx: AnalyzerContext, level: string, workload: ResourceRef): Constraint {
  const ns = ctx.objects('namespaces').find((n) => n.metadata.name === ctx.namespace);
  const labels = ns?.metadata.labels ?? {};
  const enforce = labels['pod-security.kubernetes.io/enforce'];
  const owner = ref('Namespace', ctx.namespace);
  return {
    owner,
    change: `the Namespace enforces PodSecurity "${enforce ?? level}" (label pod-security.kubernetes.io/enforce${enforce ? `=${enforce}` : ''}): set the level the workloads were written for, or change them to meet "${level}"`,
    alternatives: [
      {
        resource: workload,
        change: `make the pod template of ${workload.kind} ${workload.name} meet PodSecurity "${level}" (securityContext)`,
      },
    ],
    evidence: [
      `Namespace ${ctx.namespace} labels: ${
        Object.entries(labels)
          .filter(([k]) => k.startsWith('pod-security.kubernetes.io/'))
          .map(([k, v]) => `${k}=${v}`)
          .join(', ') || 'no pod-security labels'
      }`,
    ],
    related: [owner],
  };
}

type Binding = KubeObject & {
  roleRef?: { kind?: string; name?: string };
  subjects?: Array<{ kind?: string; name?: string; namespace?: string }>;
};
type Rule = { apiGroups?: string[]; resources?: string[]; verbs?: string[]; resourceNames?: string[] };

/** Roles and ClusterRoles whose rules grant `verb` on `resource` of `group`. */
export function grantingRoles(ctx: AnalyzerContext, namespace: string, verb: string, resource: string, group: string) {
  const grants = (rules: unknown) =>
    ((rules ?? []) as Rule[]).some(
      (r) =>
        (r.verbs ?? []).some((v) => v === verb || v === '*') &&
        (r.resources ?? []).some((x) => x === resource || x === '*') &&
        (r.apiGroups ?? []).some((g) => g === group || g === '*'),
    );
  const roles = ctx
    .objects('roles')
    .filter((r) => r.metadata.namespace === namespace && grants(r['rules']))
    .map((r) => `Role/${r.metadata.name}`);
  const clusterRoles = ctx
    .objects('clusterroles')
    .filter((r) => grants(r['rules']))
    .map((r) => `ClusterRole/${r.metadata.name}`);
  return new Set([...roles, ...clusterRoles]);
}

export interface BindingVerdict {
  binding?: ResourceRef;
  subjects: string;
  role: string;
}

/**
 * The binding that grants one of `roles` in `namespace` (a RoleBinding there, or a ClusterRoleBinding), but not to
 * `serviceAccount`: the one that still names another (or an old) subject. Undefined when none does.
 */
export function bindingMissing(
  ctx: AnalyzerContext,
  namespace: string,
  grants: (role: string) => boolean,
  serviceAccount: string,
): BindingVerdict | undefined {
  const bindings = [
    ...ctx.objects('rolebindings').filter((b) => b.metadata.namespace === namespace),
    ...ctx.objects('clusterrolebindings'),
  ] as Binding[];
  for (const b of bindings) {
    const role = `${b.roleRef?.kind}/${b.roleRef?.name}`;
    if (!grants(role)) continue;
    const subjects = b.subjects ?? [];
    const has = subjects.some(
      (s) =>
        (s.kind === 'ServiceAccount' &&
          s.name === serviceAccount &&
          (s.namespace ?? b.metadata.namespace) === namespace) ||
        (s.kind === 'Group' &&
          (s.name === 'system:serviceaccounts' || s.name === `system:serviceaccounts:${namespace}`)),
    );
    if (has) return undefined;
    return {
      binding: ref(
        b.kind ?? (b.metadata.namespace ? 'RoleBinding' : 'ClusterRoleBinding'),
        b.metadata.name,
        b.metadata.namespace,
      ),
      subjects: subjects.map((s) => `${s.kind} ${s.namespace ? `${s.namespace}/` : ''}${s.name}`).join(', ') || 'none',
      role,
    };
  }
  return undefined;
}

/** The binding that grants `use` of an SCC in the namespace to a service account other than the pods'. */
export function sccBindingBehind(ctx: AnalyzerContext, workload: ResourceRef, podTemplate: KubeObject | undefined) {
  const sa = (podTemplate?.spec?.template?.spec?.serviceAccountName as string | undefined) ?? 'default';
  const roles = grantingRoles(ctx, ctx.namespace, 'use', 'securitycontextconstraints', 'security.openshift.io');
  // OpenShift names the ClusterRole that grants an SCC `system:openshift:scc:<scc>`, whether or not it was read.
  const grants = (role: string) => roles.has(role) || role.startsWith('ClusterRole/system:openshift:scc:');
  const verdict = bindingMissing(ctx, ctx.namespace, grants, sa);
  if (!verdict?.binding) return undefined;
  const constraint: Constraint = {
    owner: verdict.binding,
    change: `add ServiceAccount ${ctx.namespace}/${sa} (what ${workload.kind} ${workload.name} runs as) to the subjects of ${verdict.binding.kind} ${verdict.binding.name}, which grants ${verdict.role} to ${verdict.subjects}`,
    alternatives: [
      { resource: workload, change: `run ${workload.kind} ${workload.name} as a service account the binding names` },
    ],
    evidence: [
      `${verdict.binding.kind} ${verdict.binding.name}: ${verdict.role} → ${verdict.subjects}; the pods run as ServiceAccount ${sa}`,
    ],
    related: [verdict.binding],
  };
  return constraint;
}

/** A call that waited for an answer that never came: dropped on the way, not refused. */
const TIMED_OUT = /context deadline exceeded|i\/o timeout|Client\.Timeout|timed out|awaiting headers/i;

/**
 * The backend of a Service the API server calls runs ready pods, yet the call times out: an ingress NetworkPolicy on
 * those pods that admits nothing from outside the pod network drops it.
 */
export function controlPlaneBlock(
  ctx: AnalyzerContext,
  svc: KubeObject,
): { policy: ResourceRef; ports: string; evidence: string[] } | undefined {
  const pods = podsOfService(ctx, svc);
  if (pods.length === 0 || !pods.some(isPodReady)) return undefined;
  const ports = targetPortsOf(svc, pods);
  const policies = policiesDroppingControlPlane(ctx, pods, ports);
  const lead = policies[0];
  if (!lead) return undefined;
  const shown = [...ports].join(', ') || 'its port';
  return {
    policy: ref('NetworkPolicy', lead.metadata.name, lead.metadata.namespace),
    ports: shown,
    evidence: [
      `${pods.filter(isPodReady).length}/${pods.length} pods of Service ${svc.metadata.namespace}/${svc.metadata.name} ready, receiving on ${shown}`,
      clip(
        `NetworkPolicy ${lead.metadata.namespace}/${lead.metadata.name} (created ${formatAge(isoAge(ctx.now, lead.metadata.creationTimestamp))} ago) isolates them; ingress ${JSON.stringify(lead.spec?.ingress ?? [])} admits nothing from outside the pod network`,
      ),
    ],
  };
}

type Webhook = {
  name?: string;
  failurePolicy?: string;
  clientConfig?: { service?: { name?: string; namespace?: string; port?: number }; url?: string };
};

/** The webhook configuration holding webhook `name`, and the webhook. */
function webhookNamed(ctx: AnalyzerContext, name: string) {
  for (const kind of ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations'] as const) {
    for (const config of ctx.objects(kind)) {
      const hook = ((config['webhooks'] ?? []) as Webhook[]).find((w) => w.name === name);
      if (hook) return { config, hook };
    }
  }
  return undefined;
}

/**
 * A webhook the API server cannot call (`failed calling webhook "x": … no endpoints available for service "y"`,
 * connection refused, a timeout, an x509 error). With `failurePolicy: Fail` every matching request is refused. The
 * fault is the webhook's backend when one exists to fix; a configuration whose Service or workload is gone is stale.
 */
export function webhookBehind(ctx: AnalyzerContext, message: string): Constraint | undefined {
  const m = /failed calling webhook "([^"]+)"/.exec(message);
  if (!m) return undefined;
  const found = webhookNamed(ctx, m[1] as string);
  const svcFromMessage = /(?:https:\/\/)([a-z0-9-]+)\.([a-z0-9-]+)\.svc/.exec(message);
  if (!found) {
    if (!svcFromMessage) return undefined;
    const svc = ref('Service', svcFromMessage[1] as string, svcFromMessage[2] as string);
    return {
      owner: svc,
      change: `restore the backend of webhook ${m[1]} (Service ${svc.namespace}/${svc.name})`,
      alternatives: [],
      evidence: [`webhook ${m[1]} calls Service ${svc.namespace}/${svc.name}; its configuration could not be read`],
      related: [svc],
    };
  }
  const { config, hook } = found;
  const configRef = ref(String(config.kind), config.metadata.name);
  const target = hook.clientConfig?.service;
  const policy = hook.failurePolicy ?? 'Fail';
  const evidence = [
    `${config.kind} ${config.metadata.name}: webhook ${hook.name}, failurePolicy ${policy}, calls ${target ? `Service ${target.namespace}/${target.name}${target.port ? `:${target.port}` : ''}` : (hook.clientConfig?.url ?? 'an unknown endpoint')}`,
  ];
  const stale = {
    owner: configRef,
    change: `remove ${config.kind} ${config.metadata.name} (its backend is gone), or set failurePolicy: Ignore on webhook ${hook.name}`,
    alternatives: [],
    evidence,
    related: [configRef, ...(target?.name && target.namespace ? [ref('Service', target.name, target.namespace)] : [])],
  };
  const injector = staleCaBundleBehind(ctx, config, hook.name ?? (m[1] as string), message);
  if (injector) {
    return {
      owner: injector.owner,
      change: injector.change,
      alternatives: [],
      evidence: [...evidence, ...injector.evidence],
      related: [...injector.related, ...stale.related.slice(1)],
    };
  }
  if (!target?.name || !target.namespace) return stale;
  const svcRef = ref('Service', target.name, target.namespace);
  const exists = namespaceExists(ctx, target.namespace);
  if (exists === 'absent') {
    return { ...stale, evidence: [...evidence, `namespace ${target.namespace} does not exist`] };
  }
  if (!namespaceWasRead(ctx, target.namespace)) {
    // The backend's namespace is read next; until then the configuration is what is known.
    return {
      ...stale,
      change: `restore the backend of webhook ${hook.name} (Service ${target.namespace}/${target.name}), or set failurePolicy: Ignore in ${config.kind} ${config.metadata.name}`,
      evidence: [...evidence, `namespace ${target.namespace} was not read: the webhook's backend is not yet known`],
      related: [configRef, svcRef],
    };
  }
  const svc = ctx
    .objects('services')
    .find((s) => s.metadata.name === target.name && s.metadata.namespace === target.namespace);
  const workloads = svc ? backingWorkloads(ctx, svc) : [];
  const backend = workloads[0];
  if (!svc || !backend) {
    return {
      ...stale,
      evidence: [
        ...evidence,
        svc
          ? `Service ${target.namespace}/${target.name} selects no workload`
          : `Service ${target.namespace}/${target.name} does not exist`,
      ],
    };
  }
  const blocking = TIMED_OUT.test(message) ? controlPlaneBlock(ctx, svc) : undefined;
  if (blocking) {
    return {
      owner: blocking.policy,
      change: `let NetworkPolicy ${blocking.policy.namespace}/${blocking.policy.name} admit the API server's calls to the pods of ${backend.kind} ${backend.name} (an ingress rule with an ipBlock, or no from, on port ${blocking.ports})`,
      alternatives: [
        {
          resource: configRef,
          change: `set failurePolicy: Ignore on webhook ${hook.name} while its backend is unreachable`,
        },
      ],
      evidence: [...evidence, ...blocking.evidence],
      related: [configRef, svcRef, backend, blocking.policy],
    };
  }
  return {
    owner: backend,
    change: `bring ${backend.kind} ${backend.namespace}/${backend.name}, the backend of webhook ${hook.name}, back to ready pods`,
    alternatives: [
      { resource: configRef, change: `set failurePolicy: Ignore on webhook ${hook.name} while its backend is down` },
    ],
    evidence,
    related: [configRef, svcRef, backend],
  };
}
