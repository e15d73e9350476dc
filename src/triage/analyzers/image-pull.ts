import type { Analyzer, AnalyzerContext } from '../analyzer.js';
import type { FindingInput } from '../findings.js';
import { canSee, describeEvent, findEvents } from './events.js';
import {
  type ContainerView,
  containerGroups,
  containers,
  crashLog,
  namespacePods,
  ownerKey,
  ownerOf,
  podRef,
} from './pods.js';

const NAME = 'image-pull';

const PULL_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull']);

export type PullCause =
  | 'IMAGE_PLATFORM_MISMATCH'
  | 'IMAGE_PULL_UNAUTHORIZED'
  | 'IMAGE_NOT_FOUND'
  | 'IMAGE_PULL_BACKOFF';

/** Classify a pull error as containerd, CRI-O and Docker word it. Order matters: platform errors also say "not found". */
export function classifyPullError(message: string): PullCause {
  if (
    /no match(ing)? (manifest )?for (platform|linux|windows)|no image found in manifest list for architecture|no matching manifest for/i.test(
      message,
    )
  )
    return 'IMAGE_PLATFORM_MISMATCH';
  if (
    /unauthorized|authentication required|pull access denied|insufficient_scope|denied: |403 Forbidden|401|access to the requested resource is not authorized/i.test(
      message,
    )
  )
    return 'IMAGE_PULL_UNAUTHORIZED';
  if (/manifest unknown|not found|name unknown|NotFound|does not exist/i.test(message)) return 'IMAGE_NOT_FOUND';
  return 'IMAGE_PULL_BACKOFF';
}

/** The registry's own words, without the runtime's repeated "failed to pull … failed to resolve …" preamble. */
export function pullErrorCore(message: string): string {
  return message
    .replace(/^Failed to pull image "[^"]+":\s*/i, '')
    .replace(/rpc error: code = \w+ desc = /gi, '')
    .replace(/failed to pull and unpack image "[^"]+":\s*/gi, '')
    .replace(/failed to resolve reference "[^"]+":\s*/gi, '')
    .trim();
}

const MESSAGES: Readonly<Record<PullCause, string>> = {
  IMAGE_NOT_FOUND: 'the image or tag does not exist in the registry',
  IMAGE_PULL_UNAUTHORIZED: 'the registry refuses the pull (missing or wrong pull credentials)',
  IMAGE_PLATFORM_MISMATCH: "the image has no build for the node's OS/architecture",
  IMAGE_PULL_BACKOFF: 'the pull keeps failing',
};

const REMEDIATION: Readonly<Record<PullCause, string[]>> = {
  IMAGE_NOT_FOUND: ['fix-image-tag'],
  IMAGE_PULL_UNAUTHORIZED: ['add-pull-secret'],
  IMAGE_PLATFORM_MISMATCH: ['build-multiarch-image', 'pin-node-arch'],
  IMAGE_PULL_BACKOFF: ['check-registry-access'],
};

function nodeArch(ctx: AnalyzerContext, nodeName: string | undefined): string | undefined {
  if (!nodeName || !canSee(ctx, 'nodes')) return undefined;
  const node = ctx.objects('nodes').find((n) => n.metadata.name === nodeName);
  if (!node) return undefined;
  const l = node.metadata.labels ?? {};
  const os = l['kubernetes.io/os'] ?? node.status?.nodeInfo?.operatingSystem;
  const arch = l['kubernetes.io/arch'] ?? node.status?.nodeInfo?.architecture;
  return os && arch ? `node ${nodeName} is ${os}/${arch}` : undefined;
}

export const imagePullAnalyzer: Analyzer = {
  name: NAME,
  domain: 'compute',
  description: 'Images that cannot be pulled or run: tag not found, unauthorized, wrong platform, other pull errors.',
  needs: ['pods', 'events', 'nodes'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    const pulling = (c: ContainerView) => c.waitingReason !== undefined && PULL_REASONS.has(c.waitingReason);
    for (const group of containerGroups(ctx, pulling)) {
      const { pod, c } = group[0]!;
      const image = String(c.spec?.image ?? c.status?.image ?? '');
      const events = findEvents(ctx, {
        kind: 'Pod',
        name: pod.metadata.name,
        namespace: ctx.namespace,
        reasons: ['Failed'],
      }).filter((e) => /pull|image/i.test(e.message) && !/^Error: (ErrImagePull|ImagePullBackOff)$/.test(e.message));
      const backoff = findEvents(ctx, {
        kind: 'Pod',
        name: pod.metadata.name,
        namespace: ctx.namespace,
        reasons: ['BackOff'],
      });
      const detail = events[0]?.message ?? c.waitingMessage ?? '';
      const cause: PullCause = c.waitingReason === 'InvalidImageName' ? 'IMAGE_NOT_FOUND' : classifyPullError(detail);
      const evidence = [`container ${c.name}: ${c.waitingReason}, image ${image}`];
      if (detail !== '') evidence.push(`registry: ${pullErrorCore(detail)}`);
      if (events[0]) evidence.push(describeEvent(events[0], ctx.now));
      else if (c.waitingMessage) evidence.push(`${c.waitingReason}: ${c.waitingMessage}`);
      if (cause === 'IMAGE_PLATFORM_MISMATCH') {
        const arch = nodeArch(ctx, pod.spec?.nodeName);
        if (arch) evidence.push(arch);
      }
      if (cause === 'IMAGE_PULL_UNAUTHORIZED') {
        const secrets = (Array.isArray(pod.spec?.imagePullSecrets) ? pod.spec.imagePullSecrets : [])
          .map((s: { name?: string }) => s.name)
          .filter(Boolean);
        evidence.push(
          secrets.length > 0
            ? `pod imagePullSecrets: ${secrets.join(', ')} (names only; contents never read)`
            : `pod has no imagePullSecrets (service account ${pod.spec?.serviceAccountName ?? 'default'})`,
        );
      }
      if (backoff[0]) evidence.push(describeEvent(backoff[0], ctx.now));
      if (group.length > 1) evidence.push(`${group.length} pods affected`);
      const owner = ownerOf(ctx, pod);
      findings.push({
        code: cause,
        analyzer: NAME,
        domain: 'compute',
        severity: 'high',
        resource: podRef(pod),
        message: `Pod ${pod.metadata.name} cannot pull ${image}: ${MESSAGES[cause]}.`,
        evidence,
        confidence: cause === 'IMAGE_PULL_BACKOFF' ? 0.6 : events[0] || c.waitingMessage ? 0.92 : 0.7,
        related: owner ? [owner] : [],
        remediation: REMEDIATION[cause],
      });
    }
    // An image that pulled but whose binary cannot execute ("exec format error") is the same platform mismatch.
    const reported = new Set<string>();
    for (const pod of namespacePods(ctx)) {
      for (const c of containers(pod)) {
        if (c.restartCount === 0 && c.waitingReason !== 'CrashLoopBackOff') continue;
        const key = `${ownerKey(ctx, pod)}/${c.name}`;
        if (reported.has(key)) continue;
        const log = crashLog(ctx, pod, c.name);
        const line = log?.split(/\r?\n/).find((l) => /exec format error/i.test(l));
        if (!line) continue;
        reported.add(key);
        const owner = ownerOf(ctx, pod);
        const arch = nodeArch(ctx, pod.spec?.nodeName);
        findings.push({
          code: 'IMAGE_PLATFORM_MISMATCH',
          analyzer: NAME,
          domain: 'compute',
          severity: 'high',
          resource: podRef(pod),
          message: `Container ${c.name} of pod ${pod.metadata.name} runs a binary built for another CPU architecture.`,
          evidence: [`log: ${line.trim()}`, `image ${c.spec?.image}`, ...(arch ? [arch] : [])],
          confidence: 0.88,
          related: owner ? [owner] : [],
          remediation: REMEDIATION.IMAGE_PLATFORM_MISMATCH,
        });
      }
    }
    return findings;
  },
};
