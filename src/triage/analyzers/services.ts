import type { KubeObject } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyzer.js';
import type { FindingInput, ResourceRef } from '../findings.js';
import { canSee, describeEvent, findEvents } from './events.js';
import { isPodReady, namespacePods } from './pods.js';
import { formatMap, matchesMap } from './selectors.js';

/** Service → endpoints → pods, the chain every networking analyzer walks. */

export function findService(ctx: AnalyzerContext, name: string, namespace = ctx.namespace): KubeObject | undefined {
  return ctx
    .objects('services')
    .find((s) => s.metadata.name === name && (s.metadata.namespace ?? namespace) === namespace);
}

export interface EndpointState {
  /** Whether Endpoints or EndpointSlices were available to judge. */
  known: boolean;
  ready: number;
  notReady: number;
  /** Ports as the endpoints publish them: `name:port`. */
  ports: { name?: string; port: number }[];
}

export function endpointState(ctx: AnalyzerContext, service: KubeObject): EndpointState {
  const name = service.metadata.name;
  const namespace = service.metadata.namespace ?? ctx.namespace;
  const slices = ctx
    .objects('endpointslices')
    .filter((s) => s.metadata.namespace === namespace && s.metadata.labels?.['kubernetes.io/service-name'] === name);
  if (slices.length > 0) {
    let ready = 0;
    let notReady = 0;
    const ports: EndpointState['ports'] = [];
    for (const slice of slices) {
      for (const ep of (slice['endpoints'] as { conditions?: { ready?: boolean } }[] | undefined) ?? []) {
        if (ep.conditions?.ready === false) notReady++;
        else ready++;
      }
      for (const p of (slice['ports'] as { name?: string; port?: number }[] | undefined) ?? []) {
        if (typeof p.port === 'number') ports.push({ name: p.name || undefined, port: p.port });
      }
    }
    return { known: true, ready, notReady, ports };
  }
  const ep = ctx.objects('endpoints').find((e) => e.metadata.name === name && e.metadata.namespace === namespace);
  if (ep !== undefined) {
    let ready = 0;
    let notReady = 0;
    const ports: EndpointState['ports'] = [];
    for (const subset of (ep['subsets'] as Record<string, unknown[]>[] | undefined) ?? []) {
      ready += (subset['addresses'] ?? []).length;
      notReady += (subset['notReadyAddresses'] ?? []).length;
      for (const p of (subset['ports'] ?? []) as { name?: string; port?: number }[]) {
        if (typeof p.port === 'number') ports.push({ name: p.name || undefined, port: p.port });
      }
    }
    return { known: true, ready, notReady, ports };
  }
  const known = canSee(ctx, 'endpoints') && (ctx.objects('endpoints').length > 0 || canSee(ctx, 'endpointslices'));
  return { known, ready: 0, notReady: 0, ports: [] };
}

export function selectedPods(ctx: AnalyzerContext, service: KubeObject): KubeObject[] {
  const selector = service.spec?.selector as Record<string, string> | undefined;
  if (!selector || Object.keys(selector).length === 0) return [];
  return namespacePods(ctx).filter(
    (p) => matchesMap(selector, p.metadata.labels) && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded',
  );
}

/** The pod whose labels come closest to the selector, to show what the selector probably meant. */
export function nearestPodLabels(ctx: AnalyzerContext, selector: Record<string, string>): string | undefined {
  let best: { pod: KubeObject; score: number } | undefined;
  for (const pod of namespacePods(ctx)) {
    const labels = pod.metadata.labels ?? {};
    const score = Object.entries(selector).reduce(
      (n, [k, v]) => n + (labels[k] === v ? 2 : labels[k] !== undefined ? 1 : 0),
      0,
    );
    if (score > 0 && (best === undefined || score > best.score)) best = { pod, score };
  }
  if (best === undefined) return undefined;
  const labels = best.pod.metadata.labels ?? {};
  const shown = Object.fromEntries(
    Object.entries(labels).filter(([k]) => k in selector || !/pod-template-hash|controller-revision-hash/.test(k)),
  );
  return `closest pod ${best.pod.metadata.name} has labels ${formatMap(shown)}`;
}

export interface WhyNoEndpoints {
  code: 'SELECTS_NO_PODS' | 'PODS_NOT_READY' | 'NO_SELECTOR' | 'UNKNOWN';
  evidence: string[];
}

/** Explain a Service without ready endpoints: nothing selected, or selected but not ready (with probe events). */
export function whyNoEndpoints(ctx: AnalyzerContext, service: KubeObject): WhyNoEndpoints {
  const selector = service.spec?.selector as Record<string, string> | undefined;
  if (!selector || Object.keys(selector).length === 0) {
    return {
      code: 'NO_SELECTOR',
      evidence: [`Service ${service.metadata.name} has no selector (endpoints are managed by hand)`],
    };
  }
  const pods = selectedPods(ctx, service);
  const selectorLine = `Service ${service.metadata.name} selector ${formatMap(selector)}`;
  if (!canSee(ctx, 'pods')) return { code: 'UNKNOWN', evidence: [selectorLine, 'pods could not be read'] };
  if (pods.length === 0) {
    const near = nearestPodLabels(ctx, selector);
    return {
      code: 'SELECTS_NO_PODS',
      evidence: [selectorLine, `0 pods in ${ctx.namespace} match the selector`, ...(near ? [near] : [])],
    };
  }
  const notReady = pods.filter((p) => !isPodReady(p));
  if (notReady.length === pods.length) {
    const evidence = [selectorLine, `${pods.length} pod(s) match, 0 ready`];
    for (const pod of notReady.slice(0, 3)) {
      const probe = findEvents(ctx, {
        kind: 'Pod',
        name: pod.metadata.name,
        namespace: ctx.namespace,
        reasons: ['Unhealthy'],
      }).find((e) => /Readiness probe failed/i.test(e.message));
      if (probe) {
        evidence.push(describeEvent(probe, ctx.now));
        break;
      }
    }
    const waiting = notReady
      .flatMap((p) => (Array.isArray(p.status?.containerStatuses) ? p.status.containerStatuses : []))
      .map((s: { name?: string; state?: { waiting?: { reason?: string } } }) => s.state?.waiting?.reason)
      .filter(Boolean);
    if (waiting.length > 0) evidence.push(`containers waiting: ${[...new Set(waiting)].join(', ')}`);
    return { code: 'PODS_NOT_READY', evidence };
  }
  return {
    code: 'UNKNOWN',
    evidence: [selectorLine, `${pods.length - notReady.length}/${pods.length} pods ready, endpoints not yet updated`],
  };
}

/** Service ports as `80→8080/TCP (http)`. */
export function servicePortsLine(service: KubeObject): string {
  const ports: { name?: string; port?: number; targetPort?: number | string; protocol?: string }[] = Array.isArray(
    service.spec?.ports,
  )
    ? service.spec.ports
    : [];
  return ports
    .map((p) => `${p.port}→${p.targetPort ?? p.port}/${p.protocol ?? 'TCP'}${p.name ? ` (${p.name})` : ''}`)
    .join(', ');
}

export type NetworkingEmit = (
  code: string,
  severity: FindingInput['severity'],
  message: string,
  evidence: string[],
  confidence: number,
  related: ResourceRef[],
  remediation: string[],
) => void;

/** Appends networking findings about one resource to `findings`, so each check names only what differs. */
export function networkingEmitter(findings: FindingInput[], analyzer: string, resource: ResourceRef): NetworkingEmit {
  return (code, severity, message, evidence, confidence, related, remediation) => {
    findings.push({
      code,
      analyzer,
      domain: 'networking',
      severity,
      resource,
      message,
      evidence,
      confidence,
      related,
      remediation,
    });
  };
}
