import type { KubeObject } from '../../cluster/types.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { blameSolverIssuer } from '../kube/acme-solver.js';
import { canSee, clip, describeEvent, findEvents, formatAge, MINUTE } from '../kube/events.js';
import { nameList } from '../kube/evidence-list.js';
import { ownerOf } from '../kube/pod-owners.js';
import { inNamespace, isoAge, isPodReady, podRef, ref } from '../kube/pods.js';
import { blameOrder, describePolicy, ingressVerdict, selectableLabels } from '../kube/policy-verdicts.js';
import {
  inWindow,
  isNginxController,
  type NginxAccess,
  type NginxConnectTimeout,
  type NginxIgnored,
  type NginxNoEndpoints,
  nginxUpstreamName,
  parseNginxLine,
  podLogLines,
  shortTime,
} from '../kube/proxy-logs.js';
import {
  endpointState,
  findService,
  managedBy,
  type NetworkingEmit,
  networkingEmitter,
  scaledToZeroEvent,
  selectedPods,
  whyNoEndpoints,
} from '../kube/services.js';
import { scrubText } from '../scrub.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

const NAME = 'ingress';

/** An Ingress without an address after this long is not "still being reconciled". */
const ADDRESS_GRACE_MS = 5 * MINUTE;

function isDefaultClass(ic: KubeObject): boolean {
  return ic.metadata.annotations?.['ingressclass.kubernetes.io/is-default-class'] === 'true';
}

function className(ing: KubeObject): string | undefined {
  return ing.spec?.ingressClassName ?? ing.metadata.annotations?.['kubernetes.io/ingress.class'];
}

function addressOf(ing: KubeObject): string | undefined {
  const lb = ing.status?.loadBalancer?.ingress;
  if (!Array.isArray(lb)) return undefined;
  const first = lb.find((i: { ip?: string; hostname?: string }) => i.ip || i.hostname);
  return first ? (first.ip ?? first.hostname) : undefined;
}

function hasAddress(ing: KubeObject): boolean {
  return addressOf(ing) !== undefined;
}

type ContainerSpec = { image?: string; args?: string[]; command?: string[] };

/** Whether a controller container serves a class: its flags name the class or the controller, or it is ingress-nginx with its defaults. */
function servesClass(cs: readonly ContainerSpec[], cls: string, controller: string): boolean {
  return cs.some((c) => {
    const args = [...(c.command ?? []), ...(c.args ?? [])].join(' ');
    return (
      args.includes(`--ingress-class=${cls}`) ||
      args.includes(`--controller-class=${controller}`) ||
      (controller === 'k8s.io/ingress-nginx' &&
        /ingress-nginx\/controller/.test(c.image ?? '') &&
        !/--controller-class=/.test(args))
    );
  });
}

/**
 * The controller class an ingress-nginx container answers to: its `--controller-class`, or the default
 * `k8s.io/ingress-nginx` when the flag is absent. Undefined for other controllers.
 */
function nginxControllerClass(c: ContainerSpec): string | undefined {
  const args = [...(c.command ?? []), ...(c.args ?? [])].join(' ');
  const flag = /--controller-class=(\S+)/.exec(args)?.[1];
  if (flag) return flag;
  return /ingress-nginx\/controller/.test(c.image ?? '') ? 'k8s.io/ingress-nginx' : undefined;
}

/**
 * Running ingress-nginx pods told to serve a class by name (`--ingress-class=<cls>`) whose `--controller-class` is
 * not the one the IngressClass names: ingress-nginx keeps only the IngressClasses whose spec.controller equals its
 * controller class, so it ignores every Ingress of that class.
 */
function mismatchedControllers(ctx: AnalyzerContext, cls: string, controller: string): KubeObject[] {
  return ctx.objects('pods').filter((pod) => {
    if (pod.status?.phase !== 'Running') return false;
    const cs = (Array.isArray(pod.spec?.containers) ? pod.spec.containers : []) as ContainerSpec[];
    return cs.some((c) => {
      const own = nginxControllerClass(c);
      const args = [...(c.command ?? []), ...(c.args ?? [])].join(' ');
      return own !== undefined && own !== controller && args.includes(`--ingress-class=${cls}`);
    });
  });
}

/** Controller pods that serve a class. */
function controllerPods(ctx: AnalyzerContext, cls: string, controller: string): KubeObject[] {
  return ctx
    .objects('pods')
    .filter((pod) => servesClass(Array.isArray(pod.spec?.containers) ? pod.spec.containers : [], cls, controller));
}

/** Deployments and DaemonSets (wherever they were read) whose pod template runs a controller for the class. */
function controllerWorkloads(ctx: AnalyzerContext, cls: string, controller: string): KubeObject[] {
  return [...ctx.objects('deployments'), ...ctx.objects('daemonsets')].filter((w) =>
    servesClass(
      Array.isArray(w.spec?.template?.spec?.containers) ? w.spec.template.spec.containers : [],
      cls,
      controller,
    ),
  );
}

function runsNothing(w: KubeObject): boolean {
  if (w.kind === 'DaemonSet') return w.status?.desiredNumberScheduled === 0;
  return w.spec?.replicas === 0;
}

interface Backend {
  service: string;
  port: string;
  path: string;
}

function backends(ing: KubeObject): Backend[] {
  const out: Backend[] = [];
  const add = (
    b: { service?: { name?: string; port?: { number?: number; name?: string } } } | undefined,
    path: string,
  ) => {
    if (b?.service?.name)
      out.push({ service: b.service.name, port: String(b.service.port?.number ?? b.service.port?.name ?? ''), path });
  };
  add(ing.spec?.defaultBackend, '(default backend)');
  for (const rule of ing.spec?.rules ?? []) {
    for (const p of rule.http?.paths ?? []) add(p.backend, `${rule.host ?? '*'}${p.path ?? '/'}`);
  }
  const seen = new Set<string>();
  return out.filter((b) => !seen.has(b.service) && seen.add(b.service));
}

interface Seen<T> {
  pod: KubeObject;
  entry: T;
}

/** What the ingress-nginx controllers' logs say, indexed by the object each line is about. */
interface ControllerLogs {
  noEndpoints: Map<string, Seen<NginxNoEndpoints>>;
  ignored: Map<string, Seen<NginxIgnored>>;
  access: Map<string, Seen<NginxAccess>[]>;
  /** Connections to upstream servers that timed out, by the server's address. */
  connectTimeouts: Map<string, Seen<NginxConnectTimeout>[]>;
}

function readControllerLogs(ctx: AnalyzerContext): ControllerLogs {
  const logs: ControllerLogs = {
    noEndpoints: new Map(),
    ignored: new Map(),
    access: new Map(),
    connectTimeouts: new Map(),
  };
  for (const pod of ctx.objects('pods').filter(isNginxController)) {
    for (const line of podLogLines(ctx, pod)) {
      const entry = parseNginxLine(line, ctx.now);
      if (!entry) continue;
      if (entry.kind === 'no-endpoints') {
        if (inWindow(entry.at, ctx.now)) logs.noEndpoints.set(`${entry.namespace}/${entry.service}`, { pod, entry });
      } else if (entry.kind === 'ignored') {
        logs.ignored.set(`${entry.namespace}/${entry.ingress}`, { pod, entry });
      } else if (entry.kind === 'connect-timeout') {
        if (!inWindow(entry.at, ctx.now)) continue;
        const list = logs.connectTimeouts.get(entry.address) ?? [];
        list.push({ pod, entry });
        logs.connectTimeouts.set(entry.address, list);
      } else if (inWindow(entry.at, ctx.now)) {
        const list = logs.access.get(entry.upstream) ?? [];
        list.push({ pod, entry });
        logs.access.set(entry.upstream, list);
      }
    }
  }
  return logs;
}

/** `controller P: <warning>` and, when access lines were read, how many requests got no upstream. */
function controllerEvidence(logs: ControllerLogs, namespace: string, b: Backend, now: Date): string[] {
  const out: string[] = [];
  const warning = logs.noEndpoints.get(`${namespace}/${b.service}`);
  if (warning) out.push(clip(scrubText(`controller ${warning.pod.metadata.name}: ${warning.entry.quote}`)));
  const access = logs.access.get(nginxUpstreamName(namespace, b.service, b.port)) ?? [];
  const failed = access.filter((a) => a.entry.status >= 500 && a.entry.upstreamAddr === '-');
  const last = failed[failed.length - 1];
  if (last) {
    out.push(
      clip(
        scrubText(
          `controller ${last.pod.metadata.name} (${failed.length}/${access.length} requests since ${shortTime(failed[0]?.entry.at, now)} answered ${[...new Set(failed.map((f) => f.entry.status))].join('/')} without an upstream): ${last.entry.quote}`,
        ),
      ),
    );
  }
  return out;
}

export const ingressAnalyzer: Analyzer = {
  name: NAME,
  domain: 'networking',
  description:
    'Ingresses without a class or default class, classes no running controller serves (and the controller workload scaled to zero), missing or empty backends with what the controller logs about them, no address.',
  needs: ['ingresses', 'ingressclasses', 'services', 'endpoints', 'pods', 'events'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    if (!canSee(ctx, 'ingresses')) return [];
    const ingresses = inNamespace(ctx, ctx.objects('ingresses'));
    // The controllers' logs explain Ingresses: a namespace without one has nothing to read them for.
    if (ingresses.length === 0) return [];
    const findings: FindingInput[] = [];
    const classes = ctx.objects('ingressclasses');
    const seeClasses = canSee(ctx, 'ingressclasses');
    const logs = readControllerLogs(ctx);
    for (const ing of ingresses) {
      const namespace = ing.metadata.namespace ?? ctx.namespace;
      const resource = ref('Ingress', ing.metadata.name, namespace);
      const age = isoAge(ctx.now, ing.metadata.creationTimestamp);
      const addressed = hasAddress(ing);
      const state = `Ingress ${ing.metadata.name} ${addressed ? 'has an address' : 'has no address'} after ${formatAge(age)}`;
      const emit = networkingEmitter(findings, NAME, resource);
      const events = findEvents(ctx, { kind: 'Ingress', name: ing.metadata.name, namespace });
      const eventLine = events.find((e) => e.type === 'Warning') ?? events[0];
      const ignored = logs.ignored.get(`${namespace}/${ing.metadata.name}`);
      const ignoredLine = ignored
        ? clip(scrubText(`controller ${ignored.pod.metadata.name}: ${ignored.entry.quote}`))
        : undefined;
      const cls = className(ing);
      const before = findings.length;
      const scene: IngressScene = { ing, namespace, age, addressed, state, emit, eventLine, ignoredLine, cls };
      const classProblem = classFindings(ctx, scene, classes, seeClasses, findings);
      blameSolverIssuer(
        ctx,
        ing,
        findings.slice(before),
        classes.map((c) => c.metadata.name).filter((c) => c !== cls),
      );
      const backendProblem = backendFindings(ctx, scene, logs, findings);
      if (!addressed && !classProblem && age >= ADDRESS_GRACE_MS) noAddressFinding(ctx, scene, backendProblem);
    }
    return findings;
  },
};

/** One Ingress as every step reads it: its age, address, state line, events and what its controller ignored. */
interface IngressScene {
  ing: KubeObject;
  namespace: string;
  age: number;
  addressed: boolean;
  state: string;
  emit: NetworkingEmit;
  eventLine: ReturnType<typeof findEvents>[number] | undefined;
  ignoredLine: string | undefined;
  cls: string | undefined;
}

/** No class, a class that does not exist, or one no running controller serves. Returns whether one was found. */
function classFindings(
  ctx: AnalyzerContext,
  scene: IngressScene,
  classes: readonly KubeObject[],
  seeClasses: boolean,
  findings: FindingInput[],
): boolean {
  const { ing, age, addressed, state, emit, ignoredLine, cls } = scene;
  let classProblem = false;
  if (cls === undefined && seeClasses) {
    const defaults = classes.filter(isDefaultClass);
    if (defaults.length === 0) {
      classProblem = true;
      emit(
        'INGRESS_NO_CLASS',
        'high',
        `Ingress ${ing.metadata.name} names no IngressClass and no class is marked default, so no controller picks it up.`,
        [
          state,
          'spec.ingressClassName unset, no kubernetes.io/ingress.class annotation',
          `IngressClasses: ${classes.map((c) => `${c.metadata.name} (${c.spec?.controller})`).join(', ') || 'none'}; none annotated ingressclass.kubernetes.io/is-default-class=true`,
          ...(ignoredLine ? [ignoredLine] : []),
        ],
        addressed ? 0.5 : 0.92,
        [],
        ['set-ingress-class', 'mark-default-ingressclass'],
      );
    }
  } else if (cls !== undefined && seeClasses) {
    const ic = classes.find((c) => c.metadata.name === cls);
    if (!ic) {
      classProblem = true;
      emit(
        'INGRESS_CLASS_NOT_FOUND',
        // An Ingress with an address is being served whatever its class says: a note, not the fault.
        addressed ? 'info' : 'high',
        `Ingress ${ing.metadata.name} asks for IngressClass "${cls}", which does not exist.`,
        [
          state,
          `IngressClasses: ${classes.map((c) => c.metadata.name).join(', ') || 'none'}`,
          ...(ignoredLine ? [ignoredLine] : []),
        ],
        addressed ? 0.5 : 0.93,
        [ref('IngressClass', cls)],
        ['set-ingress-class'],
      );
    } else if (!addressed && age >= ADDRESS_GRACE_MS) {
      const unserved = classWithoutController(ctx, ing, cls, String(ic.spec?.controller ?? ''), state, ignoredLine);
      if (unserved) {
        classProblem = true;
        emit(
          'INGRESS_CLASS_NO_CONTROLLER',
          'high',
          unserved.message,
          unserved.evidence,
          unserved.confidence,
          [ref('IngressClass', cls)],
          ['install-ingress-controller', 'set-ingress-class'],
          unserved.owner,
        );
        const emitted = findings[findings.length - 1];
        if (emitted && unserved.change) emitted.change = unserved.change;
        if (emitted && unserved.alternatives) emitted.alternatives = unserved.alternatives;
      }
    }
  }
  return classProblem;
}

/** Backends whose Service is missing, has no ready endpoints, or whose pods a policy hides from the controller. */
function backendFindings(
  ctx: AnalyzerContext,
  scene: IngressScene,
  logs: ControllerLogs,
  findings: FindingInput[],
): boolean {
  const { ing, namespace, state, emit } = scene;
  let backendProblem = false;
  for (const b of backends(ing)) {
    const svc = findService(ctx, b.service, namespace);
    const backendLine = `backend ${b.path} → Service ${b.service}:${b.port}`;
    if (!svc) {
      if (!canSee(ctx, 'services')) continue;
      backendProblem = true;
      emit(
        'INGRESS_BACKEND_SERVICE_MISSING',
        'high',
        `Ingress ${ing.metadata.name} routes ${b.path} to Service ${b.service}, which does not exist.`,
        [backendLine, `Service ${b.service} not found in ${namespace}`, state],
        0.93,
        [ref('Service', b.service, namespace)],
        ['fix-ingress-backend'],
      );
      continue;
    }
    const eps = endpointState(ctx, svc);
    if (eps.known && eps.ready > 0) {
      const blocked = policyDroppingController(ctx, logs, ing, svc, namespace, b);
      if (blocked) findings.push(...blocked);
      continue;
    }
    if (!eps.known) continue;
    backendProblem = true;
    const why = whyNoEndpoints(ctx, svc);
    const controller = controllerEvidence(logs, namespace, b, ctx.now);
    const svcRef = ref('Service', b.service, namespace);
    const symptom = why.code === 'PODS_NOT_READY' && why.causeElsewhere;
    const cause =
      why.code === 'SELECTS_NO_PODS'
        ? `, because its selector matches no pod`
        : why.code === 'SCALED_TO_ZERO'
          ? `, because ${why.owner?.kind} ${why.owner?.name} is scaled to 0 replicas`
          : why.code === 'PODS_NOT_READY'
            ? ', because none of its pods is ready'
            : '';
    emit(
      'INGRESS_BACKEND_NO_ENDPOINTS',
      symptom ? 'medium' : 'high',
      `Ingress ${ing.metadata.name} routes ${b.path} to Service ${b.service}, which has no ready endpoints${cause}: requests get 503.`,
      [backendLine, ...why.evidence.slice(0, controller.length > 0 ? 2 : 3), ...controller.slice(0, 1), state],
      symptom ? 0.7 : 0.85,
      [svcRef, ...why.upstream],
      why.code === 'SELECTS_NO_PODS'
        ? ['fix-service-selector']
        : why.code === 'SCALED_TO_ZERO'
          ? ['scale-workload']
          : ['fix-readiness'],
      why.code === 'SELECTS_NO_PODS' || why.code === 'SCALED_TO_ZERO' ? why.owner : undefined,
    );
  }
  return backendProblem;
}

/** An Ingress past its grace period without an address, when its class does not already explain it. */
function noAddressFinding(ctx: AnalyzerContext, scene: IngressScene, backendProblem: boolean): void {
  const { ing, age, state, emit, eventLine, ignoredLine, cls } = scene;
  emit(
    'INGRESS_NO_ADDRESS',
    backendProblem ? 'low' : 'medium',
    `Ingress ${ing.metadata.name} has had no address for ${formatAge(age)}.`,
    [
      state,
      ...(cls ? [`class ${cls}`] : []),
      ...(eventLine ? [describeEvent(eventLine, ctx.now)] : []),
      ...(ignoredLine ? [ignoredLine] : []),
    ],
    0.5,
    [],
    ['check-ingress-controller-logs'],
  );
}

/**
 * Ready backend pods the controller cannot connect to: its connections to their addresses time out, and the ingress
 * NetworkPolicies that isolate them admit nothing from the controller's pods (their namespace and labels) on the
 * port it dials. The policy is the cause; the Ingress is what fails because of it.
 */
function policyDroppingController(
  ctx: AnalyzerContext,
  logs: ControllerLogs,
  ing: KubeObject,
  svc: KubeObject,
  namespace: string,
  b: Backend,
): FindingInput[] | undefined {
  if (!canSee(ctx, 'networkpolicies')) return undefined;
  const selected = selectedPods(ctx, svc);
  const ready = selected.filter(isPodReady);
  const podAddresses = new Set(selected.flatMap((p) => (p.status?.podIP ? [String(p.status.podIP)] : [])));
  // The controller's access log names the upstream (namespace-service-port) and the addresses it tried for it: a
  // timeout to one of those is a timeout to this backend, even from pods replaced since (a restart changes the
  // addresses, not a policy's verdict on the pods that replaced them).
  const access = logs.access.get(nginxUpstreamName(namespace, b.service, b.port)) ?? [];
  const tried = new Set(
    access
      .filter((a) => a.entry.status === 504)
      .flatMap((a) => a.entry.upstreamAddr.split(/,\s*/))
      .map((addr) => addr.replace(/:\d+$/, '').replace(/^\[|\]$/g, '')),
  );
  const candidates = [
    ...ready.map((pod) => ({ pod, address: String(pod.status?.podIP ?? '') })),
    ...[...tried].map((address) => ({ pod: ready.find((p) => p.status?.podIP === address), address })),
  ];
  for (const { pod: matched, address } of candidates) {
    const timeouts = logs.connectTimeouts.get(address) ?? [];
    const last = timeouts[timeouts.length - 1];
    const pod = matched ?? ready[0];
    if (!last || !pod) continue;
    const verdict = ingressVerdict(ctx, pod, last.pod, last.entry.port);
    if (verdict.allowed) continue;
    const ranked = blameOrder(verdict.policies);
    const policy = ranked[0] as KubeObject;
    const policyRef = ref('NetworkPolicy', policy.metadata.name, policy.metadata.namespace ?? namespace);
    const ingRef = ref('Ingress', ing.metadata.name, namespace);
    const controllerNs = last.pod.metadata.namespace ?? '';
    const workload = ownerOf(ctx, pod);
    const all = [...logs.connectTimeouts.values()]
      .flat()
      .filter((t) => tried.has(t.entry.address) || podAddresses.has(t.entry.address));
    const former =
      matched === undefined ? ', addresses its access log gives for that upstream; pods replaced since' : '';
    // nginx's date, pid and connection number fill a third of the line: the time and the complaint are what count.
    const complaint = last.entry.quote.replace(
      /^\d{4}\/\d{2}\/\d{2} (\d{2}:\d{2}:\d{2}) \[error\] \d+#\d+: \*\d+ /,
      '$1 ',
    );
    const timeoutLine = clip(
      scrubText(
        `controller ${last.pod.metadata.name} (${all.length} connection(s) to ${svc.metadata.name}'s pods timed out since ${shortTime(all[0]?.entry.at, ctx.now)}${former}): ${complaint}`,
      ),
    );
    const failed = access.filter((a) => a.entry.status >= 500);
    const lastFailed = failed[failed.length - 1];
    const accessLine = lastFailed
      ? clip(
          scrubText(
            `controller ${lastFailed.pod.metadata.name} (${failed.length}/${access.length} requests answered ${[...new Set(failed.map((f) => f.entry.status))].join('/')}): ${lastFailed.entry.quote}`,
          ),
        )
      : undefined;
    const policyLine = clip(describePolicy(policy));
    const labels = selectableLabels(last.pod);
    const endpoints = `Service ${svc.metadata.name} has ${endpointState(ctx, svc).ready} ready endpoint(s); pod ${pod.metadata.name} is Ready`;
    return [
      {
        code: 'NETWORK_POLICY_BLOCKS',
        analyzer: NAME,
        domain: 'networking',
        severity: 'high',
        resource: policyRef,
        message: `NetworkPolicy ${policy.metadata.name} in ${policyRef.namespace} admits nothing from the ingress controller's namespace ${controllerNs}, so the controller's connections to Service ${svc.metadata.name}'s ready pods time out and Ingress ${ing.metadata.name} answers 504.`,
        evidence: [policyLine, timeoutLine, ...(accessLine ? [accessLine] : []), endpoints],
        confidence: 0.88,
        related: [ingRef, ref('Service', svc.metadata.name, namespace), ...(workload ? [workload] : [])],
        remediation: ['fix-network-policy'],
        change: `let NetworkPolicy ${policy.metadata.name} admit the ingress controller's pods (namespace ${controllerNs}, labels ${labels}) on port ${last.entry.port}`,
        ...(ranked.length > 1
          ? {
              alternatives: ranked.slice(1, 3).map((p) => ({
                resource: ref('NetworkPolicy', p.metadata.name, p.metadata.namespace ?? namespace),
                change: `add an ingress rule for namespace ${controllerNs} to NetworkPolicy ${p.metadata.name}`,
              })),
            }
          : {}),
      },
      {
        code: 'INGRESS_UPSTREAM_TIMEOUT',
        analyzer: NAME,
        domain: 'networking',
        severity: 'medium',
        resource: ingRef,
        message: `Ingress ${ing.metadata.name}'s controller cannot connect to Service ${svc.metadata.name}'s ready pods: requests time out with 504.`,
        evidence: [
          `backend ${b.path} → Service ${b.service}:${b.port}`,
          timeoutLine,
          ...(accessLine ? [accessLine] : []),
        ],
        confidence: 0.8,
        related: [policyRef],
        remediation: ['fix-network-policy'],
      },
    ];
  }
  return undefined;
}

interface Unserved {
  message: string;
  evidence: string[];
  confidence: number;
  owner?: ResourceRef;
  change?: string;
  alternatives?: Array<{ resource: ResourceRef; change: string }>;
}

/**
 * Whether nothing serves an Ingress's class. A running controller pod for the class settles it the other way. An
 * address on another Ingress of the class proves nothing on its own (status outlives the controller that wrote
 * it), so it only keeps quiet a verdict resting on absence alone, when no controller of any kind was seen.
 */
function classWithoutController(
  ctx: AnalyzerContext,
  ing: KubeObject,
  cls: string,
  controller: string,
  state: string,
  ignoredLine: string | undefined,
): Unserved | undefined {
  const mismatched = mismatchedControllers(ctx, cls, controller);
  const pods = controllerPods(ctx, cls, controller).filter((p) => !mismatched.includes(p));
  const running = pods.filter((p) => p.status?.phase === 'Running' && isPodReady(p));
  if (running.length > 0) return undefined;
  const meant = mismatched[0];
  if (meant) {
    const owner = ownerOf(ctx, meant) ?? podRef(meant);
    const own = ((meant.spec?.containers ?? []) as ContainerSpec[]).map(nginxControllerClass).find((c) => c) ?? '';
    const where = `${owner.kind} ${owner.namespace ? `${owner.namespace}/` : ''}${owner.name}`;
    return {
      message: `IngressClass ${cls} names controller ${controller}, but ${where}, which runs with --ingress-class=${cls}, answers to --controller-class=${own}: it ignores IngressClass ${cls}, so Ingress ${ing.metadata.name} never gets an address.`,
      evidence: [
        state,
        `IngressClass ${cls} spec.controller=${controller}; ${where} (pods ${nameList(mismatched.map((p) => p.metadata.name))}) runs with --controller-class=${own} --ingress-class=${cls}`,
        ...(ignoredLine ? [ignoredLine] : []),
      ],
      confidence: 0.9,
      owner,
      change: `run ${where} with --controller-class=${controller} (IngressClass spec.controller cannot be changed)`,
      alternatives: [
        {
          resource: ref('IngressClass', cls),
          change: `recreate IngressClass ${cls} with spec.controller ${own}`,
        },
      ],
    };
  }
  const workloads = controllerWorkloads(ctx, cls, controller);
  const idle = workloads.filter(runsNothing);
  const siblings = ctx.objects('ingresses').filter((o) => o !== ing && className(o) === cls && hasAddress(o));
  const otherControllers = ctx.objects('pods').filter(isNginxController).length;
  if (idle.length === 0 && pods.length === 0 && siblings.length > 0 && otherControllers === 0) return undefined;
  const classLine = `IngressClass ${cls} spec.controller=${controller}`;
  const stale = siblings[0]
    ? `Ingress ${siblings[0].metadata.namespace}/${siblings[0].metadata.name} of class ${cls} still shows address ${addressOf(siblings[0])}, written before its controller stopped`
    : `0 Ingresses of class ${cls} have an address`;
  const workload = idle[0];
  if (workload) {
    const where = `${workload.metadata.namespace}/${workload.metadata.name}`;
    const how = managedBy(workload);
    const event = scaledToZeroEvent(ctx, workload);
    return {
      message: `IngressClass ${cls} has no running controller: ${workload.kind} ${where}, which serves ${controller}, is scaled to 0 replicas, so Ingress ${ing.metadata.name} never gets an address.`,
      evidence: [
        `${workload.kind} ${where} runs the controller for ${controller} (--ingress-class=${cls}) and has ${workload.kind === 'DaemonSet' ? 'no scheduled pods' : 'spec.replicas 0'}${how ? `; ${how}` : ''}`,
        state,
        ...(ignoredLine ? [ignoredLine] : []),
        ...(event ? [event] : []),
        stale,
        classLine,
      ],
      confidence: 0.93,
      owner: ref(workload.kind ?? 'Deployment', workload.metadata.name, workload.metadata.namespace),
    };
  }
  // Only the namespace's pods and the cluster's pods labelled as controllers were read: a controller found nowhere
  // among them may run elsewhere, so its absence is not concluded; what was read is said.
  // ingress-nginx labels its controller pods app.kubernetes.io/component=controller, which the sweep reads
  // cluster-wide; a read of every namespace's pods (the other namespaces' pods carry other labels) also sees it.
  const wide = ctx
    .objects('pods')
    .some(
      (p) =>
        p.metadata.namespace !== ctx.namespace &&
        p.metadata.labels?.['app.kubernetes.io/component'] !== 'controller' &&
        p.metadata.labels?.['k8s-app'] !== 'kube-dns',
    );
  const seen = pods.length > 0 || wide || /ingress-nginx/.test(controller);
  return {
    message: seen
      ? `IngressClass ${cls} names controller ${controller}, but no controller pod for it is running, so Ingress ${ing.metadata.name} never gets an address.`
      : `IngressClass ${cls} names controller ${controller}, and no pod read serves it, so Ingress ${ing.metadata.name} has no address; pods outside this namespace that are not labelled as controllers were not read.`,
    evidence: [
      state,
      classLine,
      pods.length > 0
        ? `controller pods not running: ${pods.map((p) => `${p.metadata.namespace}/${p.metadata.name} ${p.status?.phase}`).join(', ')}`
        : `no controller pod for ${controller} among ${ctx.objects('pods').length} pods read${otherControllers > 0 ? ` (${otherControllers} ingress-nginx pod(s) serve other classes)` : ''}`,
      ...(ignoredLine ? [ignoredLine] : []),
      stale,
    ],
    confidence: seen ? 0.88 : 0.6,
  };
}
