import type { KubeObject } from '../../cluster/types.js';
import type { Analyzer, AnalyzerContext } from '../analyzer.js';
import type { FindingInput } from '../findings.js';
import { canSee } from './events.js';
import { inNamespace, ref } from './pods.js';
import {
  endpointState,
  findService,
  networkingEmitter,
  selectedPods,
  servicePortsLine,
  whyNoEndpoints,
} from './services.js';

const NAME = 'route';

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

export const routeAnalyzer: Analyzer = {
  name: NAME,
  domain: 'networking',
  description:
    'OpenShift Routes whose Service is missing, selects no pods, has no ready pods, or whose targetPort is wrong.',
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
      for (const backend of backends) {
        if ((backend.kind ?? 'Service') !== 'Service' || !backend.name) continue;
        if (backend.weight === 0) continue;
        const svcRef = ref('Service', backend.name, namespace);
        const routeLine = `Route ${route.metadata.name} (${host}) → Service ${backend.name}${route.spec?.port?.targetPort !== undefined ? ` targetPort ${route.spec.port.targetPort}` : ''}`;
        const svc = findService(ctx, backend.name, namespace);
        if (!svc) {
          if (!canSee(ctx, 'services')) continue;
          emit(
            'ROUTE_SERVICE_MISSING',
            'high',
            `Route ${route.metadata.name} points at Service ${backend.name}, which does not exist: the router answers 503.`,
            [routeLine, `Service ${backend.name} not found in ${namespace}`, ...(admitted ? [admitted] : [])],
            0.95,
            [svcRef],
            ['fix-route-backend'],
          );
          continue;
        }
        const port = targetPortMatches(ctx, route, svc);
        if (!port.ok) {
          emit(
            'ROUTE_TARGET_PORT_MISMATCH',
            'high',
            `Route ${route.metadata.name} targets port ${JSON.stringify(route.spec?.port?.targetPort)}, which Service ${backend.name} does not expose: the router has no endpoint to send traffic to.`,
            [routeLine, port.detail],
            0.9,
            [svcRef],
            ['fix-route-target-port'],
          );
        }
        const eps = endpointState(ctx, svc);
        if (eps.ready > 0) continue;
        const why = whyNoEndpoints(ctx, svc);
        if (why.code === 'SELECTS_NO_PODS') {
          emit(
            'ROUTE_SERVICE_SELECTS_NO_PODS',
            'high',
            `Route ${route.metadata.name} sends traffic to Service ${backend.name}, whose selector matches no pod: every request gets a 503.`,
            [routeLine, ...why.evidence],
            0.92,
            [svcRef],
            ['fix-service-selector'],
          );
        } else if (why.code === 'PODS_NOT_READY') {
          emit(
            'ROUTE_PODS_NOT_READY',
            'high',
            `Route ${route.metadata.name} → Service ${backend.name}: the selected pods exist but none is ready, so the router has no endpoint.`,
            [routeLine, ...why.evidence],
            0.88,
            [svcRef],
            ['fix-readiness', 'inspect-previous-logs'],
          );
        } else if (eps.known && why.code !== 'UNKNOWN') {
          emit(
            'ROUTE_SERVICE_SELECTS_NO_PODS',
            'medium',
            `Route ${route.metadata.name} → Service ${backend.name} has no endpoints.`,
            [routeLine, ...why.evidence],
            0.6,
            [svcRef],
            ['fix-service-selector'],
          );
        }
      }
    }
    return findings;
  },
};
