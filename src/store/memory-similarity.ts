import type { Fingerprint } from './memory-fingerprint.js';

/**
 * How alike two incidents are, as a score in [0, 1] and one line a human can check ("same intent, 3 of 4 finding
 * codes, same provisioner"). Weights favour what identifies a cause: the root cause and the finding codes, then the
 * key reasons; the intent and the kinds only separate otherwise equal candidates.
 */

const SIMILARITY_WEIGHTS = {
  intent: 0.15,
  rootCause: 0.25,
  findingCodes: 0.3,
  keyReasons: 0.25,
  resourceKinds: 0.05,
} as const;

export interface SimilarityResult {
  score: number;
  explanation: string;
  parts: {
    intent: boolean;
    rootCause: boolean;
    sharedCodes: string[];
    sharedReasons: string[];
    differingReasons: string[];
    sharedKinds: string[];
  };
}

function dice(a: readonly string[], b: readonly string[]): { value: number; shared: string[] } {
  if (a.length === 0 && b.length === 0) return { value: 1, shared: [] };
  const set = new Set(b);
  const shared = a.filter((x) => set.has(x));
  return { value: (2 * shared.length) / (a.length + b.length), shared };
}

const CATEGORY_WORDS: Record<string, string> = {
  provisioner: 'provisioner',
  taint: 'taint',
  registry: 'image registry',
  'exit-code': 'exit code',
  http: 'HTTP status',
  insufficient: 'missing resource',
  'ingress-class': 'ingress class',
};

function reasonPhrase(reason: string): string {
  const [category = '', value = ''] = reason.split(/:(.*)/s);
  if (category === 'reason') return `same ${value} reason`;
  return `same ${CATEGORY_WORDS[category] ?? category} (${value})`;
}

export function scoreSimilarity(query: Fingerprint, candidate: Fingerprint): SimilarityResult {
  const intent = query.intent === candidate.intent;
  const rootCause =
    query.rootCauseCode !== undefined &&
    candidate.rootCauseCode !== undefined &&
    query.rootCauseCode === candidate.rootCauseCode;
  const codes = dice(query.findingCodes, candidate.findingCodes);
  const reasons = dice(query.keyReasons, candidate.keyReasons);
  const kinds = dice(query.resourceKinds, candidate.resourceKinds);

  // Reasons in the same category with different values ("provisioner a" vs "provisioner b") are a difference
  // worth naming: the two incidents look alike but the cause sits somewhere else.
  const categories = (list: readonly string[]) => new Map(list.map((r) => [r.split(':')[0] ?? r, r]));
  const candidateByCategory = categories(candidate.keyReasons);
  const differingReasons = query.keyReasons.filter((r) => {
    const other = candidateByCategory.get(r.split(':')[0] ?? r);
    return other !== undefined && other !== r && !candidate.keyReasons.includes(r) && !r.startsWith('reason:');
  });

  let weightTotal = 0;
  let score = 0;
  const add = (weight: number, value: number) => {
    weightTotal += weight;
    score += weight * value;
  };
  add(SIMILARITY_WEIGHTS.intent, intent ? 1 : 0);
  if (query.rootCauseCode !== undefined || candidate.rootCauseCode !== undefined) {
    add(SIMILARITY_WEIGHTS.rootCause, rootCause ? 1 : 0);
  }
  add(SIMILARITY_WEIGHTS.findingCodes, codes.value);
  // Reasons only count when someone has them; two incidents without reasons are not alike for that.
  if (query.keyReasons.length > 0 || candidate.keyReasons.length > 0) add(SIMILARITY_WEIGHTS.keyReasons, reasons.value);
  add(SIMILARITY_WEIGHTS.resourceKinds, kinds.value);
  const normalized = weightTotal === 0 ? 0 : score / weightTotal;

  const phrases: string[] = [intent ? 'same intent' : `different intent (${candidate.intent})`];
  if (rootCause) phrases.push(`same root cause ${candidate.rootCauseCode}`);
  phrases.push(`${codes.shared.length} of ${query.findingCodes.length} finding codes`);
  phrases.push(...reasons.shared.slice(0, 2).map(reasonPhrase));
  if (differingReasons[0]) {
    const other = candidateByCategory.get(differingReasons[0].split(':')[0] ?? '') ?? '';
    phrases.push(
      `different ${CATEGORY_WORDS[differingReasons[0].split(':')[0] ?? ''] ?? 'reason'} (${other.split(/:(.*)/s)[1]})`,
    );
  }

  return {
    score: Math.round(normalized * 1000) / 1000,
    explanation: phrases.join(', '),
    parts: {
      intent,
      rootCause,
      sharedCodes: codes.shared,
      sharedReasons: reasons.shared,
      differingReasons,
      sharedKinds: kinds.shared,
    },
  };
}
