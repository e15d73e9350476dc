import type { Domain } from '../triage/envelope/index.js';
import { canonicalKind, domainOfKind, isKnownKind } from './kinds.js';
import type { RequestTarget, UserRequest } from './request.js';
import type { ToolClass } from './state-machine.js';

/**
 * Plain-language requests from the incident thread ("just delete the pod", "show me the logs", "hypothesis 2").
 * The rules are deliberately conservative: a destructive word that is not negated wins over a gentler reading,
 * because a false "dangerous" costs a sentence of guidance and a false "read" could cost an outage.
 */

const NEGATION =
  /\b(?:don'?t|do not|never|not|no need to|shouldn'?t|should not|won'?t|without|avoid|stop)\s+(?:\S+\s+){0,2}$/;
/** Questions about the past or about facts ("why did the pod get deleted?") are reads, not requests to act. */
const FACT_QUESTION = /^(?:what|why|which|when|where|who|whose|did|has|have|was|were)\b/;
/** A question about the cluster ("is a pod waiting on this claim?"): answered with what calmops can read and knows. */
const CLUSTER_WORDS =
  '\\b(?:pods?|nodes?|containers?|claims?|volumes?|services?|endpoints?|images?|routes?|ingress\\w*|quotas?|(?:network)?polic\\w*|configmaps?|dns|names?|ports?|rollouts?|revisions?|crash\\w*|deployments?|storage\\w*|events?|logs?|namespaces?|scheduler|probes?)\\b';
const QUESTION = new RegExp(
  `^(?:is|are|was|were|does|do|did|has|have|can|could|will|when|where|how|who|which|what|why)\\b.*${CLUSTER_WORDS}|${CLUSTER_WORDS}.*\\?\\s*$`,
);

const MULTIWORD_KINDS: ReadonlyArray<[RegExp, string]> = [
  [/\bpersistent ?volume ?claims?\b/, 'persistentvolumeclaims'],
  [/\bpersistent ?volumes?\b/, 'persistentvolumes'],
  [/\bstorage ?class(?:es)?\b/, 'storageclasses'],
  [/\bingress ?class(?:es)?\b/, 'ingressclasses'],
  [/\bstateful ?sets?\b/, 'statefulsets'],
  [/\bdaemon ?sets?\b/, 'daemonsets'],
  [/\breplica ?sets?\b/, 'replicasets'],
  [/\bconfig ?maps?\b/, 'configmaps'],
  [/\bnetwork ?polic(?:y|ies)\b/, 'networkpolicies'],
  [/\bservice ?accounts?\b/, 'serviceaccounts'],
  [/\bcluster ?operators?\b/, 'clusteroperators'],
  [/\bmachine ?config ?pools?\b/, 'machineconfigpools'],
];

const STOP_WORDS = new Set([
  'the',
  'a',
  'an',
  'it',
  'its',
  'this',
  'that',
  'these',
  'those',
  'to',
  'in',
  'on',
  'of',
  'for',
  'from',
  'and',
  'or',
  'with',
  'now',
  'please',
  'again',
  'all',
  'every',
  'each',
  'them',
  'there',
  'is',
  'are',
  'be',
  'back',
  'down',
  'up',
  'logs',
  'log',
  'events',
  'namespace',
  'ns',
  'project',
  'so',
  'then',
  'first',
  'quickly',
  'just',
  'zero',
]);

const KEYWORD_DOMAINS: ReadonlyArray<[RegExp, Domain]> = [
  [/\b(?:pvc|pv|volume|disk|ceph|osd|rbd|csi|mount|storage|provision\w*|iops)\b/, 'storage'],
  [
    /\b(?:dns|ingress|route|service|svc|network\w*|5\d\d|latency|tls|cert\w*|endpoint\w*|load ?balancer)\b/,
    'networking',
  ],
  [/\b(?:pod|node|cpu|memory|oom\w*|crash\w*|image|deployment|schedul\w*|container|replica\w*|kubelet)\b/, 'compute'],
  [/\b(?:operator|clusterversion|upgrade|etcd|api ?server|machine ?config|quota|rbac|namespace)\b/, 'platform'],
];

const K8S_NAME = /^[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?$/;

function looksLikeName(word: string | undefined): word is string {
  return word !== undefined && K8S_NAME.test(word) && !STOP_WORDS.has(word) && !isKnownKind(word);
}

function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[?!,;:()"']/g, ' ')
    .split(/\s+/)
    .map((w) => w.replace(/\.$/, ''))
    .filter(Boolean);
}

/**
 * A word after a kind is a name when it looks like one (`web-7f9c`, `db-0`) or when the sentence treats it as one:
 * it ends the clause or is followed by where it lives ("deployment web in shop"). "pod keeps restarting" is not.
 */
function isLikelyName(word: string, token: string | undefined, following: string | undefined): boolean {
  if (/[-0-9.]/.test(word)) return true;
  if (NOT_NAMES.has(word)) return false;
  if (token && /[,.;:!?]$/.test(token)) return true;
  // "the pod waiting on this claim", "pods evicted for memory": a verb form followed by its object is no name, while
  // "deployment billing in shop" names one.
  if (/(?:ing|ed)$/.test(word)) return following === undefined || /^(?:in|-n|from|please|now)$/.test(following);
  return following === undefined || /^(?:in|on|from|to|-n|at|for|please|now)$/.test(following);
}

/** Words that follow a kind in questions ("pods ready", "ingress class") and never name the object. */
const NOT_NAMES = new Set(['ready', 'ran', 'run', 'class', 'classes', 'still', 'that', 'which', 'who', 'have', 'has']);

function extractTarget(text: string): RequestTarget | undefined {
  const lower = text.toLowerCase();
  const slashed = lower.match(/\b([a-z][a-z.]*)\/([a-z0-9][-a-z0-9.]*[a-z0-9]|[a-z0-9])\b/);
  if (slashed?.[1] && slashed[2] && isKnownKind(slashed[1])) {
    return { kind: canonicalKind(slashed[1]), name: slashed[2] };
  }
  for (const [pattern, kind] of MULTIWORD_KINDS) {
    const m = pattern.exec(lower);
    if (m) {
      const after = words(lower.slice(m.index + m[0].length))[0];
      const before = words(lower.slice(0, m.index)).pop();
      if (looksLikeName(after)) return { kind, name: after };
      if (looksLikeName(before) && /[-0-9]/.test(before)) return { kind, name: before };
      return { kind };
    }
  }
  // Punctuation is kept on the tokens here: "the pod, then…" has no pod name.
  const list = lower.split(/\s+/).filter(Boolean);
  const bareWord = (token: string | undefined) => token?.replace(/^["'`(]+|["'`),.;:!?]+$/g, '');
  for (let i = 0; i < list.length; i++) {
    const token = list[i] as string;
    const word = bareWord(token) as string;
    if (!isKnownKind(word) || STOP_WORDS.has(word) || word === 'volume') continue;
    const kind = canonicalKind(word);
    const next = bareWord(list[i + 1]);
    const prev = bareWord(list[i - 1]);
    if (
      !/[,.;:!?]$/.test(token) &&
      looksLikeName(next) &&
      kind !== 'events' &&
      isLikelyName(next, list[i + 1], list[i + 2])
    ) {
      return { kind, name: next };
    }
    if (looksLikeName(prev) && /[-0-9]/.test(prev)) return { kind, name: prev };
    return { kind };
  }
  if (/\bvolumes?\b/.test(lower)) return { kind: 'persistentvolumes' };
  return undefined;
}

function extractNamespace(text: string): string | undefined {
  const lower = text.toLowerCase();
  const patterns = [
    /(?:^|\s)-n\s+([a-z0-9][-a-z0-9]*)/,
    /\b(?:in|from|on)\s+(?:the\s+)?(?:namespace|ns|project)\s+["'`]?([a-z0-9][-a-z0-9]*)/,
    /\b(?:namespace|ns|project)[:=]\s*["'`]?([a-z0-9][-a-z0-9]*)/,
    /\b(?:in|from|on)\s+(?:the\s+)?["'`]?([a-z0-9][-a-z0-9]*)["'`]?\s+(?:namespace|ns|project)\b/,
  ];
  for (const pattern of patterns) {
    const m = pattern.exec(lower);
    if (m?.[1] && !STOP_WORDS.has(m[1])) return m[1];
  }
  return undefined;
}

function keywordDomain(text: string): Domain | undefined {
  const lower = text.toLowerCase();
  for (const [pattern, domain] of KEYWORD_DOMAINS) if (pattern.test(lower)) return domain;
  return undefined;
}

/**
 * A verb counts as a request only where a request would put it: at the start of a clause or after words that ask
 * for an action ("please", "can you", "let's", "just"). "The pod keeps restarting" describes; "restart it" asks.
 */
const ACT_PREFIX =
  "(?:^|[.!;,]\\s*|\\b(?:please|pls|can you|could you|would you|can we|could we|shall we|let'?s|lets|let me|we should|should we|should i|i'?ll|i will|i want to|i'?d like to|i'?m going to|gonna|going to|need to|have to|must|go ahead and|just|try to|try|then|and|or|maybe|quickly|now|we can|i can)\\s+)";

function asRequest(pattern: RegExp): RegExp {
  return new RegExp(`${ACT_PREFIX}(?:${pattern.source})`, pattern.flags);
}

/** The first match of `pattern` that is not preceded by a negation ("don't delete"). */
function unnegated(text: string, pattern: RegExp): RegExpExecArray | undefined {
  const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
  for (const m of text.matchAll(global)) {
    const before = text.slice(Math.max(0, m.index - 30), m.index);
    if (!NEGATION.test(before)) return m as RegExpExecArray;
  }
  return undefined;
}

interface VerbPattern {
  pattern: RegExp;
  verb: string;
  toolClass: ToolClass;
  reason?: string;
  kind?: string;
}

const DANGEROUS: readonly VerbPattern[] = [
  { pattern: /\bforce[- ]?delet\w*/, verb: 'delete', toolClass: 'destructive', reason: 'forced deletion' },
  {
    pattern: /\b(?:delete|deleting|remove|removing|kill|nuke|destroy|wipe|purge|terminate|evict|recreate)\b/,
    verb: 'delete',
    toolClass: 'destructive',
    reason: 'deletes objects',
  },
  { pattern: /\bdrain\w*\b/, verb: 'drain', toolClass: 'destructive', reason: 'evicts every pod', kind: 'nodes' },
  { pattern: /\bcordon\b/, verb: 'cordon', toolClass: 'destructive', reason: 'stops scheduling', kind: 'nodes' },
  { pattern: /\btaint\b/, verb: 'taint', toolClass: 'destructive', reason: 'changes where pods run', kind: 'nodes' },
  {
    pattern:
      /\b(?:reboot|restart|bounce|power ?cycle)\s+(?:the\s+|that\s+)?(?:worker\s+|master\s+)?(?:node|host|machine|server)s?\b/,
    verb: 'reboot',
    toolClass: 'destructive',
    reason: 'reboots a node',
    kind: 'nodes',
  },
  {
    pattern: /\bscal\w*\b[^.]*?\b(?:to|down to|at)\s+(?:0|zero)\b/,
    verb: 'scale',
    toolClass: 'destructive',
    reason: 'scales to zero replicas (takes the workload offline)',
  },
  {
    pattern: /\b(?:exec|shell|ssh|rsh)\s+(?:in(?:to)?|onto|on)\b|\b(?:open|get)\s+a\s+shell\b|\bssh\b/,
    verb: 'exec',
    toolClass: 'inspect',
    reason: 'opens a live session inside a container or host',
  },
  {
    pattern: /\bport[- ]?forward\w*/,
    verb: 'port-forward',
    toolClass: 'inspect',
    reason: 'opens a tunnel into the cluster',
  },
  { pattern: /\bdebug\s+(?:pod|container|node)\b/, verb: 'debug', toolClass: 'inspect', reason: 'starts a debug pod' },
];

const WRITES: readonly VerbPattern[] = [
  {
    pattern: /\b(?:rollout|roll out)\s+restart\b|\brestart\w*\b|\bbounce\b|\bredeploy\w*\b/,
    verb: 'rollout restart',
    toolClass: 'write',
  },
  { pattern: /\broll(?:ing)?[- ]?back\b|\brollback\b|\bundo\b|\brevert\b/, verb: 'rollout undo', toolClass: 'write' },
  { pattern: /\bscal(?:e|ing)\b/, verb: 'scale', toolClass: 'write' },
  { pattern: /\b(?:increase|decrease|raise|lower|bump|double|resize|expand)\b/, verb: 'patch', toolClass: 'write' },
  { pattern: /\bpatch\w*\b/, verb: 'patch', toolClass: 'write' },
  { pattern: /\bapply\b/, verb: 'apply', toolClass: 'write' },
  { pattern: /\bedit\b/, verb: 'edit', toolClass: 'write' },
  { pattern: /\bset\s+(?:the\s+)?(?:image|env|resources?|limits?|requests?)\b/, verb: 'set', toolClass: 'write' },
  { pattern: /\b(?:change|modify|update|upgrade|downgrade|pin|switch)\s+\w/, verb: 'patch', toolClass: 'write' },
  { pattern: /\blabel\b/, verb: 'label', toolClass: 'write' },
  { pattern: /\bannotate\b/, verb: 'annotate', toolClass: 'write' },
  { pattern: /\bexpose\b/, verb: 'expose', toolClass: 'write' },
  { pattern: /\b(?:create|add)\b/, verb: 'create', toolClass: 'write' },
  { pattern: /\buncordon\b/, verb: 'uncordon', toolClass: 'write', kind: 'nodes' },
  { pattern: /\bfix\s+(?:it|this|that|the)\b|\bjust fix\b/, verb: 'apply', toolClass: 'write' },
];

const READS: ReadonlyArray<{ pattern: RegExp; verb: string }> = [
  {
    // "memory" alone is RAM ("which container hit its memory limit?"); incident memory is asked for in these words.
    pattern:
      /\b(?:similar|seen (?:this|it|that|something like this)(?: \w+)? before|happened before|past incidents?|previous incidents?|earlier incidents?|(?:operational|incident|our) memory|search (?:the )?memory)\b/,
    verb: 'search-memory',
  },
  { pattern: /\blogs?\b/, verb: 'logs' },
  { pattern: /\bevents?\b/, verb: 'events' },
  { pattern: /\b(?:cpu|memory usage|resource usage|top)\b/, verb: 'top' },
  { pattern: /\b(?:describe|details?)\b/, verb: 'describe' },
  {
    pattern:
      /\b(?:show|list|get|check|display|see|look|view|tail|fetch|print|inspect|status|investigate|dig|what|why|which|how many)\b/,
    verb: 'get',
  },
];

function base(text: string, kind: UserRequest['kind'], verb: string): UserRequest {
  const target = extractTarget(text);
  return {
    kind,
    verb,
    resource: target,
    namespace: extractNamespace(text),
    allNamespaces: /\ball namespaces\b|\bevery namespace\b|\bcluster[- ]wide\b/.test(text.toLowerCase()),
    domain: (target ? domainOfKind(target.kind) : undefined) ?? keywordDomain(text),
    source: 'natural-language',
    reasons: [],
    escalation: false,
    malformed: false,
    raw: text,
  };
}

const ORDINALS: Record<string, number> = {
  first: 1,
  '1st': 1,
  second: 2,
  '2nd': 2,
  third: 3,
  '3rd': 3,
  fourth: 4,
  '4th': 4,
  fifth: 5,
  '5th': 5,
  top: 1,
};

function requestFromVerb(text: string, match: VerbPattern): UserRequest {
  const request = base(
    text,
    match.toolClass === 'write' ? 'write' : match.toolClass === 'read' ? 'read' : 'dangerous',
    match.verb,
  );
  request.toolClass = match.toolClass;
  if (match.reason) request.reasons.push(match.reason);
  if (match.kind && (!request.resource || request.resource.kind !== match.kind)) {
    const named = text
      .toLowerCase()
      .match(new RegExp(`\\b${match.verb}\\w*\\s+(?:the\\s+)?(?:node\\s+)?([a-z0-9][-a-z0-9.]*[a-z0-9])`));
    const name = named?.[1];
    request.resource = looksLikeName(name) ? { kind: match.kind, name } : { kind: match.kind };
    request.domain = domainOfKind(match.kind);
  }
  const replicas = text.toLowerCase().match(/\b(?:to|at)\s+(\d+)\s*(?:replicas?|pods?|instances?)?\b/);
  if (match.verb === 'scale')
    request.replicas = replicas?.[1] ? Number(replicas[1]) : match.toolClass === 'destructive' ? 0 : undefined;
  return request;
}

/** Classifies a message that holds no command line. */
/** Words that steer the diagnosis itself: break-glass, a handoff, a confirmed cause, an explanation, a re-run. */
function steeringPhrase(text: string, lower: string): UserRequest | undefined {
  if (
    /\bbreak[\s-]?glass\b|\bemergency\s+(?:override|access|mode)\b|\b(?:override|bypass)\s+(?:the\s+)?(?:workflow|gate|block|rules?|checks?|process)\b|\bskip\s+(?:the\s+)?(?:diagnos\w*|workflow|process|checks?|gathering|analysis|evidence)\b|\b(?:give|grant)\s+me\s+(?:cluster-?)?admin\b|\bneed\s+(?:cluster-?)?admin\b/.test(
      lower,
    )
  ) {
    const request = base(text, 'break-glass', 'break-glass');
    request.escalation = true;
    request.reasons.push('asks to override the diagnostic workflow');
    return request;
  }

  const handoff = lower.match(
    /\b(consult|ask|bring in|call in|loop in|hand(?: it)? (?:off|over) to|handoff to|escalate to|page|get)\s+(?:the\s+|a\s+)?(storage|compute|network(?:ing)?|platform)(?:\s+(specialist|expert|team|sme|on-?call|folks|people))?\b/,
  );
  if (handoff?.[2] && (handoff[3] || /consult|bring in|loop in|hand|handoff/.test(handoff[1] ?? ''))) {
    const request = base(text, 'handoff', 'handoff');
    const domain = handoff[2].startsWith('network') ? 'networking' : (handoff[2] as Domain);
    request.handoffDomain = domain;
    request.domain = domain;
    return request;
  }

  if (
    /\b(?:confirm(?:ed|s)?\s+(?:the\s+)?(?:root\s+cause|hypothesis|theory|cause)|root\s+cause\s+(?:is\s+)?confirmed|that'?s\s+(?:the\s+)?(?:root\s+)?cause|hypothesis\s+(?:is\s+)?confirmed)\b|^confirmed[.!]?$/.test(
      lower,
    ) &&
    !NEGATION.test(lower.slice(0, Math.max(0, lower.search(/confirm|that'?s|root/))))
  ) {
    const request = base(text, 'confirm-root-cause', 'confirm-root-cause');
    const rank = lower.match(/\b(?:hypothesis|theory|cause)\s*#?\s*(\d+)\b/);
    if (rank?.[1]) request.hypothesisRank = Number(rank[1]);
    return request;
  }

  // Questions about the diagnosis itself are answered from what calmops found, never taken for a request to act.
  if (
    /^(?:please\s+)?(?:explain|tell me (?:about|more about)|what (?:is|does) [A-Z][A-Z0-9_]{3,} mean)\b/i.test(
      text.trim(),
    )
  ) {
    const request = base(text, 'read', 'explain');
    request.toolClass = 'read';
    // An explanation reads nothing, so naming a Secret in it asks for no Secret.
    delete request.resource;
    return request;
  }
  if (/^(?:please\s+)?(?:re-?run|run .* again|repeat) (?:the\s+)?(?:[\w-]+\s+)?(?:triage|check)/.test(lower)) {
    const request = base(text, 'read', 'retriage');
    request.toolClass = 'read';
    return request;
  }
  return undefined;
}

/** A hypothesis picked by its rank, or a fix reported as done. */
function progressPhrase(text: string, lower: string): UserRequest | undefined {
  const ranked =
    lower.match(/\b(?:hypothesis|theory|cause|option)\s*#?\s*(\d+)\b/) ??
    lower.match(
      /\b(?:go|going|let'?s go|try)\s+with\s+(?:the\s+)?(first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th|top)\b/,
    );
  if (ranked?.[1]) {
    const request = base(text, 'hypothesis', 'hypothesis');
    request.hypothesisRank = /^\d+$/.test(ranked[1]) ? Number(ranked[1]) : ORDINALS[ranked[1]];
    return request;
  }

  const negatedResolution = /\b(?:not|n't|never|still)\b[^.]{0,20}\b(?:resolved|fixed|recovered|working|good)\b/.test(
    lower,
  );
  if (
    !negatedResolution &&
    !lower.endsWith('?') &&
    /\b(?:resolved|fixed|recovered|mitigated|back to normal|(?:it'?s|it is|all|everything(?:'s| is)?)\s+(?:good|green|working|healthy)(?:\s+now)?|fix\s+(?:is\s+)?(?:applied|in|deployed|worked|done)|applied the fix|issue is gone|problem is gone|we'?re good)\b/.test(
      lower,
    )
  ) {
    return base(text, 'resolved', 'resolved');
  }
  return undefined;
}

/** A change, a theory, or a read, in the words of the request. */
function actionPhrase(text: string, lower: string): UserRequest | undefined {
  if (!FACT_QUESTION.test(lower)) {
    for (const candidate of DANGEROUS) {
      if (unnegated(lower, asRequest(candidate.pattern))) return requestFromVerb(text, candidate);
    }
    for (const candidate of WRITES) {
      if (unnegated(lower, asRequest(candidate.pattern))) return requestFromVerb(text, candidate);
    }
  }

  const theory = lower.match(
    /\b(?:i think|i suspect|i bet|my (?:theory|hypothesis|guess) is|hypothesis:|theory:|could it be|maybe it'?s|probably)\s+(.{3,})$/,
  );
  if (theory?.[1]) {
    const request = base(text, 'hypothesis', 'hypothesis');
    request.hypothesisText = text.trim().slice(text.trim().length - theory[1].length);
    return request;
  }

  for (const candidate of READS) {
    if (candidate.pattern.test(lower)) {
      const request = base(text, 'read', candidate.verb);
      request.toolClass = 'read';
      if (candidate.verb === 'logs' && !request.resource) request.resource = { kind: 'pods' };
      return request;
    }
  }

  if (QUESTION.test(lower)) {
    const request = base(text, 'read', 'get');
    request.toolClass = 'read';
    return request;
  }
  return undefined;
}

/** Chat: yes, no, or anything else. */
function chatPhrase(text: string, lower: string): UserRequest {
  if (
    /^(?:yes|yep|yeah|y|ok|okay|sure|go ahead|do it|proceed|sounds good|lgtm|approved?|:\+1:|\uD83D\uDC4D)\b/.test(
      lower,
    )
  ) {
    return base(text, 'chat', /^approved?\b/.test(lower) ? 'approve' : 'affirm');
  }
  if (/^(?:no|nope|n|cancel|abort|never ?mind|hold on|wait)\b/.test(lower)) return base(text, 'chat', 'decline');
  return base(text, 'chat', 'chat');
}

export function classifyPhrase(text: string): UserRequest {
  const lower = text.toLowerCase().trim();
  return (
    steeringPhrase(text, lower) ?? progressPhrase(text, lower) ?? actionPhrase(text, lower) ?? chatPhrase(text, lower)
  );
}
