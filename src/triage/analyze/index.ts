import { accessAnalyzer } from './access.js';
import { addOnsAnalyzer } from './add-ons.js';
import type { Analyzer } from './analyzer.js';
import { containerConfigAnalyzer } from './container-config.js';
import { crashloopAnalyzer } from './crashloop.js';
import { dependenciesAnalyzer } from './dependencies.js';
import { dnsAnalyzer } from './dns.js';
import { egressFirewallAnalyzer } from './egress-firewall.js';
import { imagePullAnalyzer } from './image-pull.js';
import { ingressAnalyzer } from './ingress.js';
import { livenessProbeAnalyzer } from './liveness-probe.js';
import { meshTlsAnalyzer } from './mesh-tls.js';
import { nodeHealthAnalyzer } from './node-health.js';
import { oomKilledAnalyzer } from './oom-killed.js';
import { pvcBindingAnalyzer } from './pvc-binding.js';
import { routeAnalyzer } from './route.js';
import { schedulingAnalyzer } from './scheduling.js';
import { serviceEndpointsAnalyzer } from './service-endpoints.js';
import { volumeCapacityAnalyzer } from './volume-capacity.js';
import { volumeMountAnalyzer } from './volume-mount.js';
import { volumeZoneAnalyzer } from './volume-zone.js';
import { workloadRolloutAnalyzer } from './workload-rollout.js';

export { contextFromObjects } from '../gather/context.js';
export { runAnalyzers } from './run.js';

const ALL: readonly Analyzer[] = [
  pvcBindingAnalyzer,
  volumeMountAnalyzer,
  schedulingAnalyzer,
  crashloopAnalyzer,
  containerConfigAnalyzer,
  livenessProbeAnalyzer,
  oomKilledAnalyzer,
  imagePullAnalyzer,
  nodeHealthAnalyzer,
  ingressAnalyzer,
  routeAnalyzer,
  serviceEndpointsAnalyzer,
  dnsAnalyzer,
  workloadRolloutAnalyzer,
  dependenciesAnalyzer,
  accessAnalyzer,
  volumeCapacityAnalyzer,
  addOnsAnalyzer,
  meshTlsAnalyzer,
  egressFirewallAnalyzer,
  volumeZoneAnalyzer,
];

/** Every analyzer by name; templates list these names. */
export const ANALYZERS: ReadonlyMap<string, Analyzer> = new Map(ALL.map((a) => [a.name, a]));

export class UnknownAnalyzerError extends Error {
  override readonly name = 'UnknownAnalyzerError';
}

/** Look an analyzer up by name; throws with the known names when it does not exist. */
export function getAnalyzer(name: string): Analyzer {
  const analyzer = ANALYZERS.get(name);
  if (analyzer === undefined) {
    throw new UnknownAnalyzerError(`unknown analyzer "${name}"; known: ${[...ANALYZERS.keys()].join(', ')}`);
  }
  return analyzer;
}
