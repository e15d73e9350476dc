import { Logger } from '@aws-lambda-powertools/logger';
import { RESOURCES } from '../cluster/resources.js';
import { logKey } from '../cluster/snapshot.js';
import type { ClusterReader, KubeObject, ResourceKind } from '../cluster/types.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';
import { contextFromObjects } from './analyzers/context.js';
import { resolveEntry } from './dictionary.js';
import type { EvidenceGap, TriageEnvelope, TriggerMode } from './envelope.js';
import { TriageEnvelopeSchema } from './envelope.js';
import { InvalidNamespaceError, InvalidTriageRequestError, UnknownIntentError } from './errors.js';
import { summarizeEvidence } from './evidence-summary.js';
import type { Finding } from './findings.js';
import { FindingSchema } from './findings.js';
import { explainInvalidNamespace } from './namespace.js';
import { buildNextActions, renderAction } from './next-actions.js';
import type { RankedCauseWithFinding } from './root-cause.js';
import { compareFindings, dedupeFindings, eventTime, findingKey, rankRootCauses } from './root-cause.js';
import type { ReadOutcome } from './rounds.js';
import { executeRound } from './rounds.js';
import { confidenceRubric, priorityRubric, safetyRubric } from './rubrics.js';
import { scrubDeep } from './scrub.js';
import type { TriageTemplate } from './template.js';
import type { TemplateRegistry } from './templates.js';

export type { TemplateRegistry };

/**
 * The triage engine: intent → template → bounded rounds of read-only reads → analyzers → ranked root cause and
 * a scrubbed envelope. It never throws because of the cluster: unreadable evidence becomes a classified gap and
 * lowers completeness (and with it confidence). It throws only for bad requests (unknown intent, bad namespace).
 */

export const DEFAULT_STEP_BUDGET = 3;
export const MAX_STEP_BUDGET = 5;
export const DEFAULT_TIMEOUT_MS = 20_000;
/** An envelope travels through Step Functions (256 KB) and Slack; a typical one stays far below this. */
export const ENVELOPE_BYTES_LIMIT = 32 * 1024;

const MAX_FINDINGS = 20;
const MAX_EVIDENCE_LINES = 6;
const MAX_TEXT = 300;
const MAX_PROMPTS = 5;

export interface TriageRequest {
  /** Free text, e.g. "pods stuck pending in payments". */
  text?: string;
  /** An intent id; wins over whatever the text suggests. */
  intent?: string;
  /** Wins over a namespace named in the text. */
  namespace?: string;
  /** Rounds to run, 1..5 (default 3). */
  stepBudget?: number;
  /** Overall deadline (default 20 000 ms). */
  timeoutMs?: number;
  /** The instant analysis treats as "now"; default the newest timestamp read, else the wall clock. */
  now?: Date;
  /** Cluster name for the envelope's routing. */
  cluster?: string;
}

export type AnalyzerRegistry = ReadonlyMap<string, Analyzer> | Readonly<Record<string, Analyzer>>;

export interface TriageLogger {
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
}

/** What the entry dictionary says about a piece of free text. */
export interface EntryResolution {
  intent?: string;
  namespace?: string;
  confidence: number;
  why: string;
  suggestions: ReadonlyArray<string | { intent?: string; id?: string }>;
  ambiguous: boolean;
  triggerMode: TriggerMode;
}

export interface TriageDeps {
  reader: ClusterReader;
  templates: TemplateRegistry;
  analyzers: AnalyzerRegistry;
  logger?: TriageLogger;
  /** Text → intent; the entry dictionary unless a caller substitutes its own. */
  resolveEntry?: (text: string, registry: TemplateRegistry) => EntryResolution;
}

let defaultLogger: TriageLogger | undefined;
function powertoolsLogger(): TriageLogger {
  if (!defaultLogger) {
    const logger = new Logger({ serviceName: 'calmops', logLevel: 'INFO' });
    defaultLogger = {
      info: (message, extra) => (extra ? logger.info(message, extra) : logger.info(message)),
      warn: (message, extra) => (extra ? logger.warn(message, extra) : logger.warn(message)),
    };
  }
  return defaultLogger;
}

/** A logger that drops everything: for callers that render their own output (tests, the CLI without --verbose). */
export const silentLogger: TriageLogger = { info: () => {}, warn: () => {} };

interface Routing {
  template: TriageTemplate;
  namespace: string;
  intentConfidence: number;
  triggerMode: TriggerMode;
  why: string;
}

export async function runTriage(request: TriageRequest, deps: TriageDeps): Promise<TriageEnvelope> {
  const started = performance.now();
  const logger = deps.logger ?? powertoolsLogger();
  const stepBudget = request.stepBudget ?? DEFAULT_STEP_BUDGET;
  if (!Number.isInteger(stepBudget) || stepBudget < 1 || stepBudget > MAX_STEP_BUDGET) {
    throw new InvalidTriageRequestError(`step budget must be a whole number from 1 to ${MAX_STEP_BUDGET}`);
  }
  const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new InvalidTriageRequestError('timeout must be a positive number of milliseconds');
  }
  if (request.now !== undefined && Number.isNaN(request.now.getTime())) {
    throw new InvalidTriageRequestError('"now" is not a valid date');
  }
  const routing = route(request, deps, deps.resolveEntry ?? resolveEntry);
  const { template, namespace } = routing;
  const templateId = `${template.id}@v${template.version}`;
  logger.info(
    `Triage engaged: intent=${template.id}, template=${templateId}, steps=${stepBudget}, mode=${routing.triggerMode}`,
    { intent: template.id, namespace, why: routing.why },
  );

  const gathered = await gather(template, namespace, stepBudget, timeoutMs, deps.reader);
  const evidence = assessEvidence(template, gathered);
  logger.info(
    `Evidence collection: completeness=${evidence.completeness}, threshold=${evidence.threshold}, missing=[${evidence.missing.join(', ')}]`,
    { gaps: evidence.gaps.map((g) => `${g.type}: ${g.reason}`) },
  );

  const index = indexOutcomes(gathered.outcomes);
  const now = request.now ?? newestTimestamp(gathered.outcomes) ?? new Date();
  const context = contextFromObjects({
    namespace,
    now,
    objects: [...index.objects.values()].flat(),
    logs: index.logs,
    unavailable: index.unavailable,
  });
  const findings = analyze(template, deps.analyzers, context, logger);

  const causes = rankRootCauses(findings, { now, events: index.objects.get('events') ?? [] });
  const confident = evidence.completeness >= evidence.threshold;
  const ordered = orderForActions(findings, causes);
  const nextActions = buildNextActions({ template, namespace, findings: ordered, allowMutating: confident });
  const rubrics = {
    safety: safetyRubric(nextActions),
    priority: priorityRubric(findings),
    confidence: limitedConfidence(confidenceRubric(evidence.completeness, evidence.threshold, causes), causes, index),
  };

  const durationMs = Math.round(performance.now() - started);
  const envelope: TriageEnvelope = {
    schemaVersion: 1,
    routing: {
      intent: template.id,
      templateId,
      domain: template.domain,
      namespace,
      ...(request.cluster ? { cluster: request.cluster } : {}),
      bounded: true,
      stepBudget,
      triggerMode: routing.triggerMode,
      intentConfidence: routing.intentConfidence,
      why: routing.why,
    },
    rubrics,
    summary: summarize(template, namespace, causes, findings, evidence, gathered.timedOut, index.limited),
    evidence: {
      ...evidence,
      ...summarizeEvidence(template.domain, (kind) => index.objects.get(kind), index.limited),
    },
    // Worst first, but a ranked cause always keeps its finding (recency can rank a lower-severity one first).
    findings: findings.filter((f, i) => i < MAX_FINDINGS || causes.some((c) => c.finding === f)).map(compact),
    rootCause: causes.map(({ rank, code, summary, confidence, resource }) => ({
      rank,
      code,
      summary: clip(summary),
      confidence,
      resource,
    })),
    nextActions,
    promptSuggestions: promptSuggestions(template, namespace, causes, evidence),
    execution: {
      stepsExecuted: gathered.stepsExecuted,
      stepBudget,
      requests: gathered.requests,
      durationMs,
      timedOut: gathered.timedOut,
      now: now.toISOString(),
    },
  };
  const result = TriageEnvelopeSchema.parse(fitToLimit(scrubDeep(envelope)));
  logger.info(`Triage completed: duration=${durationMs}ms, steps_executed=${gathered.stepsExecuted}/${stepBudget}`, {
    requests: gathered.requests,
    timedOut: gathered.timedOut,
  });
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// Routing

type Resolve = NonNullable<TriageDeps['resolveEntry']>;

function route(request: TriageRequest, deps: TriageDeps, resolve: Resolve): Routing {
  const text = request.text?.trim() ?? '';
  let resolution: EntryResolution | undefined;
  let template: TriageTemplate | undefined;
  let intentConfidence = 1;
  let triggerMode: TriggerMode = 'replace';
  let why: string;
  if (request.intent) {
    template = deps.templates.get(request.intent);
    if (!template) {
      const suggestions = suggestionsFor(request.intent, deps, resolve);
      throw new UnknownIntentError(
        `unknown intent "${request.intent}"${suggestions.length ? `; did you mean ${suggestions.join(', ')}?` : ''} (known: ${deps.templates.ids().join(', ')})`,
        suggestions,
      );
    }
    why = `intent "${template.id}" was given explicitly`;
    if (text && !request.namespace) resolution = resolve(text, deps.templates);
  } else if (text) {
    resolution = resolve(text, deps.templates);
    const suggestions = names(resolution.suggestions);
    if (!resolution.intent || resolution.ambiguous) {
      const lead = resolution.ambiguous ? 'the request could mean several intents' : 'no intent matches the request';
      // With nothing near, the whole (short) list is the nearest honest answer.
      const hint = suggestions.length
        ? `; did you mean ${suggestions.join(', ')}?`
        : `; nothing in it is close to a known intent (known: ${deps.templates.ids().join(', ')})`;
      throw new UnknownIntentError(`${lead} "${clip(text, 120)}"${hint}`, suggestions);
    }
    template = deps.templates.get(resolution.intent);
    if (!template) throw new UnknownIntentError(`no template for intent "${resolution.intent}"`, suggestions);
    intentConfidence = clamp01(resolution.confidence);
    triggerMode = resolution.triggerMode;
    why = request.namespace ? withExplicitNamespace(resolution.why, request.namespace) : resolution.why;
  } else {
    throw new InvalidTriageRequestError('say what to triage: free text or an intent id');
  }
  const namespace = request.namespace ?? resolution?.namespace;
  if (namespace === undefined || namespace === '') {
    // The dictionary explains a word it saw but could not take as a namespace ("in Payments": upper case).
    const ignored = /\(("[^"]*" ignored: [^)]*)\)/.exec(resolution?.why ?? '')?.[1];
    throw new InvalidNamespaceError(
      '',
      `no namespace given for ${template.id}${ignored ? ` (${ignored})` : ''}; name it in the request ("in payments") or pass it explicitly`,
    );
  }
  const invalid = explainInvalidNamespace(namespace);
  if (invalid)
    throw new InvalidNamespaceError(namespace, `"${clip(namespace, 80)}" is not a valid namespace: ${invalid}`);
  return { template, namespace, intentConfidence, triggerMode, why };
}

/** The dictionary explains where the namespace came from last; a namespace given explicitly replaces that part. */
function withExplicitNamespace(why: string, namespace: string): string {
  const stem = why.replace(/; (?:no namespace named|namespace from ").*$/, '');
  return `${stem}; namespace "${namespace}" given explicitly`;
}

function suggestionsFor(intent: string, deps: TriageDeps, resolve: Resolve): string[] {
  try {
    const r = resolve(intent.replace(/[-_]+/g, ' '), deps.templates);
    const fromDictionary = names([...(r.intent ? [r.intent] : []), ...r.suggestions]);
    if (fromDictionary.length > 0) return fromDictionary.slice(0, 3);
  } catch {
    // fall back to spelling distance below
  }
  return [...deps.templates.ids()]
    .map((id) => ({ id, d: editDistance(intent.toLowerCase(), id) }))
    .filter((x) => x.d <= Math.max(3, Math.floor(x.id.length / 3)))
    .sort((a, b) => a.d - b.d || (a.id < b.id ? -1 : 1))
    .slice(0, 3)
    .map((x) => x.id);
}

function names(suggestions: EntryResolution['suggestions']): string[] {
  const out = suggestions
    .map((s) => (typeof s === 'string' ? s : (s.intent ?? s.id)))
    .filter((s): s is string => typeof s === 'string' && s !== '');
  return [...new Set(out)];
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

// ---------------------------------------------------------------------------------------------------------------
// Gathering

interface Gathered {
  outcomes: ReadOutcome[];
  stepsExecuted: number;
  requests: number;
  timedOut: boolean;
  /** Rounds not run, and why. */
  skipped: Array<{ round: TriageTemplate['rounds'][number]; reason: 'step-budget' | 'timeout' }>;
}

async function gather(
  template: TriageTemplate,
  namespace: string,
  stepBudget: number,
  timeoutMs: number,
  reader: ClusterReader,
): Promise<Gathered> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('triage deadline passed', 'TimeoutError')),
    timeoutMs,
  );
  const previous = new Map<string, ReadOutcome[]>();
  const gathered: Gathered = { outcomes: [], stepsExecuted: 0, requests: 0, timedOut: false, skipped: [] };
  try {
    for (const [i, round] of template.rounds.entries()) {
      if (i >= stepBudget) {
        gathered.skipped.push({ round, reason: 'step-budget' });
        continue;
      }
      if (controller.signal.aborted) {
        gathered.skipped.push({ round, reason: 'timeout' });
        continue;
      }
      gathered.stepsExecuted++;
      const outcomes = await executeRound(round, {
        reader,
        namespace,
        signal: controller.signal,
        previous,
        onRequest: () => {
          gathered.requests++;
        },
      });
      for (const o of outcomes) {
        const list = previous.get(o.readId) ?? [];
        list.push(o);
        previous.set(o.readId, list);
      }
      gathered.outcomes.push(...outcomes);
    }
  } finally {
    clearTimeout(timer);
    gathered.timedOut = controller.signal.aborted;
    // Let a reader that honours the signal stop whatever is still in flight.
    controller.abort();
  }
  return gathered;
}

interface EvidenceAssessment {
  completeness: number;
  threshold: number;
  present: string[];
  missing: string[];
  gaps: EvidenceGap[];
}

function assessEvidence(template: TriageTemplate, gathered: Gathered): EvidenceAssessment {
  const required = [...new Set(template.evidence.required)];
  const collected = new Set(gathered.outcomes.filter((o) => o.status !== 'failed').map((o) => o.evidence));
  const declared = new Set(template.rounds.flatMap((r) => r.reads.map((read) => read.evidence)));
  const others = [...declared].filter((t) => !required.includes(t) && collected.has(t));
  const present = [...required.filter((t) => collected.has(t)), ...others];
  const missing = required.filter((t) => !collected.has(t));

  const gaps: EvidenceGap[] = [];
  const seen = new Set<string>();
  const add = (gap: EvidenceGap) => {
    const key = `${gap.type}|${gap.reason}`;
    if (seen.has(key)) return;
    seen.add(key);
    gaps.push({ ...gap, detail: clip(gap.detail, 200) });
  };
  const uncollected = [...required, ...[...declared].filter((t) => !required.includes(t))].filter(
    (t) => !collected.has(t),
  );
  for (const type of uncollected) {
    const failures = gathered.outcomes.filter((o) => o.evidence === type && o.status === 'failed');
    for (const f of failures)
      if (f.status === 'failed') add({ type, reason: f.reason, detail: `${f.label}: ${f.detail}` });
    for (const { round, reason } of gathered.skipped) {
      if (!round.reads.some((r) => r.evidence === type)) continue;
      add({
        type,
        reason,
        detail:
          reason === 'step-budget'
            ? `round "${round.name}" is beyond the step budget`
            : `round "${round.name}" did not start before the deadline`,
      });
    }
    if (!declared.has(type)) add({ type, reason: 'not-observed', detail: 'no read in this template collects it' });
  }
  const completeness =
    required.length === 0 ? 1 : Math.round(((required.length - missing.length) / required.length) * 100) / 100;
  return { completeness, threshold: template.evidence.threshold, present, missing, gaps };
}

interface OutcomeIndex {
  objects: Map<ResourceKind, KubeObject[]>;
  /** Kinds where a list stopped at its limit. */
  limited: Set<ResourceKind>;
  logs: Map<string, string>;
  unavailable: Set<ResourceKind>;
}

function indexOutcomes(outcomes: readonly ReadOutcome[]): OutcomeIndex {
  const objects = new Map<ResourceKind, KubeObject[]>();
  const seen = new Map<ResourceKind, Set<string>>();
  const logs = new Map<string, string>();
  const failedKinds = new Set<ResourceKind>();
  const limited = new Set<ResourceKind>();
  for (const o of outcomes) {
    if (o.status === 'failed') {
      if (o.kind !== 'logs') failedKinds.add(o.kind);
      continue;
    }
    if (o.status !== 'ok') continue;
    if (o.kind === 'logs') {
      logs.set(logKey(o.log.namespace, o.log.pod, o.log.container ?? '', o.log.previous), o.log.text);
      continue;
    }
    if (o.limited) limited.add(o.kind);
    const list = objects.get(o.kind) ?? [];
    const keys = seen.get(o.kind) ?? new Set<string>();
    const kind = RESOURCES[o.kind].kind;
    for (const raw of o.objects) {
      // Analyzers index by `kind`; a reader that omits it on list items still gets its objects analyzed.
      const obj = raw.kind === kind ? raw : { ...raw, kind };
      const key = obj.metadata.uid ?? `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
      if (keys.has(key)) continue;
      keys.add(key);
      list.push(obj);
    }
    objects.set(o.kind, list);
    seen.set(o.kind, keys);
  }
  // A kind counts as unavailable only when no read of it succeeded: partial evidence is still evidence.
  const unavailable = new Set([...failedKinds].filter((k) => !objects.has(k)));
  return { objects, limited, logs, unavailable };
}

/** The newest instant any object read mentions: a replayed snapshot's "now". */
function newestTimestamp(outcomes: readonly ReadOutcome[]): Date | undefined {
  let newest = Number.NEGATIVE_INFINITY;
  const consider = (value: unknown) => {
    if (typeof value !== 'string') return;
    const t = Date.parse(value);
    if (!Number.isNaN(t) && t > newest) newest = t;
  };
  for (const o of outcomes) {
    if (o.status !== 'ok' || o.kind === 'logs') continue;
    for (const obj of o.objects) {
      consider(obj.metadata.creationTimestamp);
      if (o.kind === 'events') {
        const t = eventTime(obj);
        if (t) consider(t.toISOString());
      }
      const status = obj.status as Record<string, unknown> | undefined;
      if (!status || typeof status !== 'object') continue;
      for (const c of (status.conditions ?? []) as Array<Record<string, unknown>>) {
        consider(c.lastTransitionTime);
        consider(c.lastHeartbeatTime);
        consider(c.lastProbeTime);
      }
      consider(status.startTime);
      for (const cs of [
        ...((status.containerStatuses ?? []) as Array<Record<string, unknown>>),
        ...((status.initContainerStatuses ?? []) as Array<Record<string, unknown>>),
      ]) {
        for (const state of [cs.state, cs.lastState] as Array<Record<string, Record<string, unknown>> | undefined>) {
          if (!state) continue;
          for (const s of Object.values(state)) {
            consider(s?.startedAt);
            consider(s?.finishedAt);
          }
        }
      }
    }
  }
  return Number.isFinite(newest) ? new Date(newest) : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Analysis

function lookupAnalyzer(registry: AnalyzerRegistry, name: string): Analyzer | undefined {
  if (registry instanceof Map) return registry.get(name);
  return Object.hasOwn(registry, name) ? (registry as Record<string, Analyzer>)[name] : undefined;
}

function analyze(
  template: TriageTemplate,
  registry: AnalyzerRegistry,
  ctx: AnalyzerContext,
  logger: TriageLogger,
): Finding[] {
  const readKinds = new Set<string>(template.rounds.flatMap((r) => r.reads.map((read) => read.kind)));
  const findings: Finding[] = [];
  for (const name of template.analyzers) {
    const analyzer = lookupAnalyzer(registry, name);
    if (!analyzer) {
      logger.warn(`Analyzer "${name}" named by template ${template.id} is not registered; skipped`);
      continue;
    }
    const unread = analyzer.needs.filter((k) => !readKinds.has(k));
    if (unread.length > 0) {
      logger.warn(`Template ${template.id} runs analyzer ${name} without reading ${unread.join(', ')}`);
    }
    let produced: unknown[];
    try {
      produced = analyzer.analyze(ctx);
    } catch (error) {
      // One analyzer's bug must not cost the operator the rest of the triage.
      logger.warn(`Analyzer ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    for (const input of produced) {
      const parsed = FindingSchema.safeParse(input);
      if (parsed.success) findings.push(parsed.data);
      else logger.warn(`Analyzer ${name} produced an invalid finding: ${parsed.error.issues[0]?.message ?? ''}`);
    }
  }
  return dedupeFindings(findings);
}

/** "Nothing wrong" read from a truncated list is not proof of health: it earns Medium at most. */
function limitedConfidence(
  confidence: TriageEnvelope['rubrics']['confidence'],
  causes: readonly RankedCauseWithFinding[],
  index: OutcomeIndex,
): TriageEnvelope['rubrics']['confidence'] {
  return confidence === 'High' && causes.length === 0 && index.limited.size > 0 ? 'Medium' : confidence;
}

/** Findings in the order their next actions should appear: ranked causes first, then the rest. */
function orderForActions(findings: readonly Finding[], causes: readonly RankedCauseWithFinding[]): Finding[] {
  const lead = causes.map((c) => c.finding);
  const leadKeys = new Set(lead.map(findingKey));
  return [...lead, ...findings.filter((f) => !leadKeys.has(findingKey(f))).sort(compareFindings)];
}

// ---------------------------------------------------------------------------------------------------------------
// Presentation

function summarize(
  template: TriageTemplate,
  namespace: string,
  causes: readonly RankedCauseWithFinding[],
  findings: readonly Finding[],
  evidence: EvidenceAssessment,
  timedOut: boolean,
  limited: ReadonlySet<ResourceKind> = new Set(),
): string {
  const required = template.evidence.required.length;
  const have = required - evidence.missing.length;
  const parts: string[] = [];
  const top = causes[0];
  if (top) {
    const others = causes.length - 1;
    parts.push(
      `${template.title} in ${namespace}: ${clip(top.summary, 200)} (${top.code}, ${top.finding.severity}, confidence ${top.confidence})${others > 0 ? `; ${others} more possible cause${others > 1 ? 's' : ''}` : ''}.`,
    );
  } else if (evidence.present.length === 0) {
    // Silence from a cluster that could not be read is not health.
    parts.push(`${template.title} in ${namespace}: the cluster could not be read, so nothing can be concluded.`);
  } else {
    const notes = findings.length;
    const seen = evidence.completeness < evidence.threshold ? 'no fault seen in what could be read' : 'no fault found';
    parts.push(
      `${template.title} in ${namespace}: ${seen}${notes > 0 ? ` (${notes} informational finding${notes > 1 ? 's' : ''})` : ''}.`,
    );
  }
  if (evidence.missing.length === 0) {
    parts.push(`Evidence complete (${have}/${required}).`);
  } else {
    const why = evidence.missing.map((type) => {
      const gap = evidence.gaps.find((g) => g.type === type);
      return gap ? `${type}: ${gap.reason}` : type;
    });
    parts.push(
      `Evidence incomplete (${have}/${required}, missing ${why.join('; ')})${evidence.completeness < evidence.threshold ? ' — treat this as provisional' : ''}.`,
    );
  }
  if (limited.size > 0) {
    const kinds = [...limited].sort().join(', ');
    parts.push(`Only part of the namespace's ${kinds} was read (list limit reached); faults beyond it are not seen.`);
  }
  if (timedOut) parts.push('The triage deadline passed; this is what was gathered in time.');
  return parts.join(' ');
}

function promptSuggestions(
  template: TriageTemplate,
  namespace: string,
  causes: readonly RankedCauseWithFinding[],
  evidence: EvidenceAssessment,
): string[] {
  const out: string[] = [];
  const top = causes[0];
  if (top) {
    out.push(`Explain ${top.code} for ${top.resource.kind} ${top.resource.name} and how to confirm it`);
  }
  if (evidence.missing.length > 0) {
    out.push(`Re-run the ${template.id} triage in ${namespace} once ${evidence.missing.join(', ')} can be read`);
  }
  for (const text of template.promptSuggestions) {
    const rendered = renderAction(text, namespace, top?.resource);
    if (rendered) out.push(rendered);
  }
  for (const domain of template.relatedDomains) {
    out.push(`Ask the ${domain} specialist to review ${namespace}`);
  }
  return [...new Set(out)].slice(0, MAX_PROMPTS);
}

function compact(f: Finding): Finding {
  return {
    ...f,
    message: clip(f.message),
    evidence: f.evidence.slice(0, MAX_EVIDENCE_LINES).map((e) => clip(e)),
    related: f.related.slice(0, 5),
    remediation: f.remediation.slice(0, 5),
  };
}

/** Drop the least important findings (never a ranked cause's) until the envelope fits. */
function fitToLimit(envelope: TriageEnvelope): TriageEnvelope {
  const size = () => Buffer.byteLength(JSON.stringify(envelope), 'utf8');
  const keep = new Set(
    envelope.rootCause.map((c) => `${c.code}|${c.resource.kind}|${c.resource.namespace ?? ''}|${c.resource.name}`),
  );
  while (size() > ENVELOPE_BYTES_LIMIT) {
    const i = envelope.findings.findLastIndex((f) => !keep.has(findingKey(f)));
    if (i < 0) break;
    envelope.findings.splice(i, 1);
  }
  if (size() > ENVELOPE_BYTES_LIMIT) {
    envelope.findings = envelope.findings.map((f) => ({ ...f, evidence: f.evidence.slice(0, 2) }));
  }
  return envelope;
}

function clip(text: string, max = MAX_TEXT): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function clamp01(n: number): number {
  return Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0;
}
