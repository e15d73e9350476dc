import type { ClusterReader, KubeObject } from '../cluster/types.js';
import { clip, EVIDENCE_TEXT_MAX } from '../limits.js';
import type { LogPort } from '../logging/port.js';
import type { Analyzer } from './analyze/analyzer.js';
import type { AnalyzerRegistry } from './analyze/run.js';
import { lookupAnalyzer, runAnalyzers } from './analyze/run.js';
import type { TriageEnvelope } from './envelope/envelope.js';
import { TriageEnvelopeSchema } from './envelope/envelope.js';
import { summarizeEvidence } from './envelope/evidence-summary.js';
import type { Finding } from './envelope/findings.js';
import { buildNextActions } from './envelope/next-actions.js';
import { confidenceRubric, priorityRubric, safetyRubric } from './envelope/rubrics.js';
import {
  checkedSummary,
  compact,
  ENVELOPE_BYTES_LIMIT,
  fitToLimit,
  limitedConfidence,
  orderForActions,
  promptSuggestions,
  summarize,
} from './envelope/summary.js';
import { contextFromObjects } from './gather/context.js';
import type { EvidenceAssessment, Gathered, OutcomeIndex } from './gather/gathering.js';
import { assessEvidence, gather, indexOutcomes, newestTimestamp, podsListedInFull } from './gather/gathering.js';
import { attributeOwners } from './rank/owners.js';
import type { RankedCauseWithFinding } from './rank/root-cause.js';
import { dedupeFindings, rankRootCauses } from './rank/root-cause.js';
import { resolveEntry } from './route/dictionary.js';
import { InvalidNamespaceError, InvalidTriageRequestError } from './route/errors.js';
import { followTemplate, foreignNamespaces } from './route/follow.js';
import { locateNamespace } from './route/locate.js';
import { explainInvalidNamespace } from './route/namespace.js';
import type { EntryResolution, RouteDecision } from './route/routing.js';
import { decideRoute, SWEEP_INTENT } from './route/routing.js';
import { actionCatalogue, intentOfFinding } from './route/sweep.js';
import { scrubDeep } from './scrub.js';
import type { TemplateRegistry } from './templates/template-registry.js';
import type { TriageTemplate } from './templates/template-schema.js';

export type { AnalyzerRegistry, EntryResolution, TemplateRegistry };
export { ENVELOPE_BYTES_LIMIT };

/**
 * The triage engine: route → gather (bounded rounds of read-only reads) → analyze → rank → a scrubbed envelope.
 * A clear single intent runs its focused template; anything else, and a focused run that finds nothing, runs the
 * namespace sweep, where the evidence decides. It never throws because of the cluster: unreadable evidence becomes
 * a classified gap and lowers completeness (and with it confidence). It throws only for bad requests.
 */

export const DEFAULT_STEP_BUDGET = 3;
export const MAX_STEP_BUDGET = 5;
export const DEFAULT_TIMEOUT_MS = 20_000;

const MAX_FINDINGS = 20;

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

export type TriageLogger = Pick<LogPort, 'info' | 'warn'>;

export interface TriageDeps {
  reader: ClusterReader;
  templates: TemplateRegistry;
  analyzers: AnalyzerRegistry;
  logger?: TriageLogger;
  /** Text → intent; the entry dictionary unless a caller substitutes its own. */
  resolveEntry?: (text: string, registry: TemplateRegistry) => EntryResolution;
}

let defaultLogger: TriageLogger | undefined;
/** Loaded when first needed: callers that pass their own logger (the command line) never load Powertools. */
async function powertoolsLogger(): Promise<TriageLogger> {
  if (!defaultLogger) {
    const { Logger } = await import('@aws-lambda-powertools/logger');
    const logger = new Logger({ serviceName: 'calmops', logLevel: 'INFO' });
    defaultLogger = {
      info: (message, extra) => (extra ? logger.info(message, extra) : logger.info(message)),
      warn: (message, extra) => (extra ? logger.warn(message, extra) : logger.warn(message)),
    };
  }
  return defaultLogger;
}

/** A logger that drops everything: for callers that render their own output (tests, the CLI without --verbose). */
export { silentLogger } from '../logging/port.js';

/** One template run against one namespace: what was read and what it means. */
interface Pass {
  template: TriageTemplate;
  gathered: Gathered;
  evidence: EvidenceAssessment;
  index: OutcomeIndex;
  now: Date;
  findings: Finding[];
  causes: RankedCauseWithFinding[];
}

export async function runTriage(request: TriageRequest, deps: TriageDeps): Promise<TriageEnvelope> {
  const logger = deps.logger ?? (await powertoolsLogger());
  const started = performance.now();
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
  const deadline = started + timeoutMs;
  const remaining = () => Math.max(1, Math.floor(deadline - performance.now()));
  const route = decideRoute(request, deps.templates, deps.resolveEntry ?? resolveEntry);
  let why = route.why;
  let namespace = route.namespace;
  let locateRequests = 0;
  if (route.namespaceFromWords && namespace && request.text?.trim()) {
    // "in grafana", "in the events", "in prod": an "in x" phrase is a word until the cluster confirms the namespace,
    // and a request that names two ("in shipping … fine in shipping-staging") is settled by the evidence.
    const located = await locateNamespace(request.text, deps.reader, AbortSignal.timeout(remaining()), {
      spoken: namespace,
    });
    locateRequests = located.requests;
    if (located.namespace !== namespace) {
      why = `${why.replace(/; namespace from "[^"]*"/, '')}; "${namespace}" was not taken as the namespace; ${located.why}`;
    }
    namespace = located.namespace;
  }
  if (namespace === undefined || namespace === '') {
    const ignored = /\(("[^"]*" ignored: [^)]*)\)/.exec(route.why)?.[1];
    if (!request.text?.trim()) {
      throw new InvalidNamespaceError('', `no namespace given for ${route.template.id}; pass it explicitly`);
    }
    const located = await locateNamespace(request.text, deps.reader, AbortSignal.timeout(remaining())).catch(
      (error: unknown) => {
        if (ignored && error instanceof InvalidNamespaceError) {
          throw new InvalidNamespaceError('', `${error.message} (${ignored})`, { cause: error });
        }
        throw error;
      },
    );
    namespace = located.namespace;
    locateRequests = located.requests;
    why = `${why.replace(/; no namespace named.*$/, '')}; ${located.why}${ignored ? ` (${ignored})` : ''}`;
  }
  const invalid = explainInvalidNamespace(namespace);
  if (invalid) {
    throw new InvalidNamespaceError(namespace, `"${clip(namespace, 80)}" is not a valid namespace: ${invalid}`);
  }
  logger.info(
    `Triage engaged: intent=${route.template.id}, template=${route.template.id}@v${route.template.version}, steps=${stepBudget}, mode=${route.triggerMode}`,
    { intent: route.template.id, namespace, why },
  );

  const pass = await runPass(route.template, route, namespace, stepBudget, remaining(), request.now, deps, logger);
  const top = pass.causes[0];
  const found = top
    ? intentOfFinding(deps.templates, top.finding, route.sweep ? undefined : route.template.id)
    : undefined;
  if (!route.sweep && found && found.id !== route.template.id) {
    why = `${why}; the evidence points at ${found.id} rather than ${route.template.id}`;
  }
  logger.info(
    `Evidence collection: completeness=${pass.evidence.completeness}, threshold=${pass.evidence.threshold}, missing=[${pass.evidence.missing.join(', ')}]`,
    { gaps: pass.evidence.gaps.map((g) => `${g.type}: ${g.reason}`) },
  );
  const envelope = buildEnvelope({
    request,
    route,
    pass,
    swept: route.sweep || (found !== undefined && found.id !== route.template.id),
    namespace,
    why,
    stepBudget,
    requests: pass.gathered.requests + locateRequests,
    durationMs: Math.round(performance.now() - started),
    templates: deps.templates,
  });
  logger.info(
    `Triage completed: duration=${envelope.execution.durationMs}ms, steps_executed=${envelope.execution.stepsExecuted}/${stepBudget}`,
    { requests: envelope.execution.requests, timedOut: envelope.execution.timedOut },
  );
  return envelope;
}

async function runPass(
  template: TriageTemplate,
  route: RouteDecision,
  namespace: string,
  stepBudget: number,
  timeoutMs: number,
  requestedNow: Date | undefined,
  deps: TriageDeps,
  logger: TriageLogger,
): Promise<Pass> {
  const started = performance.now();
  const gathered = await gather(template, namespace, stepBudget, timeoutMs, deps.reader);
  const metrics = await readUsage(deps.reader, namespace, timeoutMs);
  const evidence = assessEvidence(template, gathered);
  const now = requestedNow ?? newestTimestamp(gathered.outcomes) ?? new Date();
  const analyzers = analyzersOf(template, deps, logger);
  const podsComplete = podsListedInFull(template, gathered);
  let index = indexOutcomes(gathered.outcomes);
  let findings = analyzeIndex(index, [namespace], now, analyzers, logger, podsComplete, metrics);

  // A client that cannot reach a Service in another namespace: read that namespace too, and analyze both.
  const sweep = deps.templates.get(SWEEP_INTENT);
  const foreign = sweep ? foreignNamespaces(findings, namespace, new Set([namespace])) : [];
  const stepsLeft = stepBudget - gathered.stepsExecuted;
  if (sweep && foreign.length > 0 && stepsLeft > 0 && !gathered.timedOut) {
    const follow = followTemplate(sweep);
    const remaining = Math.max(1, Math.floor(timeoutMs - (performance.now() - started)));
    const followed = await Promise.all(
      foreign.map((ns) => gather(follow, ns, Math.min(stepsLeft, follow.rounds.length), remaining, deps.reader)),
    );
    for (const f of followed) {
      gathered.outcomes.push(...f.outcomes);
      gathered.requests += f.requests;
      gathered.timedOut ||= f.timedOut;
    }
    gathered.stepsExecuted += Math.max(...followed.map((f) => f.stepsExecuted));
    index = indexOutcomes(gathered.outcomes);
    findings = analyzeIndex(
      index,
      [namespace, ...foreign],
      now,
      [...analyzers, ...analyzersOf(sweep, deps, logger)],
      logger,
      podsComplete,
      metrics,
    );
    logger.info(`Followed dependencies into ${foreign.join(', ')}`);
  }
  const hinted = new Set(route.hints);
  const preference =
    template.id === SWEEP_INTENT && hinted.size > 0
      ? (f: Finding) => (hinted.has(intentOfFinding(deps.templates, f)?.id ?? '') ? route.hintStrength : 1)
      : undefined;
  const causes = rankRootCauses(findings, {
    now,
    events: index.objects.get('events') ?? [],
    ...(preference ? { preference } : {}),
  });
  return { template, gathered, evidence, index, now, findings, causes };
}

/**
 * Usage of the namespace's pods and of the nodes, where the cluster serves the Metrics API: two reads beside the
 * template's rounds. A cluster without metrics-server (or a reader without the API) simply has no usage.
 */
async function readUsage(reader: TriageDeps['reader'], namespace: string, timeoutMs: number): Promise<KubeObject[]> {
  if (!reader.metrics) return [];
  const signal = AbortSignal.timeout(Math.min(timeoutMs, 5_000));
  const read = (query: Parameters<NonNullable<typeof reader.metrics>>[0]) =>
    (reader.metrics as NonNullable<typeof reader.metrics>)(query, signal).catch(() => [] as KubeObject[]);
  const [pods, nodes] = await Promise.all([read({ kind: 'pods', namespace }), read({ kind: 'nodes' })]);
  return [...pods, ...nodes];
}

function analyzersOf(template: TriageTemplate, deps: TriageDeps, logger: TriageLogger): Analyzer[] {
  const readKinds = new Set<string>(template.rounds.flatMap((r) => r.reads.map((read) => read.kind)));
  return template.analyzers.flatMap((name) => {
    const analyzer = lookupAnalyzer(deps.analyzers, name);
    if (!analyzer) {
      logger.warn(`Analyzer "${name}" named by template ${template.id} is not registered; skipped`);
      return [];
    }
    const unread = analyzer.needs.filter((k) => !readKinds.has(k));
    if (unread.length > 0)
      logger.warn(`Template ${template.id} runs analyzer ${name} without reading ${unread.join(', ')}`);
    return [analyzer];
  });
}

/** Every analyzer over everything read, once per namespace of interest (the first is the one triaged). */
function analyzeIndex(
  index: OutcomeIndex,
  namespaces: readonly string[],
  now: Date,
  analyzers: readonly Analyzer[],
  logger: TriageLogger,
  podsComplete: boolean,
  metrics: readonly KubeObject[] = [],
): Finding[] {
  const unique = [...new Map(analyzers.map((a) => [a.name, a])).values()];
  // concat copies whole lists; flat() walks thousands of objects one by one.
  const objects = ([] as KubeObject[]).concat(...index.objects.values());
  const all = namespaces.flatMap((ns, i) => {
    const context = contextFromObjects({
      namespace: ns,
      now,
      objects,
      logs: index.logs,
      unavailable: index.unavailable,
      metrics,
    });
    return attributeOwners(runAnalyzers(unique, context, logger), context, { podsComplete: i === 0 && podsComplete });
  });
  return dedupeFindings(all);
}

interface EnvelopeInput {
  request: TriageRequest;
  route: RouteDecision;
  pass: Pass;
  swept: boolean;
  namespace: string;
  why: string;
  stepBudget: number;
  requests: number;
  durationMs: number;
  templates: TemplateRegistry;
}

function buildEnvelope(input: EnvelopeInput): TriageEnvelope {
  const { pass, namespace, templates } = input;
  const { template, evidence, index, findings, causes, gathered, now } = pass;
  // A sweep takes the intent of what it found; a healthy namespace stays a sweep.
  const top = causes[0];
  // A sweep that finds nothing answers the question the words asked ("crashloop in wiki?": no).
  const asked = input.route.hints.map((h) => templates.get(h)).find((t) => t !== undefined);
  const intentTemplate = !input.swept
    ? template
    : top
      ? (intentOfFinding(templates, top.finding, input.route.sweep ? undefined : template.id) ?? template)
      : (asked ?? template);
  const catalogue = actionCatalogue(templates, template, input.swept);
  const confident = evidence.completeness >= evidence.threshold;
  const nextActions = buildNextActions({
    template: { id: template.id, title: template.title, nextActions: catalogue },
    namespace,
    findings: orderForActions(findings, causes),
    allowMutating: confident,
  });
  const rubrics = {
    safety: safetyRubric(nextActions),
    priority: priorityRubric(findings.filter((f) => f.stale === undefined)),
    confidence: limitedConfidence(confidenceRubric(evidence.completeness, evidence.threshold, causes), causes, index),
  };
  const title = input.swept ? intentTemplate.title : template.title;
  const envelope: TriageEnvelope = {
    schemaVersion: 1,
    routing: {
      intent: intentTemplate.id,
      templateId: `${template.id}@v${template.version}`,
      domain: intentTemplate.domain,
      namespace,
      ...(input.request.cluster ? { cluster: input.request.cluster } : {}),
      bounded: true,
      stepBudget: input.stepBudget,
      triggerMode: input.route.triggerMode,
      intentConfidence:
        input.swept && top ? Math.max(input.route.intentConfidence, top.confidence) : input.route.intentConfidence,
      why: clip(input.why, 600),
    },
    rubrics,
    summary: summarize({
      title,
      namespace,
      causes,
      findings,
      evidence,
      required: template.evidence.required.length,
      timedOut: gathered.timedOut,
      limited: index.limited,
      ...(template.id === SWEEP_INTENT ? { checked: checkedSummary(index, namespace, now) } : {}),
    }),
    evidence: {
      ...evidence,
      ...summarizeEvidenceFor(intentTemplate, index),
    },
    // Worst first, but a ranked cause always keeps its finding (recency can rank a lower-severity one first).
    findings: findings.filter((f, i) => i < MAX_FINDINGS || causes.some((c) => c.finding === f)).map(compact),
    rootCause: causes.map(({ rank, code, summary, confidence, resource, chain, change, impact, alternatives }) => ({
      rank,
      code,
      summary: clip(summary, EVIDENCE_TEXT_MAX),
      confidence,
      resource,
      ...(chain && chain.length > 1 ? { chain } : {}),
      change,
      impact: impact ?? [],
      ...(alternatives && alternatives.length > 0 ? { alternatives } : {}),
    })),
    nextActions,
    promptSuggestions: promptSuggestions(intentTemplate, namespace, causes, evidence),
    execution: {
      stepsExecuted: Math.min(gathered.stepsExecuted, input.stepBudget),
      stepBudget: input.stepBudget,
      requests: input.requests,
      durationMs: input.durationMs,
      timedOut: gathered.timedOut,
      now: now.toISOString(),
    },
  };
  // One parse per triage: generating zod's compiled fast path for the schema would cost more than it saves.
  return TriageEnvelopeSchema.parse(fitToLimit(scrubDeep(envelope)), { jitless: true });
}

function summarizeEvidenceFor(template: TriageTemplate, index: OutcomeIndex) {
  return summarizeEvidence(template.domain, (kind) => index.objects.get(kind), index.limited);
}
