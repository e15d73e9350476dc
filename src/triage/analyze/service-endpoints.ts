import type { FindingInput } from '../envelope/findings.js';
import { canSee, formatAge } from '../kube/events.js';
import { inNamespace, isoAge, ref } from '../kube/pods.js';
import {
  endpointState,
  networkingEmitter,
  servicePortsLine,
  targetPortProblems,
  whyNoEndpoints,
} from '../kube/services.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

const NAME = 'service-endpoints';

export const serviceEndpointsAnalyzer: Analyzer = {
  name: NAME,
  domain: 'networking',
  description:
    'Services with a selector but no ready endpoints and why (nothing selected, scaled to zero, pods not ready), and Service ports that lead to no container port.',
  needs: ['services', 'endpoints', 'pods', 'events'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    if (!canSee(ctx, 'services')) return [];
    const findings: FindingInput[] = [];
    for (const svc of inNamespace(ctx, ctx.objects('services'))) {
      if (svc.spec?.type === 'ExternalName') continue;
      const selector = svc.spec?.selector as Record<string, string> | undefined;
      if (!selector || Object.keys(selector).length === 0) continue;
      const namespace = svc.metadata.namespace ?? ctx.namespace;
      const resource = ref('Service', svc.metadata.name, namespace);
      const emit = networkingEmitter(findings, NAME, resource);
      const age = `ports ${servicePortsLine(svc)}; age ${formatAge(isoAge(ctx.now, svc.metadata.creationTimestamp))}`;

      for (const problem of targetPortProblems(ctx, svc)) {
        // Declared container ports are informational: without a probe succeeding elsewhere it is only a hint.
        emit(
          'SERVICE_TARGET_PORT_MISMATCH',
          problem.corroborated ? 'high' : 'low',
          `Service ${svc.metadata.name} sends port ${problem.port} to targetPort ${JSON.stringify(problem.targetPort)}, which its pods do not listen on${
            typeof problem.targetPort === 'string' ? ' (no container defines that port name)' : ''
          }: connections through the Service are refused.`,
          [...problem.evidence, age],
          problem.corroborated ? 0.88 : 0.5,
          [],
          ['fix-service-target-port'],
        );
      }

      const state = endpointState(ctx, svc);
      if (!state.known || state.ready > 0) continue;
      // A Service created seconds ago has not had its endpoints computed yet.
      if (isoAge(ctx.now, svc.metadata.creationTimestamp) < 60_000) continue;
      const why = whyNoEndpoints(ctx, svc);
      const base = `Service ${svc.metadata.name} has no ready endpoints (${state.notReady} not ready)`;
      if (why.code === 'SELECTS_NO_PODS') {
        emit(
          'SERVICE_NO_ENDPOINTS',
          'medium',
          `${base}: its selector matches no pod; traffic to it fails.`,
          [...why.evidence, age],
          0.85,
          [],
          ['fix-service-selector'],
          why.owner,
        );
      } else if (why.code === 'SCALED_TO_ZERO') {
        emit(
          'SERVICE_NO_ENDPOINTS',
          'medium',
          `${base}: ${why.owner?.kind} ${why.owner?.name}, whose pods it selects, is scaled to 0 replicas; traffic to it fails.`,
          [...why.evidence, age],
          0.85,
          [],
          ['scale-workload'],
          why.owner,
        );
      } else {
        // Unready pods make the Service empty; when their state names the cause, the Service is only the symptom.
        emit(
          'SERVICE_NO_ENDPOINTS',
          'medium',
          `${base}${why.code === 'PODS_NOT_READY' ? ': its pods are not ready' : ''}; traffic to it fails.`,
          [...why.evidence, age],
          why.code === 'UNKNOWN' ? 0.5 : why.causeElsewhere ? 0.6 : 0.75,
          why.upstream,
          ['fix-readiness'],
        );
      }
    }
    return findings;
  },
};
