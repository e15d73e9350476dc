import type { KubeObject } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyzer.js';

/** NetworkPolicy semantics shared by the analyzers that judge traffic (dependencies, DNS). */

/** The directions a policy isolates: as declared, else Ingress, plus Egress when it has egress rules. */
export function policyTypes(p: KubeObject): string[] {
  const declared = p.spec?.policyTypes as string[] | undefined;
  if (declared && declared.length > 0) return declared;
  return p.spec?.egress ? ['Ingress', 'Egress'] : ['Ingress'];
}

/** A namespace's labels as a namespaceSelector sees them, including the automatic metadata.name label. */
export function namespaceLabels(ctx: AnalyzerContext, name: string): Record<string, string> {
  const ns = ctx.objects('namespaces').find((n) => n.metadata.name === name);
  return { 'kubernetes.io/metadata.name': name, ...(ns?.metadata.labels ?? {}) };
}
