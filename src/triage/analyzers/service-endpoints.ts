import type { Analyzer, AnalyzerContext } from '../analyzer.js';
import type { FindingInput } from '../findings.js';
import { canSee, formatAge } from './events.js';
import { inNamespace, isoAge, ref } from './pods.js';
import { endpointState, servicePortsLine, whyNoEndpoints } from './services.js';

const NAME = 'service-endpoints';

export const serviceEndpointsAnalyzer: Analyzer = {
  name: NAME,
  domain: 'networking',
  description: 'Services with a selector but no ready endpoints, and why (nothing selected, pods not ready).',
  needs: ['services', 'endpoints', 'pods', 'events'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    if (!canSee(ctx, 'services')) return [];
    const findings: FindingInput[] = [];
    for (const svc of inNamespace(ctx, ctx.objects('services'))) {
      if (svc.spec?.type === 'ExternalName') continue;
      const selector = svc.spec?.selector as Record<string, string> | undefined;
      if (!selector || Object.keys(selector).length === 0) continue;
      const state = endpointState(ctx, svc);
      if (!state.known || state.ready > 0) continue;
      // A Service created seconds ago has not had its endpoints computed yet.
      if (isoAge(ctx.now, svc.metadata.creationTimestamp) < 60_000) continue;
      const why = whyNoEndpoints(ctx, svc);
      findings.push({
        code: 'SERVICE_NO_ENDPOINTS',
        analyzer: NAME,
        domain: 'networking',
        severity: 'medium',
        resource: ref('Service', svc.metadata.name, svc.metadata.namespace ?? ctx.namespace),
        message: `Service ${svc.metadata.name} has no ready endpoints (${state.notReady} not ready)${
          why.code === 'SELECTS_NO_PODS'
            ? ': its selector matches no pod'
            : why.code === 'PODS_NOT_READY'
              ? ': its pods are not ready'
              : ''
        }; traffic to it fails.`,
        evidence: [
          ...why.evidence,
          `ports ${servicePortsLine(svc)}; age ${formatAge(isoAge(ctx.now, svc.metadata.creationTimestamp))}`,
        ],
        confidence: why.code === 'UNKNOWN' ? 0.5 : 0.85,
        related: [],
        remediation: why.code === 'SELECTS_NO_PODS' ? ['fix-service-selector'] : ['fix-readiness'],
      });
    }
    return findings;
  },
};
