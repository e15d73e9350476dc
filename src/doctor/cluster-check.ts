import { ApiException } from '@kubernetes/client-node';
import { httpFailure, transportFailure } from '../cluster/classify.js';
import { KubeconfigError, type LoadedKubeconfig, loadKubeconfig } from '../cluster/kubeconfig.js';
import { RESOURCES } from '../cluster/resources.js';
import { READABLE_KINDS } from '../cluster/types.js';
import { type CheckResult, fail, pass, skip } from './report.js';
import { type ReviewedRules, reviewOwnRules } from './rules-review.js';
import type { ReadSecret } from './slack-check.js';

/** Where a cluster's kubeconfig is: a file (local runs) or the deployed secret. */
export type KubeconfigLocation = { kind: 'file'; file: string } | { kind: 'secret'; secretId: string };

const READ_VERBS = new Set(['get', 'list', 'watch']);

/**
 * What every authenticated identity may do on any cluster, granted by the API server's defaults (system:basic-user,
 * OpenShift's basic-user): ask about its own access. Such a review is answered and forgotten; it changes nothing.
 */
const SELF_REVIEWS: ReadonlyArray<{ group: string; resource: string }> = [
  { group: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' },
  { group: 'authorization.k8s.io', resource: 'selfsubjectrulesreviews' },
  { group: 'authentication.k8s.io', resource: 'selfsubjectreviews' },
  { group: 'authorization.openshift.io', resource: 'selfsubjectrulesreviews' },
  { group: 'authorization.openshift.io', resource: 'subjectrulesreviews' },
];

const covers = (list: readonly string[], value: string) => list.includes('*') || list.includes(value);

function isSelfReview(rule: ReviewedRules['resourceRules'][number]): boolean {
  return rule.resources.every((resource) =>
    SELF_REVIEWS.some((s) => s.resource === resource && rule.apiGroups.every((g) => g === s.group)),
  );
}

interface RulesVerdict {
  /** Grants beyond reading: other verbs, Secrets. */
  tooBroad: string[];
  /** Reads calmops makes that the identity may not. */
  missing: string[];
}

/** Judges reviewed rules against what the reader needs: get, list and watch of its kinds and pod logs, nothing else. */
function judgeRules(rules: ReviewedRules): RulesVerdict {
  const tooBroad: string[] = [];
  for (const rule of rules.resourceRules) {
    const where = `${rule.resources.join(',')} in ${rule.apiGroups.map((g) => g || 'core').join(',')}`;
    const extra = rule.verbs.filter((v) => !READ_VERBS.has(v));
    if (extra.length > 0 && !(extra.every((v) => v === 'create') && isSelfReview(rule))) {
      tooBroad.push(`${extra.join(',')} on ${where}`);
    }
    if ((covers(rule.apiGroups, '') || rule.apiGroups.length === 0) && covers(rule.resources, 'secrets')) {
      tooBroad.push(`${rule.verbs.join(',')} on Secrets (${where})`);
    }
  }
  for (const rule of rules.nonResourceRules) {
    const extra = rule.verbs.filter((v) => v !== 'get' && v !== 'head');
    if (extra.length > 0) tooBroad.push(`${extra.join(',')} on ${rule.nonResourceURLs.join(',')}`);
  }
  const may = (group: string, resource: string, verb: string) =>
    rules.resourceRules.some(
      (r) =>
        covers(r.verbs, verb) &&
        covers(r.apiGroups, group) &&
        covers(r.resources, resource) &&
        (r.resourceNames === undefined || r.resourceNames.length === 0),
    );
  const missing = READABLE_KINDS.filter((kind) => !may(RESOURCES[kind].group, kind, 'list')).map((k) => `list ${k}`);
  if (!may('', 'pods/log', 'get')) missing.push('get pods/log');
  return { tooBroad: [...new Set(tooBroad)], missing };
}

const REBUILD = (cluster: string) =>
  `rebuild it: cdk/kubernetes/make-kubeconfig.sh --cluster ${cluster} --context <admin context> (docs/deploy.md, step 5)`;

/** The kubeconfig as the cluster reader would load it: same sources, same safety rules. */
async function loadFor(location: KubeconfigLocation, readSecret: ReadSecret): Promise<LoadedKubeconfig> {
  if (location.kind === 'file') return loadKubeconfig({ file: location.file });
  return loadKubeconfig({ yaml: await readSecret(location.secretId) });
}

/** Why a review failed, and what to do about it, from the HTTP status or the transport error. */
function reviewFailure(cluster: string, loaded: LoadedKubeconfig, error: unknown): CheckResult {
  if (error instanceof ApiException) {
    const failure = httpFailure('review the rules of', 'the identity', error.code, String(error.body ?? ''));
    const fix =
      error.code === 401
        ? loaded.eks !== undefined
          ? 'EKS did not accept the token: check the access entry for the cluster reader role (ClusterReaderRoleArn) ' +
            'and the cluster authentication mode (API or API_AND_CONFIG_MAP), docs/deploy.md'
          : `the token expired or was revoked: ${REBUILD(cluster)}`
        : error.code === 403
          ? 'the identity may not even ask about itself: is system:basic-user still bound to system:authenticated?'
          : 'the API server answered with an error: try again, then check its health';
    return fail('rbac', cluster, failure.message, fix);
  }
  const failure = transportFailure(error, {
    verb: 'review the rules of',
    describe: 'the identity',
    server: loaded.displayServer,
    timeoutMs: 10_000,
    timedOut: error instanceof Error && error.name === 'TimeoutError',
    cancelled: false,
    secrets: [],
  });
  const tls = /TLS with|certificate|x509|self.signed/i.test(`${failure.message} ${(error as Error)?.message ?? ''}`);
  const fix = tls
    ? 'the kubeconfig does not trust the server certificate: put the API server CA in certificate-authority-data ' +
      '(OpenShift: the CA of api.<cluster> from `oc config view --raw --minify`, not the ingress CA), docs/deploy.md'
    : 'this machine cannot reach the API server. If its endpoint is private, the deployed reader needs the VPC ' +
      'settings (docs/deploy.md, private clusters); run the doctor from inside that network to check from here';
  return fail('rbac', cluster, failure.message, fix);
}

export async function checkCluster(
  cluster: string,
  location: KubeconfigLocation,
  options: { readSecret: ReadSecret; namespace: string; timeoutMs?: number },
): Promise<CheckResult[]> {
  const where = location.kind === 'file' ? location.file : location.secretId;
  let loaded: LoadedKubeconfig;
  try {
    loaded = await loadFor(location, options.readSecret);
  } catch (error) {
    const detail =
      error instanceof KubeconfigError ? error.message : `cannot read ${where}: ${(error as Error).message}`;
    return [fail('kubeconfig', cluster, detail.split('\n')[0] ?? detail, REBUILD(cluster))];
  }
  const results = [pass('kubeconfig', cluster, `${where}: context ${loaded.context}, server ${loaded.displayServer}`)];
  if (loaded.eks !== undefined) {
    // The token would be signed with this machine's AWS identity, not the reader role's (which only Lambda may
    // assume), so the review would describe the wrong identity.
    results.push(
      skip(
        'rbac',
        cluster,
        'EKS with the cluster reader role: only the deployed function can sign in as it. Check the access entry ' +
          '(aws eks describe-access-entry) and that no access policy is associated with it',
      ),
    );
    return results;
  }
  let rules: ReviewedRules;
  try {
    rules = await reviewOwnRules(loaded, options.namespace, { timeoutMs: options.timeoutMs ?? 10_000 });
  } catch (error) {
    return [...results, reviewFailure(cluster, loaded, error)];
  }
  const verdict = judgeRules(rules);
  if (verdict.tooBroad.length > 0) {
    results.push(
      fail(
        'rbac',
        cluster,
        `the identity may do more than read: ${verdict.tooBroad.join('; ')}`,
        'bind it to the generated read-only ClusterRole only (kubectl apply -f cdk/kubernetes/reader-rbac.yaml) and ' +
          'remove its other bindings (kubectl auth can-i --list --as=system:serviceaccount:calmops:calmops-reader)',
      ),
    );
  } else if (verdict.missing.length > 0) {
    results.push(
      fail(
        'rbac',
        cluster,
        `read-only, but it may not ${verdict.missing.join(', ')} in namespace ${options.namespace}`,
        'apply the generated ClusterRole and binding: kubectl apply -f cdk/kubernetes/reader-rbac.yaml',
      ),
    );
  } else {
    const note = rules.incomplete ? ' (the server listed its rules incompletely)' : '';
    results.push(pass('rbac', cluster, `get/list/watch only, no Secrets, every kind calmops reads${note}`));
  }
  return results;
}
