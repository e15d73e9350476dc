import * as z from 'zod';
import { canonicalKind } from '../diagnosis/kinds.js';
import type { TriageEnvelope } from '../triage/envelope/index.js';
import { DomainSchema } from '../triage/envelope/index.js';

/**
 * An incident's fingerprint: what made it this incident rather than another, without the names that differ from
 * cluster to cluster. Intent, finding codes, key reasons (the provisioner, the taint key, the image registry, the
 * exit code, the Kubernetes reason strings) and the kinds involved. Its tokens feed the inverted index.
 */
export const FingerprintSchema = z.object({
  intent: z.string(),
  domain: DomainSchema,
  findingCodes: z.array(z.string()),
  /** `category:value`, e.g. `provisioner:ebs.csi.aws.com`, `taint:node.kubernetes.io/disk-pressure`. */
  keyReasons: z.array(z.string()),
  resourceKinds: z.array(z.string()),
  /** The confirmed root cause for stored incidents, the top ranked cause for a new envelope. */
  rootCauseCode: z.string().optional(),
  /** The kind of object the top cause names for change (a LimitRange, a NetworkPolicy), never a casualty's. */
  rootCauseKind: z.string().optional(),
  /** What failed because of the top cause: its casualties' finding codes, kept apart from the cause's. */
  impactCodes: z.array(z.string()).optional(),
});
export type Fingerprint = z.infer<typeof FingerprintSchema>;

export type FingerprintSource = {
  routing: Pick<TriageEnvelope['routing'], 'intent' | 'domain'>;
  findings: ReadonlyArray<Pick<TriageEnvelope['findings'][number], 'code' | 'message' | 'evidence' | 'resource'>>;
  rootCause: ReadonlyArray<
    Pick<TriageEnvelope['rootCause'][number], 'code'> &
      Partial<Pick<TriageEnvelope['rootCause'][number], 'resource' | 'impact'>>
  >;
};

const REASON_WORDS: ReadonlyArray<[RegExp, string]> = [
  [/\bImagePullBackOff\b/i, 'ImagePullBackOff'],
  [/\bErrImagePull\b/i, 'ErrImagePull'],
  [/\bCrashLoopBackOff\b/i, 'CrashLoopBackOff'],
  [/\bOOMKilled\b/i, 'OOMKilled'],
  [/\bFailedScheduling\b/i, 'FailedScheduling'],
  [/\bFailedMount\b/i, 'FailedMount'],
  [/\bFailedAttachVolume\b/i, 'FailedAttachVolume'],
  [/\bProvisioningFailed\b/i, 'ProvisioningFailed'],
  [/\bCreateContainerConfigError\b/i, 'CreateContainerConfigError'],
  [/\bEvicted\b/, 'Evicted'],
  [/\bNodeNotReady\b|\bnode(?:\(s\))? (?:is |were |was )?not ready\b/i, 'NodeNotReady'],
  [/\bDiskPressure\b/i, 'DiskPressure'],
  [/\bMemoryPressure\b/i, 'MemoryPressure'],
  [/\bPIDPressure\b/i, 'PIDPressure'],
  [/\bNetworkUnavailable\b/i, 'NetworkUnavailable'],
  [/\bPLEG is not healthy\b/i, 'PLEGNotHealthy'],
  [/\bNXDOMAIN\b/i, 'NXDOMAIN'],
  [/\bSERVFAIL\b/i, 'SERVFAIL'],
  [/\bno such host\b/i, 'no-such-host'],
  [/\bconnection refused\b/i, 'connection-refused'],
  [/\bi\/o timeout\b|\bcontext deadline exceeded\b/i, 'timeout'],
  [/\bno endpoints\b|\bno ready endpoints\b|\b0 endpoints\b/i, 'no-endpoints'],
  [/\bmanifest unknown\b|\bnot found: manifest\b/i, 'manifest-unknown'],
  [/\bunauthorized\b|\bauthentication required\b|\bpull access denied\b/i, 'registry-auth'],
  [/\btoo many requests\b|\brate limit/i, 'rate-limited'],
  [/\bx509\b|\bcertificate (?:has expired|signed by unknown)/i, 'x509'],
  [/\bno space left on device\b/i, 'no-space'],
  [/\bvolume node affinity conflict\b/i, 'volume-node-affinity'],
  [/\bMulti-Attach error\b/i, 'multi-attach'],
  [/\bwaiting for first consumer\b|\bWaitForFirstConsumer\b/i, 'wait-for-first-consumer'],
  [/\bno persistent volumes available\b/i, 'no-pv-available'],
  [/\bstorageclass(?:\.storage\.k8s\.io)? "[^"]*" not found\b/i, 'storageclass-not-found'],
  [/\bexceeded quota\b|\bforbidden: exceeded\b/i, 'quota-exceeded'],
  [/\bLiveness probe failed\b/i, 'liveness-probe-failed'],
  [/\bReadiness probe failed\b/i, 'readiness-probe-failed'],
  [/\bunbound immediate PersistentVolumeClaims\b/i, 'unbound-pvc'],
  [/\bdidn't match Pod's node affinity\b|\bnode affinity\/selector\b/i, 'node-affinity'],
];

const INSUFFICIENT = /\bInsufficient\s+([a-z0-9./-]+)/gi;
const PROVISIONER = /\bprovisioner\b[\s:=]*["']?([a-z0-9][a-z0-9.-]*(?:\/[a-z0-9.-]+)?)/gi;
const TAINT = /\btaints?\b[^{}\n]*?\{\s*([a-z0-9][a-z0-9./-]*)\s*[:=}]/gi;
const TAINT_PLAIN = /\btaint\s+["']?([a-z0-9][a-z0-9.-]*\/[a-z0-9.-]+)/gi;
const EXIT_CODE = /\bexit(?:\s*code|Code)?[\s:=]+(\d{1,3})\b/gi;
const HTTP_STATUS = /\b(?:HTTP|status(?: code)?|returned|responded with)[\s:=/]*(5\d\d|4\d\d)\b/gi;
const IMAGE = /\bimage\s+["']?([a-z0-9.-]+(?::\d+)?\/[a-z0-9._/-]+(?::[\w.-]+|@sha256:[a-f0-9]+)?)/gi;
const INGRESS_CLASS = /\bingress ?class(?:Name)?\b[\s:=]*["']?([a-z0-9][a-z0-9.-]*)/gi;

/** The registry host of an image reference: `quay.io/org/app:1` → `quay.io`; `nginx:1` → `docker.io`. */
export function imageRegistry(image: string): string {
  const first = image.split('/')[0] ?? '';
  return image.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost')
    ? first.toLowerCase()
    : 'docker.io';
}

/** Key reasons in one text: normalised `category:value` strings. */
export function extractKeyReasons(text: string): string[] {
  const out = new Set<string>();
  for (const [pattern, token] of REASON_WORDS) if (pattern.test(text)) out.add(`reason:${token.toLowerCase()}`);
  for (const m of text.matchAll(INSUFFICIENT))
    out.add(`insufficient:${(m[1] ?? '').toLowerCase().replace(/[.,]$/, '')}`);
  for (const m of text.matchAll(PROVISIONER)) out.add(`provisioner:${(m[1] ?? '').toLowerCase().replace(/\.$/, '')}`);
  for (const m of text.matchAll(TAINT)) out.add(`taint:${(m[1] ?? '').toLowerCase()}`);
  for (const m of text.matchAll(TAINT_PLAIN)) out.add(`taint:${(m[1] ?? '').toLowerCase()}`);
  for (const m of text.matchAll(EXIT_CODE)) if (m[1] !== '0') out.add(`exit-code:${m[1]}`);
  for (const m of text.matchAll(HTTP_STATUS)) out.add(`http:${m[1]}`);
  for (const m of text.matchAll(IMAGE)) out.add(`registry:${imageRegistry(m[1] ?? '')}`);
  for (const m of text.matchAll(INGRESS_CLASS)) out.add(`ingress-class:${(m[1] ?? '').toLowerCase()}`);
  return [...out];
}

const sortedUnique = (values: Iterable<string>) => [...new Set(values)].sort();

export function fingerprintEnvelope(
  envelope: FingerprintSource,
  outcome: { confirmedRootCauseCode?: string } = {},
): Fingerprint {
  const texts = envelope.findings.flatMap((f) => [f.message, ...f.evidence]);
  const top = envelope.rootCause.find((c) => c.code === outcome.confirmedRootCauseCode) ?? envelope.rootCause[0];
  return {
    intent: envelope.routing.intent,
    domain: envelope.routing.domain,
    findingCodes: sortedUnique(envelope.findings.map((f) => f.code)),
    keyReasons: sortedUnique(texts.flatMap(extractKeyReasons)),
    resourceKinds: sortedUnique(envelope.findings.map((f) => canonicalKind(f.resource.kind))),
    rootCauseCode: outcome.confirmedRootCauseCode ?? envelope.rootCause[0]?.code,
    ...(top?.resource ? { rootCauseKind: canonicalKind(top.resource.kind) } : {}),
    ...(top?.impact && top.impact.length > 0 ? { impactCodes: sortedUnique(top.impact.map((i) => i.code)) } : {}),
  };
}

/** Index tokens. Prefixed by category so that a code and a reason can never collide. */
export function fingerprintTokens(fp: Fingerprint): string[] {
  return sortedUnique([
    `intent:${fp.intent}`,
    ...fp.findingCodes.map((c) => `code:${c}`),
    ...fp.keyReasons.map((r) => `r:${r}`),
    ...fp.resourceKinds.map((k) => `kind:${k}`),
    ...(fp.rootCauseCode ? [`root:${fp.rootCauseCode}`] : []),
    ...(fp.rootCauseKind ? [`rootkind:${fp.rootCauseKind}`] : []),
    ...(fp.impactCodes ?? []).map((c) => `impact:${c}`),
  ]);
}
