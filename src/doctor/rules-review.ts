import {
  AuthorizationV1Api,
  Observable,
  type RequestContext,
  type ResponseContext,
  type V1SelfSubjectRulesReview,
} from '@kubernetes/client-node';
import { eksTokenMinter } from '../cluster/eks-token.js';
import type { LoadedKubeconfig } from '../cluster/kubeconfig.js';

/**
 * The doctor's one request that is not a read: a SelfSubjectRulesReview asks the API server what the identity may
 * do. Kubernetes models that question as `create` on `selfsubjectrulesreviews`, so the read-only guard
 * (src/cluster/read-only-guard.ts), which lets nothing but GETs of allowlisted kinds through, refuses it, and must
 * keep refusing it in the cluster reader. It is therefore its own narrow call, used only by `calmops doctor`: it
 * creates nothing that persists (the review is answered and forgotten), sends only the namespace, and cannot be
 * pointed at any other resource or verb.
 */

export interface ReviewedRules {
  resourceRules: { verbs: string[]; apiGroups: string[]; resources: string[]; resourceNames?: string[] }[];
  nonResourceRules: { verbs: string[]; nonResourceURLs: string[] }[];
  /** The server could not list every rule (a webhook authorizer, say): what is listed is a lower bound. */
  incomplete: boolean;
  evaluationError?: string;
}

export async function reviewOwnRules(
  loaded: LoadedKubeconfig,
  namespace: string,
  options: { timeoutMs?: number } = {},
): Promise<ReviewedRules> {
  const kc = loaded.kc;
  if (loaded.eks !== undefined) {
    // Signed in-process as the cluster reader does, instead of running the kubeconfig's exec plugin.
    const token = eksTokenMinter(loaded.eks)();
    const current = kc.getCurrentUser();
    kc.users = kc.users.map((u) => (u === current ? { ...u, token } : u));
  }
  const api = kc.makeApiClient(AuthorizationV1Api);
  const deadline = AbortSignal.timeout(options.timeoutMs ?? 10_000);
  const body: V1SelfSubjectRulesReview = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectRulesReview',
    spec: { namespace },
  };
  // The generated object-parameter API hands options straight to its observable layer, so the middleware returns
  // the library's Observable (promise middleware fails there with "toPromise is not a function").
  const review = await api.createSelfSubjectRulesReview(
    { body },
    {
      middleware: [
        {
          pre: (context: RequestContext) => {
            context.setSignal(deadline);
            return new Observable(Promise.resolve(context));
          },
          post: (response: ResponseContext) => new Observable(Promise.resolve(response)),
        },
      ],
    },
  );
  const status = review.status;
  return {
    resourceRules: (status?.resourceRules ?? []).map((r) => ({
      verbs: r.verbs ?? [],
      apiGroups: r.apiGroups ?? [],
      resources: r.resources ?? [],
      ...(r.resourceNames === undefined ? {} : { resourceNames: r.resourceNames }),
    })),
    nonResourceRules: (status?.nonResourceRules ?? []).map((r) => ({
      verbs: r.verbs ?? [],
      nonResourceURLs: r.nonResourceURLs ?? [],
    })),
    incomplete: status?.incomplete === true,
    ...(status?.evaluationError ? { evaluationError: status.evaluationError } : {}),
  };
}
