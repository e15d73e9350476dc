import type { KubeObject } from '../../cluster/types.js';
import type { FindingInput } from '../envelope/findings.js';
import { canSee, clip } from '../kube/events.js';
import { ownerOf } from '../kube/pod-owners.js';
import { inNamespace, isPodReady, ref } from '../kube/pods.js';
import { blameOrder, describePolicy, ingressVerdict, selectableLabels } from '../kube/policy-verdicts.js';
import {
  clientSide,
  describeTermination,
  type HaproxyAccess,
  parseTimeSpec,
  podLogLines,
  ROUTER_DEFAULT_SERVER_TIMEOUT_MS,
  type RouterView,
  routerView,
  serverPod,
  shortTime,
} from '../kube/proxy-logs.js';
import {
  endpointState,
  findService,
  type NetworkingEmit,
  networkingEmitter,
  selectedPods,
  servicePortsLine,
  whyNoEndpoints,
} from '../kube/services.js';
import { scrubText } from '../scrub.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

const NAME = 'route';

const TIMEOUT_ANNOTATION = 'haproxy.router.openshift.io/timeout';

/**
 * The OpenShift router resolves `spec.port.targetPort` against the endpoints: a string must name a Service port,
 * a number must equal the port the pods receive on (the Service's targetPort, resolved through the pods if named).
 */
function targetPortMatches(ctx: AnalyzerContext, route: KubeObject, svc: KubeObject): { ok: boolean; detail: string } {
  const target = route.spec?.port?.targetPort;
  if (target === undefined || target === null || target === '') return { ok: true, detail: '' };
  const ports: { name?: string; port?: number; targetPort?: number | string }[] = Array.isArray(svc.spec?.ports)
    ? svc.spec.ports
    : [];
  const pods = selectedPods(ctx, svc);
  const resolve = (tp: number | string | undefined, port: number | undefined): number[] => {
    if (typeof tp === 'number') return [tp];
    if (tp === undefined) return port === undefined ? [] : [port];
    return pods.flatMap((p) =>
      (Array.isArray(p.spec?.containers) ? p.spec.containers : []).flatMap(
        (c: { ports?: { name?: string; containerPort?: number }[] }) =>
          (c.ports ?? []).filter((cp) => cp.name === tp).map((cp) => cp.containerPort ?? 0),
      ),
    );
  };
  const asNumber = typeof target === 'number' ? target : /^\d+$/.test(String(target)) ? Number(target) : undefined;
  const ok =
    asNumber !== undefined
      ? ports.some(
          (p) =>
            resolve(p.targetPort, p.port).includes(asNumber) || (p.targetPort === undefined && p.port === asNumber),
        ) ||
        // A named targetPort we could not resolve (no pods) is not evidence of a mismatch.
        ports.some((p) => typeof p.targetPort === 'string' && resolve(p.targetPort, p.port).length === 0)
      : ports.some((p) => p.name === target);
  const eps = endpointState(ctx, svc);
  const epPorts = eps.ports.map((p) => `${p.name ?? ''}:${p.port}`).join(', ');
  return {
    ok,
    detail: `Route targetPort ${JSON.stringify(target)}; Service ${svc.metadata.name} ports ${servicePortsLine(svc)}${epPorts ? `; endpoint ports ${epPorts}` : ''}`,
  };
}

function admittedLine(route: KubeObject): string | undefined {
  const ingress: {
    routerName?: string;
    conditions?: { type?: string; status?: string; reason?: string; message?: string }[];
  }[] = route.status?.ingress ?? [];
  const bad = ingress.flatMap((i) =>
    (i.conditions ?? []).filter((c) => c.type === 'Admitted' && c.status !== 'True').map((c) => ({ i, c })),
  );
  if (bad[0])
    return `router ${bad[0].i.routerName ?? '?'} did not admit the route: ${bad[0].c.reason ?? ''} ${bad[0].c.message ?? ''}`.trim();
  return undefined;
}

function routerNameOf(route: KubeObject): string | undefined {
  const ingress: { routerName?: string }[] = Array.isArray(route.status?.ingress) ? route.status.ingress : [];
  return ingress[0]?.routerName;
}

/** Server-side 5xx answers: what the backend (or its absence) caused, not clients giving up. */
function failures(view: RouterView): HaproxyAccess[] {
  return view.access.filter((a) => a.status >= 500 && !clientSide(a.termination));
}

/** `router P (31/43 requests since 14:22:47Z: 503 SC--): [the last such line]`: the count first, then the line. */
function trafficLine(ctx: AnalyzerContext, view: RouterView, subset: HaproxyAccess[]): string {
  const first = subset[0];
  const last = subset[subset.length - 1] as HaproxyAccess;
  const statuses = [...new Set(subset.map((a) => a.status))].join('/');
  const states = [...new Set(subset.map((a) => a.termination))].join(', ');
  return clip(
    scrubText(
      `router ${view.router.metadata.name} (${subset.length}/${view.access.length} requests since ${shortTime(first?.at, ctx.now)}: ${statuses} ${states}): ${last.quote}`,
    ),
  );
}

/** Lines a backend pod wrote about TLS handshakes the router (by its pod IP) failed: the other side's story. */
function backendTlsComplaint(ctx: AnalyzerContext, pods: KubeObject[], router: KubeObject): string | undefined {
  const routerIps = new Set([router.status?.podIP, router.status?.hostIP].filter(Boolean));
  for (const pod of pods) {
    for (const line of podLogLines(ctx, pod).reverse()) {
      // Go's net/http: "http: TLS handshake error from 10.131.0.23:64564: remote error: tls: unknown certificate authority"
      const m = /TLS handshake error from \[?([0-9a-f.:]+?)\]?:\d+: (.+)$/i.exec(line);
      if (m && routerIps.has(m[1])) {
        return clip(scrubText(`log ${pod.metadata.name}: ${line.trim()} (from router ${router.metadata.name})`));
      }
    }
  }
  return undefined;
}

/** What keeps one backend Service of a Route from serving: missing, wrong targetPort, no ready endpoints. */
function backendFindings(
  ctx: AnalyzerContext,
  route: KubeObject,
  backend: { kind?: string; name?: string; weight?: number },
  seen: { namespace: string; host: string; admitted: string | undefined; noServerLine: string | undefined },
  emit: NetworkingEmit,
): boolean {
  const { namespace, host, admitted, noServerLine } = seen;
  /** Whether what was found explains the router having no server. */
  let explained = false;
  if ((backend.kind ?? 'Service') !== 'Service' || !backend.name) return explained;
  if (backend.weight === 0) return explained;
  const svcRef = ref('Service', backend.name, namespace);
  const routeLine = `Route ${route.metadata.name} (${host}) → Service ${backend.name}${route.spec?.port?.targetPort !== undefined ? ` targetPort ${route.spec.port.targetPort}` : ''}`;
  const svc = findService(ctx, backend.name, namespace);
  if (!svc) {
    if (!canSee(ctx, 'services')) return explained;
    explained = true;
    emit(
      'ROUTE_SERVICE_MISSING',
      'high',
      `Route ${route.metadata.name} points at Service ${backend.name}, which does not exist: the router answers 503.`,
      [routeLine, `Service ${backend.name} not found in ${namespace}`, ...(admitted ? [admitted] : [])],
      0.95,
      [svcRef],
      ['fix-route-backend'],
    );
    return explained;
  }
  const port = targetPortMatches(ctx, route, svc);
  if (!port.ok) {
    explained = true;
    emit(
      'ROUTE_TARGET_PORT_MISMATCH',
      'high',
      `Route ${route.metadata.name} targets port ${JSON.stringify(route.spec?.port?.targetPort)}, which Service ${backend.name} does not expose: the router has no endpoint to send traffic to.`,
      [routeLine, port.detail, ...(noServerLine ? [noServerLine] : [])],
      0.9,
      [svcRef],
      ['fix-route-target-port'],
    );
  }
  const eps = endpointState(ctx, svc);
  if (eps.ready > 0) return explained;
  const why = whyNoEndpoints(ctx, svc);
  const router = noServerLine ? [noServerLine] : [];
  if (why.code === 'SCALED_TO_ZERO' && why.owner) {
    explained = true;
    emit(
      'ROUTE_BACKEND_SCALED_TO_ZERO',
      'high',
      `Route ${route.metadata.name} serves the router's 503 page: ${why.owner.kind} ${why.owner.name}, the only workload behind Service ${backend.name}, is scaled to 0 replicas.`,
      [routeLine, ...why.evidence, ...router],
      0.92,
      [svcRef],
      ['scale-workload'],
      why.owner,
    );
  } else if (why.code === 'SELECTS_NO_PODS') {
    explained = true;
    emit(
      'ROUTE_SERVICE_SELECTS_NO_PODS',
      'high',
      `Route ${route.metadata.name} sends traffic to Service ${backend.name}, whose selector matches no pod: every request gets a 503.`,
      [routeLine, ...why.evidence.slice(0, 3), ...router],
      0.92,
      [svcRef],
      ['fix-service-selector'],
      why.owner,
    );
  } else if (why.code === 'PODS_NOT_READY') {
    explained = true;
    // When the pods' own state names the cause (crash loop, dead node), the Route only shows the symptom.
    emit(
      'ROUTE_PODS_NOT_READY',
      why.causeElsewhere ? 'medium' : 'high',
      `Route ${route.metadata.name} → Service ${backend.name}: the selected pods exist but none is ready, so the router has no endpoint.`,
      [routeLine, ...why.evidence.slice(0, 3), ...router],
      why.causeElsewhere ? 0.7 : 0.88,
      [svcRef, ...why.upstream],
      ['fix-readiness', 'inspect-previous-logs'],
    );
  } else if (eps.known && why.code !== 'UNKNOWN') {
    explained = true;
    emit(
      'ROUTE_SERVICE_SELECTS_NO_PODS',
      'medium',
      `Route ${route.metadata.name} → Service ${backend.name} has no endpoints.`,
      [routeLine, ...why.evidence, ...router],
      0.6,
      [svcRef],
      ['fix-service-selector'],
    );
  }
  return explained;
}

export const routeAnalyzer: Analyzer = {
  name: NAME,
  domain: 'networking',
  description:
    "OpenShift Routes whose Service is missing, selects no pods, is scaled to zero or has no ready pods, whose targetPort is wrong, and what the router's own log says: no server, TLS to the backend failing, timeouts.",
  needs: ['routes', 'services', 'endpoints', 'pods', 'events'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    if (!canSee(ctx, 'routes')) return [];
    const findings: FindingInput[] = [];
    for (const route of inNamespace(ctx, ctx.objects('routes'))) {
      const namespace = route.metadata.namespace ?? ctx.namespace;
      const resource = ref('Route', route.metadata.name, namespace);
      const host = route.spec?.host ? `host ${route.spec.host}` : 'no host';
      const backends: { kind?: string; name?: string; weight?: number }[] = [
        route.spec?.to,
        ...(route.spec?.alternateBackends ?? []),
      ].filter(Boolean);
      const emit = networkingEmitter(findings, NAME, resource);
      const admitted = admittedLine(route);
      const view = routerView(ctx, namespace, route.metadata.name, routerNameOf(route));
      const failed = view ? failures(view) : [];
      const noServer = failed.filter((a) => a.server === undefined);
      const noServerLine = view && noServer.length > 0 ? trafficLine(ctx, view, noServer) : undefined;
      let explainedNoServer = false;
      for (const backend of backends) {
        if (backendFindings(ctx, route, backend, { namespace, host, admitted, noServerLine }, emit))
          explainedNoServer = true;
      }
      const blocked = view ? policyDroppingRouter(ctx, route, view, failed) : undefined;
      if (blocked && view) {
        findings.push(blocked);
        // The Route is what fails because of the policy: its own finding points at it.
        emit(
          'ROUTE_BACKEND_ERRORS',
          'medium',
          `The router cannot connect to Route ${route.metadata.name}'s ready pods: requests end in 503.`,
          [...(failed.length > 0 ? [trafficLine(ctx, view, failed)] : []), ...(noServerLine ? [noServerLine] : [])],
          0.8,
          [blocked.resource],
          ['fix-network-policy'],
        );
      } else if (view) routerFindings(ctx, route, view, failed, noServerLine, explainedNoServer, emit);
    }
    return findings;
  },
};

/** The router cannot complete TLS to the Route's pods: the CA it trusts did not sign their serving certificate. */
function backendTlsFailed(
  ctx: AnalyzerContext,
  route: KubeObject,
  view: RouterView,
  tls: RouterView['down'],
  svc: KubeObject | undefined,
  svcRef: ReturnType<typeof ref>[],
  noServerLine: string | undefined,
  emit: NetworkingEmit,
): void {
  const name = route.metadata.name;
  const termination: string = route.spec?.tls?.termination ?? 'none';
  const down = tls[tls.length - 1] as (typeof tls)[number];
  const pinned = typeof route.spec?.tls?.destinationCACertificate === 'string';
  const backendPods = svc ? selectedPods(ctx, svc) : [];
  const complaint = backendTlsComplaint(ctx, backendPods, view.router);
  const trust = pinned
    ? "the CA in the Route's destinationCACertificate did not sign the pods' serving certificate"
    : "the pods' serving certificate is not signed by the service CA the router trusts";
  emit(
    'ROUTE_BACKEND_TLS_FAILED',
    'high',
    `The router cannot complete TLS to Route ${name}'s pods ("${down.info ?? down.reason}"), so it has no server and answers 503: ${trust}.`,
    [
      clip(scrubText(`router ${view.router.metadata.name}: ${down.quote}`)),
      ...(noServerLine ? [noServerLine] : []),
      `Route ${name}: tls.termination ${termination}, destinationCACertificate ${pinned ? 'set (the router trusts only that CA for the backend)' : 'not set'}`,
      ...(complaint ? [complaint] : []),
      `servers down: ${tls.map((d) => serverPod(d.server) ?? d.server).join(', ')}`,
    ],
    complaint ? 0.92 : 0.85,
    svcRef,
    ['fix-route-destination-ca'],
  );
}

/** Requests the router cut off at the Route's timeout (or its default); whether any were. */
function backendTimeouts(
  ctx: AnalyzerContext,
  route: KubeObject,
  view: RouterView,
  failed: HaproxyAccess[],
  timeouts: HaproxyAccess[],
  svcRef: ReturnType<typeof ref>[],
  emit: NetworkingEmit,
): boolean {
  const name = route.metadata.name;
  const annotation: string | undefined = route.metadata.annotations?.[TIMEOUT_ANNOTATION];
  const configured = parseTimeSpec(annotation);
  const limit = configured ?? ROUTER_DEFAULT_SERVER_TIMEOUT_MS;
  const atLimit = timeouts.filter((a) => Math.abs(a.timers.total - limit) <= Math.max(1500, limit * 0.05));
  if (atLimit.length > 0) {
    const requests = [
      ...new Set(atLimit.map((a) => (a.request ?? '').replace(/\?.*?(?= HTTP\/)/, '').replace(/ HTTP\/[\d.]+$/, ''))),
    ]
      .filter(Boolean)
      .slice(0, 3);
    const setting = configured
      ? `${TIMEOUT_ANNOTATION}: ${annotation} on the Route`
      : `the router's default server timeout (${limit / 1000}s; the Route sets no ${TIMEOUT_ANNOTATION})`;
    emit(
      'ROUTE_BACKEND_TIMEOUT',
      atLimit.length >= 3 ? 'high' : 'medium',
      `The router cut ${atLimit.length} request(s) to Route ${name} off after ${Math.round(limit / 1000)}s with ${[...new Set(atLimit.map((a) => a.status))].join('/')} (${[...new Set(atLimit.map((a) => a.termination))].join(', ')}: ${describeTermination(atLimit[0]?.termination ?? 'sH--', false)}): the backend needs longer than ${setting}.`,
      [
        trafficLine(ctx, view, atLimit),
        `Route ${name}: ${configured ? `${TIMEOUT_ANNOTATION}=${annotation}` : `no ${TIMEOUT_ANNOTATION} (router default ${limit / 1000}s)`}`,
        ...(requests.length > 0 ? [`requests cut off: ${requests.join(', ')}`] : []),
        `${view.access.length - failed.length}/${view.access.length} other requests to ${view.backend} succeeded`,
      ],
      0.85,
      svcRef,
      ['raise-route-timeout'],
    );
    return true;
  }
  return false;
}

/** `pod:NAME:SERVICE:PORTNAME:10.129.2.144:8000`, as the router names a server: its address and port. */
function serverAddress(server: string | undefined): { ip: string; port: number } | undefined {
  const m = /:(\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:]+\]):(\d+)$/i.exec(server ?? '');
  return m ? { ip: (m[1] as string).replace(/^\[|\]$/g, ''), port: Number(m[2]) } : undefined;
}

/**
 * Ready pods the router cannot connect to: its connections time out (`sC--`) or its health checks do (`Layer4
 * timeout`), and the ingress NetworkPolicies that isolate the pods admit nothing from the router's pod (its namespace
 * and labels, both of one peer) on the port it dials. The newest policy with rules is the cause, the Route what
 * fails. A router on the host network is not judged: whether a policy sees its traffic as the router's namespace
 * depends on the network plugin.
 */
function policyDroppingRouter(
  ctx: AnalyzerContext,
  route: KubeObject,
  view: RouterView,
  failed: HaproxyAccess[],
): FindingInput | undefined {
  if (!canSee(ctx, 'networkpolicies') || view.router.spec?.hostNetwork === true) return undefined;
  const namespace = route.metadata.namespace ?? ctx.namespace;
  const svcName: string | undefined = route.spec?.to?.name;
  const svc = svcName ? findService(ctx, svcName, namespace) : undefined;
  if (!svc) return undefined;
  const ready = selectedPods(ctx, svc).filter(isPodReady);
  if (ready.length === 0) return undefined;
  const connectTimeouts = failed.filter((a) => a.termination.startsWith('sC'));
  const checkTimeouts = view.down.filter((d) => /^Layer4 timeout/i.test(d.reason));
  const last = connectTimeouts[connectTimeouts.length - 1];
  const down = checkTimeouts[checkTimeouts.length - 1];
  const server = serverAddress(last?.server ?? down?.server);
  if (server === undefined) return undefined;
  // The server names the pod by address; one replaced since is judged by the Service's ready pods now.
  const pod = ready.find((p) => p.status?.podIP === server.ip) ?? (ready[0] as KubeObject);
  const verdict = ingressVerdict(ctx, pod, view.router, server.port);
  if (verdict.allowed) return undefined;
  const ranked = blameOrder(verdict.policies);
  const policy = ranked[0] as KubeObject;
  const policyRef = ref('NetworkPolicy', policy.metadata.name, policy.metadata.namespace ?? namespace);
  const routerNs = view.router.metadata.namespace ?? '';
  const labels = selectableLabels(view.router);
  const workload = ownerOf(ctx, pod);
  const evidence = [
    clip(describePolicy(policy)),
    ...(down ? [clip(scrubText(`router ${view.router.metadata.name}: ${down.quote}`))] : []),
    ...(connectTimeouts.length > 0 ? [trafficLine(ctx, view, connectTimeouts)] : []),
    `Service ${svc.metadata.name} has ${endpointState(ctx, svc).ready} ready endpoint(s); pod ${pod.metadata.name} is Ready`,
    `router pod ${view.router.metadata.name} in ${routerNs}: labels ${labels}`,
  ];
  return {
    code: 'NETWORK_POLICY_BLOCKS',
    analyzer: NAME,
    domain: 'networking',
    severity: 'high',
    resource: policyRef,
    message: `NetworkPolicy ${policy.metadata.name} in ${policyRef.namespace} admits nothing from the router's pods in ${routerNs}, so the router's connections to Service ${svc.metadata.name}'s ready pods time out and Route ${route.metadata.name} answers 503.`,
    evidence: evidence.slice(0, 5),
    confidence: 0.88,
    related: [
      ref('Route', route.metadata.name, namespace),
      ref('Service', svc.metadata.name, namespace),
      ...(workload ? [workload] : []),
    ],
    remediation: ['fix-network-policy'],
    change: `let NetworkPolicy ${policy.metadata.name} admit the router's pods (namespace ${routerNs}, labels ${labels}) on port ${server.port}`,
    ...(ranked.length > 1
      ? {
          alternatives: ranked.slice(1, 3).map((p) => ({
            resource: ref('NetworkPolicy', p.metadata.name, p.metadata.namespace ?? namespace),
            change: `add an ingress rule for namespace ${routerNs} to NetworkPolicy ${p.metadata.name}`,
          })),
        }
      : {}),
  };
}

/** What only the router's log shows: TLS to the backend failing, requests cut off at the timeout, no server. */
function routerFindings(
  ctx: AnalyzerContext,
  route: KubeObject,
  view: RouterView,
  failed: HaproxyAccess[],
  noServerLine: string | undefined,
  explainedNoServer: boolean,
  emit: NetworkingEmit,
): void {
  const namespace = route.metadata.namespace ?? ctx.namespace;
  const name = route.metadata.name;
  const svcName: string | undefined = route.spec?.to?.name;
  const svc = svcName ? findService(ctx, svcName, namespace) : undefined;
  const svcRef = svcName ? [ref('Service', svcName, namespace)] : [];

  const tls = view.down.filter((d) => /Layer6/i.test(d.reason) || /SSL|TLS|certificate/i.test(d.info ?? ''));
  if (tls.length > 0) {
    backendTlsFailed(ctx, route, view, tls, svc, svcRef, noServerLine, emit);
    return;
  }

  const timeouts = failed.filter(
    (a) => a.termination[0] === 's' && (a.termination[1] === 'H' || a.termination[1] === 'D'),
  );
  if (timeouts.length > 0 && backendTimeouts(ctx, route, view, failed, timeouts, svcRef, emit)) return;

  if (noServerLine && !explainedNoServer) {
    const other = view.down[view.down.length - 1];
    emit(
      'ROUTE_NO_SERVER_AVAILABLE',
      'medium',
      `The router answers Route ${name} with 503: it has no server for ${view.backend}${other ? ` (health checks took the servers out: ${other.reason}${other.info ? `, ${other.info}` : ''})` : ''}.`,
      [noServerLine, ...(other ? [clip(scrubText(`router ${view.router.metadata.name}: ${other.quote}`))] : [])],
      0.6,
      svcRef,
      ['fix-readiness'],
    );
    return;
  }

  const errors = failed.filter((a) => a.server !== undefined);
  if (errors.length >= 3) {
    const state = errors[errors.length - 1]?.termination ?? '';
    emit(
      'ROUTE_BACKEND_ERRORS',
      'medium',
      `The router reports ${errors.length} failed request(s) to Route ${name}'s pods: ${describeTermination(state, false) ?? `session state ${state}`}.`,
      [trafficLine(ctx, view, errors)],
      0.6,
      svcRef,
      ['inspect-previous-logs'],
    );
  }
}
