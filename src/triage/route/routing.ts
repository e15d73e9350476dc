import damerauLevenshtein from 'damerau-levenshtein';
import { clip } from '../../limits.js';
import type { TriggerMode } from '../envelope/envelope.js';
import { InvalidTriageRequestError, UnknownIntentError } from './errors.js';
import { SWEEP_INTENT, withSweep } from './sweep.js';

export { SWEEP_INTENT };

import { byCodePoint } from '../../code-point-order.js';
import type { TemplateRegistry } from '../templates/template-registry.js';
import type { TriageTemplate } from '../templates/template-schema.js';

/**
 * Routing: which template reads the cluster. A request whose words name one intent clearly runs that intent's
 * focused template; anything else (two areas at once, a general check-up, words calmops does not know) runs the
 * namespace sweep, where the evidence decides and the words only break ties. Routing never refuses a described
 * problem; only an intent id that does not exist, or an empty request, is an error.
 */

/** What the entry dictionary says about a piece of free text. */
export interface EntryResolution {
  intent?: string;
  namespace?: string;
  /** The namespace was named by a flag or the word namespace/ns/project, not only by "in x". */
  namespaceExplicit?: boolean;
  confidence: number;
  why: string;
  suggestions: ReadonlyArray<string | { intent?: string; id?: string }>;
  ambiguous: boolean;
  triggerMode: TriggerMode;
}

export type Resolve = (text: string, registry: TemplateRegistry) => EntryResolution;

export interface RouteInput {
  text?: string;
  intent?: string;
  namespace?: string;
}

export interface RouteDecision {
  template: TriageTemplate;
  /** The template is the namespace sweep: the top root cause, not the words, gives the envelope its intent. */
  sweep: boolean;
  /** Intents the words lean towards, best first: tie-breakers among faults of similar weight. */
  hints: string[];
  /** The factor a fault of a hinted intent is weighed by (1 = the words do not count). */
  hintStrength: number;
  intentConfidence: number;
  triggerMode: TriggerMode;
  why: string;
  /** The namespace the request names (explicitly or in its words), if any. */
  namespace?: string;
  /**
   * The namespace comes only from an "in x" phrase of the words: x may be an app, a tool or a place ("in grafana",
   * "in the events") rather than a namespace, so the cluster is asked before it is believed.
   */
  namespaceFromWords?: boolean;
}

export function decideRoute(request: RouteInput, templates: TemplateRegistry, resolve: Resolve): RouteDecision {
  const text = request.text?.trim() ?? '';
  const sweepTemplate = templates.get(SWEEP_INTENT);
  if (request.intent) return routeGivenIntent(request, request.intent, text, templates, resolve, sweepTemplate);
  if (!text) throw new InvalidTriageRequestError('say what to triage: free text or an intent id');
  const resolution = resolve(text, templates);
  const namespace = request.namespace ?? resolution.namespace;
  const fromWords = !request.namespace && resolution.namespace !== undefined && resolution.namespaceExplicit === false;
  const stem = request.namespace ? withExplicitNamespace(resolution.why, request.namespace) : resolution.why;
  const hints = intentsOf([...(resolution.intent ? [resolution.intent] : []), ...resolution.suggestions]).filter(
    (h) => h !== SWEEP_INTENT,
  );
  if (!sweepTemplate) {
    // Without a sweep to fall back on, only words that name one intent clearly can be acted on.
    const clear = resolution.intent !== undefined && !resolution.ambiguous && resolution.triggerMode !== 'observe';
    const focused = clear ? templates.get(resolution.intent as string) : undefined;
    if (!focused) {
      throw new UnknownIntentError(
        `no single intent matches "${clip(text, 120)}" and no sweep template is loaded`,
        hints,
      );
    }
    return {
      template: focused,
      sweep: false,
      hints: [focused.id],
      hintStrength: 1,
      intentConfidence: clamp01(resolution.confidence),
      triggerMode: resolution.triggerMode,
      why: stem,
      ...(namespace ? { namespace } : {}),
      ...(fromWords ? { namespaceFromWords: true } : {}),
    };
  }
  // Words that name one intent clearly run its focused template, with the sweep alongside so that the evidence can
  // still overrule them.
  const clear =
    resolution.intent !== undefined &&
    resolution.intent !== SWEEP_INTENT &&
    !resolution.ambiguous &&
    resolution.triggerMode === 'replace' &&
    resolution.confidence >= CLEAR_CONFIDENCE;
  const named = clear ? templates.get(resolution.intent as string) : undefined;
  if (named) {
    return {
      template: withSweep(named, sweepTemplate),
      sweep: false,
      hints,
      hintStrength: HINT_STRENGTH.clear,
      intentConfidence: clamp01(resolution.confidence),
      triggerMode: resolution.triggerMode,
      why: stem,
      ...(namespace ? { namespace } : {}),
      ...(fromWords ? { namespaceFromWords: true } : {}),
    };
  }
  return routeToSweep(resolution, sweepTemplate, hints, stem, namespace, fromWords);
}

/** An intent given explicitly runs its template, with the sweep alongside; the words only add a namespace. */
function routeGivenIntent(
  request: RouteInput,
  intent: string,
  text: string,
  templates: TemplateRegistry,
  resolve: Resolve,
  sweepTemplate: TriageTemplate | undefined,
): RouteDecision {
  const template = templates.get(intent);
  if (!template) {
    const suggestions = suggestionsFor(intent, templates, resolve);
    throw new UnknownIntentError(
      `unknown intent "${intent}"${suggestions.length ? `; did you mean ${suggestions.join(', ')}?` : ''} (known: ${templates.ids().join(', ')})`,
      suggestions,
    );
  }
  const resolution = text && !request.namespace ? resolve(text, templates) : undefined;
  const namespace = request.namespace ?? resolution?.namespace;
  const isSweep = template.id === SWEEP_INTENT;
  return {
    template: !isSweep && sweepTemplate ? withSweep(template, sweepTemplate) : template,
    sweep: isSweep,
    hints: isSweep ? intentsOf(resolution?.suggestions ?? []) : [template.id],
    hintStrength: isSweep ? HINT_STRENGTH.weak : HINT_STRENGTH.named,
    intentConfidence: 1,
    triggerMode: 'replace',
    why: `intent "${template.id}" was given explicitly${namespaceWhy(resolution, request.namespace)}`,
    ...(namespace ? { namespace } : {}),
  };
}

/** Words that name no single intent clearly: the sweep reads the whole namespace and the words only break ties. */
function routeToSweep(
  resolution: EntryResolution,
  sweepTemplate: TriageTemplate,
  hints: string[],
  stem: string,
  namespace: string | undefined,
  fromWords: boolean,
): RouteDecision {
  // Otherwise words are what a person noticed, not what is wrong: the evidence of the whole namespace decides, and the
  // words only tip the balance between faults of similar weight.
  const hintStrength = resolution.ambiguous
    ? HINT_STRENGTH.weak
    : resolution.triggerMode === 'replace'
      ? HINT_STRENGTH.clear
      : resolution.triggerMode === 'suggest'
        ? HINT_STRENGTH.plausible
        : HINT_STRENGTH.weak;
  const lead =
    resolution.intent === SWEEP_INTENT
      ? 'a check of the whole namespace was asked for'
      : hints.length > 0
        ? `the words point at ${hints.slice(0, 3).join(', ')}; the whole namespace is read and the evidence decides`
        : 'the words name no area; the whole namespace is read and the evidence decides';
  return {
    template: sweepTemplate,
    sweep: true,
    hints,
    hintStrength,
    intentConfidence: clamp01(resolution.confidence),
    triggerMode: resolution.triggerMode,
    why: `${lead} (${stem})`,
    ...(namespace ? { namespace } : {}),
    ...(fromWords ? { namespaceFromWords: true } : {}),
  };
}

/** How much the words' intents weigh against the evidence: a tie-breaker, at most half again for a named intent. */
export const HINT_STRENGTH = { named: 1.5, clear: 1.25, plausible: 1.12, weak: 1.06 } as const;
/** A dictionary match this sure (and unambiguous) names a clear single intent. */
const CLEAR_CONFIDENCE = 0.9;

function namespaceWhy(resolution: EntryResolution | undefined, explicit: string | undefined): string {
  if (explicit) return `; namespace "${explicit}" given explicitly`;
  const from = /namespace from "[^"]*"/.exec(resolution?.why ?? '')?.[0];
  return from ? `; ${from}` : '';
}

/** The dictionary explains where the namespace came from last; a namespace given explicitly replaces that part. */
function withExplicitNamespace(why: string, namespace: string): string {
  const stem = why.replace(/; (?:no namespace named|namespace from ").*$/, '');
  return `${stem}; namespace "${namespace}" given explicitly`;
}

function suggestionsFor(intent: string, templates: TemplateRegistry, resolve: Resolve): string[] {
  try {
    const r = resolve(intent.replace(/[-_]+/g, ' '), templates);
    const fromDictionary = intentsOf([...(r.intent ? [r.intent] : []), ...r.suggestions]);
    if (fromDictionary.length > 0) return fromDictionary.slice(0, 3);
  } catch {
    // fall back to spelling distance below
  }
  return [...templates.ids()]
    .map((id) => ({ id, d: damerauLevenshtein(intent.toLowerCase(), id).steps }))
    .filter((x) => x.d <= Math.max(3, Math.floor(x.id.length / 3)))
    .sort((a, b) => a.d - b.d || byCodePoint(a.id, b.id))
    .slice(0, 3)
    .map((x) => x.id);
}

function intentsOf(suggestions: EntryResolution['suggestions']): string[] {
  const out = suggestions
    .map((s) => (typeof s === 'string' ? s : (s.intent ?? s.id)))
    .filter((s): s is string => typeof s === 'string' && s !== '');
  return [...new Set(out)];
}

function clamp01(n: number): number {
  return Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0;
}
