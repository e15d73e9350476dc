import type { KubeObject } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { ref } from './pods.js';

/**
 * cert-manager answers an ACME HTTP-01 challenge with an Ingress of its own (`cm-acme-http-solver-…`, owned by the
 * Challenge). That Ingress is built from the issuer's solver (`spec.acme.solvers[].http01.ingress`): its class, its
 * annotations, its template. A fault in the solver Ingress's class is therefore changed in the issuer, and the
 * Certificate waiting on the challenge is what suffers.
 */

type SolverIngress = { ingressClassName?: string; class?: string; name?: string };
type Solver = { http01?: { ingress?: SolverIngress } };

interface SolverOrigin {
  issuer: ResourceRef;
  challenge: KubeObject;
  certificates: ResourceRef[];
  /** The solver's class setting as the issuer spells it (`ingressClassName: nginx`). */
  setting: string;
}

const isSolverIngress = (ing: KubeObject) =>
  ing.metadata.labels?.['acme.cert-manager.io/http01-solver'] === 'true' ||
  (ing.metadata.ownerReferences ?? []).some((o) => o.kind === 'Challenge');

/** The issuer whose HTTP-01 solver set this Ingress's class, when the Ingress is a cert-manager solver's. */
function solverOrigin(ctx: AnalyzerContext, ing: KubeObject): SolverOrigin | undefined {
  if (!isSolverIngress(ing)) return undefined;
  const namespace = ing.metadata.namespace ?? ctx.namespace;
  const owner = (ing.metadata.ownerReferences ?? []).find((o) => o.kind === 'Challenge')?.name;
  const challenge = ctx
    .objects('challenges')
    .find(
      (c) => (c.metadata.namespace ?? namespace) === namespace && (owner === undefined || c.metadata.name === owner),
    );
  if (!challenge) return undefined;
  const issuerRef = (challenge.spec?.issuerRef ?? {}) as { name?: string; kind?: string };
  if (!issuerRef.name) return undefined;
  const cluster = issuerRef.kind === 'ClusterIssuer';
  const issuer = ctx
    .objects(cluster ? 'clusterissuers' : 'issuers')
    .find((i) => i.metadata.name === issuerRef.name && (cluster || (i.metadata.namespace ?? namespace) === namespace));
  const cls = ing.spec?.ingressClassName ?? ing.metadata.annotations?.['kubernetes.io/ingress.class'];
  // The issuer read must still set the class the solver Ingress carries; otherwise the Ingress is a leftover.
  const solvers = (issuer?.spec?.acme?.solvers ?? []) as Solver[];
  const setting = solvers
    .map((s) => s.http01?.ingress)
    .map((i) =>
      i?.ingressClassName === cls && cls
        ? `ingressClassName: ${cls}`
        : i?.class === cls && cls
          ? `class: ${cls}`
          : undefined,
    )
    .find((s) => s !== undefined);
  if (!issuer || !setting) return undefined;
  const dnsName = challenge.spec?.dnsName as string | undefined;
  const certificates = ctx
    .objects('certificates')
    .filter(
      (c) =>
        (c.metadata.namespace ?? namespace) === namespace &&
        dnsName !== undefined &&
        ((c.spec?.dnsNames ?? []) as string[]).includes(dnsName),
    )
    .map((c) => ref('Certificate', c.metadata.name, namespace));
  return {
    issuer: ref(cluster ? 'ClusterIssuer' : 'Issuer', issuerRef.name, cluster ? undefined : namespace),
    challenge,
    certificates,
    setting,
  };
}

/**
 * Points the class findings about a solver Ingress at the issuer that sets the class: owner, change, and the
 * Challenge and Certificates it holds up.
 */
export function blameSolverIssuer(
  ctx: AnalyzerContext,
  ing: KubeObject,
  findings: FindingInput[],
  served: string[],
): void {
  if (findings.length === 0) return;
  const origin = solverOrigin(ctx, ing);
  if (!origin) return;
  const { issuer, challenge, certificates, setting } = origin;
  const state = [challenge.status?.state, challenge.status?.reason].filter(Boolean).join(': ');
  for (const f of findings) {
    f.owner = issuer;
    f.message = `${f.message} The Ingress is cert-manager's HTTP-01 solver for Challenge ${challenge.metadata.name}; its class comes from ${issuer.kind} ${issuer.name} (solvers[].http01.ingress ${setting}).`;
    f.evidence = [
      ...(state ? [`Challenge ${challenge.metadata.name}: ${state}`.slice(0, 300)] : []),
      `${issuer.kind} ${issuer.name} solver http01.ingress ${setting}`,
      ...f.evidence,
    ].slice(0, 5);
    f.related = [
      ...(f.related ?? []),
      ref('Challenge', challenge.metadata.name, challenge.metadata.namespace),
      ...certificates,
    ];
    f.change = `set solvers[].http01.ingress of ${issuer.kind} ${issuer.name} to a class a running controller serves${served.length > 0 ? ` (IngressClasses: ${served.join(', ')})` : ''} instead of ${setting}`;
  }
}
