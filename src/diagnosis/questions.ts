import { clip } from '../limits.js';
import type { Finding, ResourceRef, TriageEnvelope } from '../triage/envelope/index.js';
import { canonicalKind, isClusterScoped, kindLabel, LOG_OWNER_KINDS } from './kinds.js';
import type { UserRequest } from './request.js';
import { describeResource } from './resource-text.js';

/**
 * Questions asked in the incident thread ("show me the logs", "is a pod waiting on this claim?", the prompts the
 * envelope itself suggests) are answered from the incident: what the triage already found, and the one read that
 * answers the rest, aimed at the objects the findings name. A question that names no object is about the incident,
 * so "the logs" are the logs of the pod the findings point at. Pure: the workflow runs the read and posts the answer.
 */

export type IncidentFacts = Pick<TriageEnvelope, 'findings' | 'rootCause' | 'evidence' | 'routing'>;

/** A read aimed at one object or kind, in the session's terms (canonical plural kinds). */
interface ReadTarget {
  verb: 'get' | 'list' | 'logs' | 'events';
  kind: string;
  name?: string;
  namespace?: string;
  previous?: boolean;
  /** What the person sees as the read's title. */
  title: string;
}

export interface QuestionAnswer {
  /** What the findings already say about it, one plain-text line each (most relevant first). */
  facts: string[];
  /** The read that answers the rest, when one can. */
  read?: ReadTarget;
}

const MAX_FACTS = 3;
const MAX_LINE = 300;

const clipped = (text: string) => clip(text, MAX_LINE);

/** Kinds a question's words point at, most specific first. */
const WORD_KINDS: ReadonlyArray<[RegExp, string]> = [
  [/\bingress ?class/, 'ingressclasses'],
  [/\bstorage ?class/, 'storageclasses'],
  [/\bnetwork ?polic/, 'networkpolicies'],
  [/\bconfig ?maps?\b/, 'configmaps'],
  [/\brollouts?\b|\brevisions?\b|\bdeployments?\b/, 'deployments'],
  [/\bclaims?\b|\bpvcs?\b/, 'persistentvolumeclaims'],
  [/\bendpoints?\b/, 'endpoints'],
  [/\bservices?\b/, 'services'],
  [/\broutes?\b/, 'routes'],
  [/\bingress(?:es)?\b/, 'ingresses'],
  [/\bquotas?\b/, 'resourcequotas'],
  [/\battach\w*/, 'volumeattachments'],
  [/\bnodes?\b/, 'nodes'],
  [/\bscheduler\b|\bchanged?\b|\bevents?\b|\bwhat happened\b/, 'events'],
  [
    /\bcontainers?\b|\bcrash\w*|\blogs?\b|\bimages?\b|\bpull\w*|\bliveness\b|\bprobes?\b|\bkill\w*|\bevict\w*|\bpods?\b/,
    'pods',
  ],
];

/** Words that carry no meaning for finding the relevant findings. */
const FILLER = new Set(
  'the a an is are was were does do did has have can could will when where how who which what why this that these those there their with from into onto about show tell me give some any last first still instead another other same they them than then been being such only just each every again they'.split(
    ' ',
  ),
);

function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9_-]+/)
    .filter((w) => w.length >= 4 && !FILLER.has(w));
}

interface IncidentRef extends ResourceRef {
  /** The finding that named it, when one did. */
  finding?: Finding;
}

/** Every object the incident names, most telling first: the top cause and its chain, then the findings in order. */
function incidentRefs(facts: IncidentFacts | undefined, namespace: string): IncidentRef[] {
  if (!facts) return [];
  const refs: IncidentRef[] = [];
  const add = (ref: ResourceRef, finding?: Finding) => {
    const kind = canonicalKind(ref.kind);
    const withNs = { ...ref, kind, namespace: isClusterScoped(kind) ? undefined : (ref.namespace ?? namespace) };
    if (!refs.some((r) => r.kind === kind && r.name === ref.name && r.namespace === withNs.namespace)) {
      refs.push({ ...withNs, ...(finding ? { finding } : {}) });
    }
  };
  const top = facts.rootCause[0];
  if (top) for (const ref of [top.resource, ...(top.chain ?? [])]) add(ref, findingOn(facts.findings, ref));
  for (const f of facts.findings) add(f.resource, f);
  for (const f of facts.findings) {
    if (f.owner) add({ ...f.owner, namespace: f.owner.namespace ?? f.resource.namespace }, f);
    for (const r of f.related) add({ ...r, namespace: r.namespace ?? f.resource.namespace }, f);
  }
  return refs;
}

function findingOn(findings: readonly Finding[], ref: ResourceRef): Finding | undefined {
  const kind = canonicalKind(ref.kind);
  return findings.find((f) => canonicalKind(f.resource.kind) === kind && f.resource.name === ref.name);
}

/** Questions whose answer is what happened: the events, whatever object they are about. */
const ABOUT_EVENTS = /\bscheduler\b|\bwhat (?:does|did) .+ say\b|\bchanged?\b|\bwhat happened\b/;

function kindOf(request: UserRequest, text: string): string | undefined {
  const lower = text.toLowerCase();
  if (ABOUT_EVENTS.test(lower)) return 'events';
  if (request.resource && request.resource.kind !== 'events') return canonicalKind(request.resource.kind);
  return WORD_KINDS.find(([pattern]) => pattern.test(lower))?.[1] ?? request.resource?.kind;
}

/** One line per finding: what it is, on what, and its most telling piece of evidence. */
function factLine(f: Finding): string {
  const evidence = f.evidence[0] ? ` — ${f.evidence[0]}` : '';
  return clipped(`${f.code} on ${describeResource(f.resource)}: ${f.message}${evidence}`);
}

/** The findings that speak to a question, most relevant first; the top cause's when none does more than another. */
function relevantFindings(facts: IncidentFacts | undefined, text: string, kind: string | undefined): Finding[] {
  if (!facts || facts.findings.length === 0) return [];
  const words = wordsOf(text);
  const scored = facts.findings.map((f, index) => {
    const haystack = `${f.code} ${f.message} ${f.evidence.join(' ')} ${f.resource.name}`.toLowerCase();
    const refs = [f.resource, ...(f.owner ? [f.owner] : []), ...f.related];
    let score = words.filter((w) => haystack.includes(w)).length;
    if (kind && refs.some((r) => canonicalKind(r.kind) === kind)) score += 2;
    if (facts.rootCause[0]?.code === f.code) score += 1;
    return { f, score, index };
  });
  const ranked = scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score || a.index - b.index);
  return (ranked.length > 0 ? ranked.map((s) => s.f) : facts.findings.slice(0, 1)).slice(0, MAX_FACTS);
}

/** The pod the incident's logs are about: the top cause's, else the first pod a finding names. */
function podOf(refs: readonly IncidentRef[], name?: string): IncidentRef | undefined {
  const pods = refs.filter((r) => r.kind === 'pods');
  return (name ? pods.find((p) => p.name === name) : undefined) ?? pods[0];
}

/** A crash or a kill is explained by the container that died, not by the one that replaced it. */
function wantsPrevious(text: string, pod: IncidentRef | undefined): boolean {
  if (/\b(?:previous|decisive|before the (?:kill|crash|restart)|crash\w*|killed)\b/i.test(text)) return true;
  return /CRASH|OOM/.test(pod?.finding?.code ?? '');
}

/**
 * How to answer a read-like question from the thread: the facts the triage already has, and a read aimed at the
 * incident's objects. `namespace` is the session's: a read the words do not place elsewhere runs there.
 */
export function answerQuestion(
  request: UserRequest,
  facts: IncidentFacts | undefined,
  namespace: string,
): QuestionAnswer {
  const text = request.raw;
  const refs = incidentRefs(facts, namespace);
  const kind = kindOf(request, text);
  const named = request.resource?.name;
  const factLines = relevantFindings(facts, text, kind).map(factLine);
  const ns = (k: string, ref?: { namespace?: string | undefined }) =>
    isClusterScoped(k) ? undefined : (request.namespace ?? ref?.namespace ?? namespace);

  if (request.verb === 'logs') {
    const pod = podOf(refs, request.resource?.kind === 'pods' ? named : undefined);
    const name = pod?.name ?? (request.resource?.kind === 'pods' ? named : undefined);
    // No pod is named, but a workload or Service is: read a pod it selects, the unready one first, as kubectl does.
    const owner = name ? undefined : LOG_OWNER_KINDS.map((k) => refs.find((r) => r.kind === k)).find(Boolean);
    if (!name && owner) {
      return {
        facts: factLines,
        read: {
          verb: 'logs',
          kind: owner.kind,
          name: owner.name,
          namespace: ns(owner.kind, owner),
          title: `logs of a pod of ${kindLabel(owner.kind)} ${owner.name} (not ready first)`,
        },
      };
    }
    if (!name) {
      return {
        facts: [...factLines, 'No pod is named in the findings; here are the pods, name one for its logs.'],
        read: { verb: 'list', kind: 'pods', namespace: ns('pods'), title: 'pods (to pick one for its logs)' },
      };
    }
    const previous = wantsPrevious(text, pod);
    return {
      facts: factLines,
      read: {
        verb: 'logs',
        kind: 'pods',
        name,
        namespace: ns('pods', pod),
        ...(previous ? { previous: true } : {}),
        title: `logs ${name}${previous ? ' (previous container)' : ''}`,
      },
    };
  }

  const ref = kind
    ? ((named ? refs.find((r) => r.kind === kind && r.name === named) : undefined) ??
      (named ? undefined : refs.find((r) => r.kind === kind)))
    : undefined;
  if (request.verb === 'events' || kind === 'events') {
    const target =
      ref ??
      (request.resource && request.resource.kind !== 'events'
        ? refs.find((r) => r.kind === canonicalKind(request.resource?.kind ?? ''))
        : undefined);
    const name = target?.name ?? (kind !== 'events' ? named : undefined);
    return {
      facts: factLines,
      read: {
        verb: 'events',
        kind: 'events',
        ...(name ? { name } : {}),
        namespace: ns('events', target),
        title: name ? `events of ${kindLabel(target?.kind ?? kind ?? 'pods')} ${name}` : 'events',
      },
    };
  }
  if (!kind) return { facts: factLines };
  // "Which StorageClass is the default?", "are the pending pods …": a choice among many is a list, not one object.
  const many = !named && (/^\s*which\b/i.test(text) || new RegExp(`\\b${kind}\\b`, 'i').test(pluralWords(text)));
  const name = many ? undefined : (ref?.name ?? named);
  if (name) {
    return {
      facts: factLines,
      read: {
        verb: 'get',
        kind,
        name,
        ...(ns(kind, ref) ? { namespace: ns(kind, ref) } : {}),
        title: `get ${kind} ${name}`,
      },
    };
  }
  return {
    facts: factLines,
    read: { verb: 'list', kind, ...(ns(kind) ? { namespace: ns(kind) } : {}), title: `get ${kind}` },
  };
}

/** The plural kind names a question uses ("pods", "nodes"), as canonical plurals. */
function pluralWords(text: string): string {
  return text
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((w) => w.length > 3 && w.endsWith('s') && canonicalKind(w) === w)
    .join(' ');
}

/** How to confirm a cause: the reads that test it (the same the hypothesis button runs). */
function confirmingReads(ref: ResourceRef, namespace: string): string[] {
  const kind = canonicalKind(ref.kind);
  const nsFlag = isClusterScoped(kind) ? '' : ` -n ${ref.namespace ?? namespace}`;
  // Whether a Secret exists is enough; what is in it is nobody's evidence.
  if (kind === 'secrets') return [`kubectl get secret ${ref.name}${nsFlag} -o name`];
  return [
    `kubectl get ${kind} ${ref.name}${nsFlag}`,
    `kubectl get events${nsFlag} --field-selector involvedObject.name=${ref.name}`,
    ...(kind === 'pods' ? [`kubectl logs ${ref.name}${nsFlag} --previous`] : []),
  ];
}

/**
 * "Explain PVC_STORAGECLASS_NOT_FOUND for PersistentVolumeClaim data-0 and how to confirm it": the ranked cause it
 * names (or the top one), what the findings show, the causal path, and how to test it. Plain-text lines.
 */
export function explainCause(text: string, facts: IncidentFacts | undefined, namespace: string): string[] {
  if (!facts) return ['No triage has reported on this session yet; its findings are what I explain.'];
  const codes = new Set([...facts.rootCause.map((c) => c.code), ...facts.findings.map((f) => f.code)]);
  const named = [...text.matchAll(/\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b/g)].map((m) => m[1] as string);
  const asked = named.find((c) => codes.has(c));
  const unknown = asked === undefined ? named[0] : undefined;
  const cause = unknown
    ? undefined
    : (facts.rootCause.find((c) => c.code === asked) ?? (asked ? undefined : facts.rootCause[0]));
  const findings = unknown ? [] : facts.findings.filter((f) => f.code === (asked ?? cause?.code));
  if (!cause && findings.length === 0) {
    return [
      facts.findings.length === 0
        ? 'The triage found nothing wrong in what it could read, so there is no cause to explain.'
        : `${unknown ?? 'That'} is not among this incident's findings. What the triage found: ${facts.findings
            .slice(0, MAX_FACTS)
            .map((f) => f.code)
            .join(', ')}.`,
    ];
  }
  const lines: string[] = [];
  if (cause) {
    lines.push(
      clip(
        `${cause.code} (ranked #${cause.rank}, ${Math.round(cause.confidence * 100)}%) on ${describeResource(cause.resource)}: ${cause.summary}`,
        600,
      ),
    );
    if (cause.chain && cause.chain.length > 0) {
      lines.push(clipped(`How it shows: ${[cause.resource, ...cause.chain].map(describeResource).join(' → ')}`));
    }
  }
  for (const f of findings.slice(0, MAX_FACTS)) {
    lines.push(clipped(`Seen: ${f.message}`));
    for (const e of f.evidence.slice(0, 2)) lines.push(clipped(`  ${e}`));
  }
  const target = cause?.resource ?? findings[0]?.resource;
  if (target) {
    lines.push(`How to confirm it: ${confirmingReads(target, namespace).join('; ')}.`);
  }
  if (cause) {
    lines.push(
      `Test it with the Test #${cause.rank} button (or reply \`hypothesis ${cause.rank}\`), then reply \`confirmed\` if it holds.`,
    );
  }
  return lines;
}

/** "Re-run the triage once the logs can be read": what could not be read and why, and how to run it again. */
export function retriageAnswer(facts: IncidentFacts | undefined, namespace: string, intent: string): string[] {
  if (!facts)
    return [`No triage has reported yet; it runs when the session starts (\`/triage ${intent} in ${namespace}\`).`];
  const { evidence } = facts;
  const percent = (v: number) => `${Math.round(v * 100)}%`;
  if (evidence.missing.length === 0) {
    return [
      `The triage read everything the ${facts.routing.templateId} checks need (${percent(evidence.completeness)}, needs ${percent(evidence.threshold)}): a re-run would read the same.`,
      'Once a fix is applied, reply `resolved` (or press Resolved): calmops triages again and judges the fix.',
    ];
  }
  return [
    `The triage read ${percent(evidence.completeness)} of what it needs (needs ${percent(evidence.threshold)}). Not read:`,
    ...evidence.missing.map((type) => {
      const gap = evidence.gaps.find((g) => g.type === type);
      return clipped(`• ${type}${gap ? `: ${gap.reason} (${gap.detail})` : ''}`);
    }),
    `Once they can be read, start it again with \`/triage ${facts.routing.intent} in ${namespace}\`. Meanwhile ask me for a read (for example \`kubectl get events\`) and it counts as evidence here.`,
  ];
}
