import type { KubeObject } from '../../cluster/types.js';
import type { FindingInput } from '../envelope/findings.js';
import { bindingMissing, grantingRoles } from '../kube/admission.js';
import { ownerOf } from '../kube/pod-owners.js';
import { containers, namespacePods, podRef, ref } from '../kube/pods.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

/**
 * A workload whose calls to the API server are refused. The API server words it exactly (`pods is forbidden: User
 * "system:serviceaccount:batch:dispatcher" cannot list resource "pods" in API group "" in the namespace "batch"`),
 * so the refusal is followed to the RBAC objects: the Roles and ClusterRoles that grant that verb, and the binding
 * of one of them that names another subject (an old service account, the wrong namespace). That binding is what to
 * change; without one, the workload's service account needs a binding.
 */

const NAME = 'access';
// Quotes may come escaped, when the client logs the error inside a JSON line.
const FORBIDDEN =
  /User \\?"system:serviceaccount:([a-z0-9-]+):([a-z0-9.-]+)\\?" cannot (\w+) resource \\?"([^"\\]+)\\?" in API group \\?"([^"\\]*)\\?"(?: in the namespace \\?"([a-z0-9-]+)\\?"| at the cluster scope)?/;

interface Refusal {
  /** The API server's sentence itself, unescaped: a log line's head is often a logger's prefix. */
  refusal: string;
  namespace: string;
  serviceAccount: string;
  verb: string;
  resource: string;
  group: string;
  scope: string | undefined;
}

function refusalIn(ctx: AnalyzerContext, pod: KubeObject): Refusal | undefined {
  for (const c of containers(pod)) {
    for (const previous of [true, false]) {
      const text = ctx.log(pod.metadata.name, c.name, previous, pod.metadata.namespace);
      if (!text) continue;
      const lines = text.split(/\r?\n/);
      for (let i = lines.length - 1; i >= 0 && i >= lines.length - 300; i--) {
        const m = FORBIDDEN.exec(lines[i] as string);
        if (!m) continue;
        const resource = (m[4] as string).split('/')[0] as string;
        return {
          refusal: m[0].replaceAll('\\"', '"'),
          namespace: m[1] as string,
          serviceAccount: m[2] as string,
          verb: m[3] as string,
          resource,
          group: m[5] as string,
          scope: m[6],
        };
      }
    }
  }
  return undefined;
}

export const accessAnalyzer: Analyzer = {
  name: NAME,
  domain: 'platform',
  description:
    'Workloads whose API calls are forbidden: the Roles that grant the call and the binding that names another subject.',
  needs: ['pods', 'roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    const seen = new Set<string>();
    for (const pod of namespacePods(ctx)) {
      const refusal = refusalIn(ctx, pod);
      if (!refusal) continue;
      const client = ownerOf(ctx, pod) ?? podRef(pod);
      const key = `${client.kind}/${client.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const where = refusal.scope ?? refusal.namespace;
      const call = `${refusal.verb} ${refusal.group ? `${refusal.resource}.${refusal.group}` : refusal.resource}${refusal.scope ? ` in namespace ${refusal.scope}` : ' cluster-wide'}`;
      const sa = `ServiceAccount ${refusal.namespace}/${refusal.serviceAccount}`;
      const blind = ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'].filter((k) =>
        ctx.unavailable.has(k as never),
      );
      const roles = grantingRoles(ctx, where, refusal.verb, refusal.resource, refusal.group);
      const verdict =
        roles.size > 0 ? bindingMissing(ctx, where, (r) => roles.has(r), refusal.serviceAccount) : undefined;
      const base = {
        analyzer: NAME,
        domain: 'platform' as const,
        severity: 'high' as const,
        remediation: ['fix-rbac'],
      };
      if (verdict?.binding) {
        findings.push({
          ...base,
          code: 'RBAC_FORBIDDEN',
          resource: verdict.binding,
          message: `${client.kind} ${client.name} may not ${call}: ${verdict.binding.kind} ${verdict.binding.name} grants ${verdict.role} to ${verdict.subjects}, not to ${sa}, which its pods run as.`,
          evidence: [
            `${pod.metadata.name}: ${refusal.refusal}`,
            `${verdict.binding.kind} ${verdict.binding.name}: ${verdict.role} → ${verdict.subjects}`,
          ],
          confidence: 0.92,
          related: [client],
          change: `add ${sa} to the subjects of ${verdict.binding.kind} ${verdict.binding.name}`,
          alternatives: [
            { resource: client, change: `run ${client.kind} ${client.name} as a service account the binding names` },
          ],
        });
        continue;
      }
      findings.push({
        ...base,
        code: 'RBAC_FORBIDDEN',
        resource: podRef(pod),
        owner: client,
        message: `${client.kind} ${client.name} may not ${call} as ${sa}${blind.length > 0 ? ` (${blind.join(', ')} could not be read)` : roles.size === 0 ? ': no Role or ClusterRole read grants it' : ': no binding read gives it a Role that does'}.`,
        evidence: [
          `${pod.metadata.name}: ${refusal.refusal}`,
          ...(roles.size > 0 ? [`granted by ${[...roles].slice(0, 4).join(', ')}`] : []),
        ],
        confidence: blind.length > 0 ? 0.6 : 0.8,
        related:
          roles.size > 0
            ? [...roles]
                .slice(0, 3)
                .map((r) =>
                  ref(r.split('/')[0] as string, r.split('/')[1] as string, r.startsWith('Role/') ? where : undefined),
                )
            : [],
        change: `bind a Role that grants "${refusal.verb} ${refusal.resource}" to ${sa}`,
      });
    }
    return findings;
  },
};
