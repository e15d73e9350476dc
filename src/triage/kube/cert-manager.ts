import type { KubeObject } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import { entriesOf } from './entries.js';
import { namespacePods } from './pods.js';

/**
 * cert-manager's controller reads the Secrets of every ClusterIssuer (a CA's key pair, an ACME account key, DNS
 * credentials) from one namespace, its `--cluster-resource-namespace` (the Helm chart sets it to the controller's own
 * namespace). A ClusterIssuer that cannot issue is that namespace's fault as much as it is any Certificate's.
 */

const FLAG = '--cluster-resource-namespace=';

const strings = (list: unknown): string[] =>
  Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : [];

/** The controller pod of the namespace whose `--cluster-resource-namespace` is that namespace, if one was read. */
export function clusterResourceController(ctx: AnalyzerContext): KubeObject | undefined {
  for (const pod of namespacePods(ctx)) {
    for (const c of entriesOf<{ args?: unknown; command?: unknown }>(pod.spec?.containers)) {
      for (const arg of [...strings(c.command), ...strings(c.args)]) {
        if (!arg.startsWith(FLAG)) continue;
        const value = arg.slice(FLAG.length);
        const namespace = value === '$(POD_NAMESPACE)' ? pod.metadata.namespace : value;
        if (namespace === ctx.namespace) return pod;
      }
    }
  }
  return undefined;
}
