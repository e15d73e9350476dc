import type { KubeObject } from '../../cluster/types.js';
import type { FindingInput } from '../envelope/findings.js';
import { containerGroups, forEachCrashedContainer, worstFirst } from '../kube/container-groups.js';
import { canSee, describeEvent, findEvents } from '../kube/events.js';
import { EvidenceList, nameList } from '../kube/evidence-list.js';
import { crashLog, parseUnresolvedHost } from '../kube/log-verdicts.js';
import { ownerKey, ownerOf } from '../kube/pod-owners.js';
import { type ContainerView, containers, healthySiblings, podRef, podWhere } from '../kube/pods.js';
import { revisionChanges } from '../kube/revisions.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

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
function pullErrorCore(message: string): string {
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

function platformOf(ctx: AnalyzerContext, nodeName: string | undefined): string | undefined {
  if (!nodeName || !canSee(ctx, 'nodes')) return undefined;
  const node = ctx.objects('nodes').find((n) => n.metadata.name === nodeName);
  if (!node) return undefined;
  const l = node.metadata.labels ?? {};
  const os = l['kubernetes.io/os'] ?? node.status?.nodeInfo?.operatingSystem;
  const arch = l['kubernetes.io/arch'] ?? node.status?.nodeInfo?.architecture;
  return os && arch ? `${os}/${arch}` : undefined;
}

function nodeArch(ctx: AnalyzerContext, nodeName: string | undefined): string | undefined {
  const platform = platformOf(ctx, nodeName);
  return platform ? `node ${nodeName} is ${platform}` : undefined;
}

/** `pod (node n, linux/arm64)`: where each replica landed, which is what differs between failing and healthy ones. */
function placed(ctx: AnalyzerContext, pod: KubeObject): string {
  const platform = platformOf(ctx, pod.spec?.nodeName);
  const where = podWhere(ctx, pod);
  return platform ? `${where.replace(/\)$/, '')}, ${platform})` : where;
}

/** `registry/path:tag` → registry host and the rest; Docker Hub references have no host. */
function splitImage(image: string): { registry: string | undefined; repository: string } {
  const slash = image.indexOf('/');
  const first = slash === -1 ? '' : image.slice(0, slash);
  const isHost = first.includes('.') || first.includes(':') || first === 'localhost';
  return isHost ? { registry: first, repository: image.slice(slash + 1) } : { registry: undefined, repository: image };
}

/** Pods that run the same repository from another registry host: the reference that works, next to the broken one. */
function sameRepositoryElsewhere(ctx: AnalyzerContext, image: string): { pod: KubeObject; image: string }[] {
  const { registry, repository } = splitImage(image);
  const path = repository.replace(/[:@].*$/, '');
  const out: { pod: KubeObject; image: string }[] = [];
  for (const pod of ctx.objects('pods')) {
    for (const c of containers(pod)) {
      const other = String(c.spec?.image ?? '');
      const split = splitImage(other);
      if (c.ready && split.registry !== registry && split.repository.replace(/[:@].*$/, '') === path) {
        out.push({ pod, image: other });
      }
    }
  }
  return out;
}

/** What a failing pull reads: the image, the kubelet's events and the registry's words, and their classification. */
interface Pull {
  image: string;
  events: ReturnType<typeof findEvents>;
  backoff: ReturnType<typeof findEvents>;
  detail: string;
  cause: PullCause;
  badHost: string | undefined;
}

/** Ranks: what fails and the registry's words, then where (nodes, platforms), what works, what changed. */
function pullEvidence(
  ctx: AnalyzerContext,
  group: readonly { pod: KubeObject; c: ContainerView }[],
  pull: Pull,
): { evidence: EvidenceList; healthy: KubeObject[] } {
  const { pod, c } = group[0]!;
  const { image, events, backoff, detail, cause, badHost } = pull;
  const evidence = new EvidenceList()
    .add(0, `container ${c.name}: ${c.waitingReason}, image ${image}`)
    .add(1, detail !== '' && `registry: ${pullErrorCore(detail)}`)
    .add(
      5,
      events[0] ? describeEvent(events[0], ctx.now) : c.waitingMessage && `${c.waitingReason}: ${c.waitingMessage}`,
    )
    .add(6, backoff[0] && describeEvent(backoff[0], ctx.now));
  if (group.length > 1) {
    evidence.add(2, `${group.length} pods affected: ${nameList(group.map((g) => placed(ctx, g.pod)))}`);
  } else if (pod.spec?.nodeName) {
    evidence.add(4, `pod ${placed(ctx, pod)}`);
  }
  if (badHost) {
    evidence.add(2, `registry host ${badHost} does not resolve (no such host)`);
    const working = sameRepositoryElsewhere(ctx, image);
    if (working[0]) {
      evidence.add(
        3,
        `${nameList(
          working.map((w) => podWhere(ctx, w.pod)),
          3,
        )} run${working.length === 1 ? 's' : ''} ${working[0].image} from registry ${splitImage(working[0].image).registry ?? 'docker.io'}`,
      );
    }
  }
  if (cause === 'IMAGE_PULL_UNAUTHORIZED') {
    const secrets = (Array.isArray(pod.spec?.imagePullSecrets) ? pod.spec.imagePullSecrets : [])
      .map((s: { name?: string }) => s.name)
      .filter(Boolean);
    evidence.add(
      2,
      secrets.length > 0
        ? `pod imagePullSecrets: ${secrets.join(', ')} (names only; contents never read)`
        : `pod has no imagePullSecrets (service account ${pod.spec?.serviceAccountName ?? 'default'})`,
    );
  }
  const failing = new Set(group.map((g) => `${g.pod.metadata.namespace}/${g.pod.metadata.name}`));
  const healthy = healthySiblings(ctx, image, failing);
  if (healthy.length > 0) {
    evidence.add(
      3,
      `the same image runs ready on ${nameList(
        healthy.map((p) => placed(ctx, p)),
        4,
      )}`,
    );
  }
  evidence.add(4, revisionChanges(ctx, pod));
  return { evidence, healthy };
}

/** Replicas of one container that cannot pull their image, and why the registry refuses it. */
function pullFailure(ctx: AnalyzerContext, group: readonly { pod: KubeObject; c: ContainerView }[]): FindingInput {
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
  // "no such host" for the registry is the resolver's final answer: the reference names a host that does not exist.
  const lookup = cause === 'IMAGE_PULL_BACKOFF' ? parseUnresolvedHost(detail) : undefined;
  const badHost =
    lookup?.nameDoesNotExist && lookup.host.toLowerCase() === splitImage(image).registry?.toLowerCase()
      ? lookup.host
      : undefined;
  const { evidence, healthy } = pullEvidence(ctx, group, { image, events, backoff, detail, cause, badHost });
  const owner = ownerOf(ctx, pod);
  const platforms = (pods: readonly KubeObject[]) =>
    [...new Set(pods.map((p) => platformOf(ctx, p.spec?.nodeName)).filter((x): x is string => !!x))].sort();
  const failingOn = platforms(group.map((g) => g.pod));
  const workingOn = platforms(healthy).filter((x) => !failingOn.includes(x));
  const why = badHost
    ? `its registry host ${badHost} does not exist (no such host), so the image reference is wrong`
    : cause === 'IMAGE_PLATFORM_MISMATCH' && failingOn.length > 0
      ? `the image has no build for ${failingOn.join(', ')} (node ${nameList(
          [...new Set(group.map((g) => String(g.pod.spec?.nodeName ?? '')))].filter(Boolean),
          3,
        )})${workingOn.length > 0 ? `; replicas on ${workingOn.join(', ')} nodes run it` : ''}`
      : MESSAGES[cause];
  return {
    code: cause,
    analyzer: NAME,
    domain: 'compute',
    severity: 'high',
    resource: podRef(pod),
    message: `Pod ${pod.metadata.name} cannot pull ${image}: ${why}.`,
    evidence: evidence.lines(),
    confidence: badHost ? 0.9 : cause === 'IMAGE_PULL_BACKOFF' ? 0.6 : events[0] || c.waitingMessage ? 0.92 : 0.7,
    related: owner ? [owner] : [],
    remediation: badHost ? ['fix-image-tag', ...REMEDIATION[cause]] : REMEDIATION[cause],
  };
}

/** An image that pulled but whose binary cannot execute ("exec format error") is the same platform mismatch. */
function execFormatErrors(ctx: AnalyzerContext): FindingInput[] {
  const findings: FindingInput[] = [];
  const reported = new Set<string>();
  forEachCrashedContainer(ctx, (pod, c) => {
    const key = `${ownerKey(ctx, pod)}/${c.name}`;
    if (reported.has(key)) return;
    const log = crashLog(ctx, pod, c.name);
    const line = log?.split(/\r?\n/).find((l) => /exec format error/i.test(l));
    if (!line) return;
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
  });
  return findings;
}

export const imagePullAnalyzer: Analyzer = {
  name: NAME,
  domain: 'compute',
  description: 'Images that cannot be pulled or run: tag not found, unauthorized, wrong platform, other pull errors.',
  needs: ['pods', 'events', 'nodes'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    const pulling = (c: ContainerView) => c.waitingReason !== undefined && PULL_REASONS.has(c.waitingReason);
    for (const unordered of containerGroups(ctx, pulling)) findings.push(pullFailure(ctx, worstFirst(unordered)));
    findings.push(...execFormatErrors(ctx));
    return findings;
  },
};
