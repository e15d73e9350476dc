import levenshtein from 'damerau-levenshtein';
import { stemmer } from 'stemmer';
import { byCodePoint } from '../../code-point-order.js';
import type { TriggerMode } from '../envelope/envelope.js';
import type { TemplateRegistry } from '../templates/template-registry.js';
import type { TriageTemplate } from '../templates/template-schema.js';
import { parseNamespace } from './namespace.js';

export { InvalidNamespaceError, isDns1123Label, parseNamespace } from './namespace.js';

/**
 * The entry dictionary: free text → intent and namespace, with a confidence and a one-line "why".
 *
 * Every template's synonyms form its vocabulary. A word shared by several intents weighs less (1 / number of
 * intents using it), generic words (pod, stuck, error) weigh little, and a multi-word synonym found whole (in any
 * order) adds a bonus. Words are compared by stem and, failing that, by edit distance so that typos still match.
 * The clearest intent wins only when it stands apart from the next one; otherwise the text is ambiguous and the
 * nearest intents come back as suggestions instead of a guess. Pure and deterministic.
 */

export interface IntentSuggestion {
  intent: string;
  /** 0..1, how strongly the text points at this intent on its own. */
  score: number;
}

export interface EntryResolution {
  /** Set only when the text points clearly (replace) or plausibly (suggest) at one intent. */
  intent?: string;
  namespace?: string;
  confidence: number;
  why: string;
  /** Nearest intents, best first (at most three). */
  suggestions: IntentSuggestion[];
  ambiguous: boolean;
  triggerMode: TriggerMode;
}

/** Confidence at or above `replace` runs the template directly; at or above `suggest` runs it as advisory. */
export const ENTRY_THRESHOLDS = {
  replace: 0.7,
  suggest: 0.45,
  /** The runner-up within this fraction of the best score makes the text ambiguous. */
  ambiguity: 0.8,
} as const;

const MAX_SUGGESTIONS = 3;
const GENERIC_WEIGHT = 0.25;
const DOMAIN_WEIGHT = 0.3;

/** Words that carry no meaning for routing. */
const STOPWORDS = new Set(
  `a an the and or but if then so of to in into on onto at by for from with within inside about over under out up
  is are was were be been being am do does did done doing has have had having it its this that these those there
  here my our your their me us we you they i he she them his her him what whats which who why how when where
  can could would should will shall may might must please pls plz hey hi hello thanks thank thx ok okay
  quick quickly quickest triage check checking look looking see help investigate debug diagnose diagnosis analyze
  going happening happen happens seems seem some any all just now again still really very also too bit lot
  keep keeps kept getting get gets got let lets need needs want wants like someone something anything everything
  since after before while during today yesterday tonight morning night currently suddenly already ever
  not no nothing don't doesn't didn't isn't aren't won't wont cant can't couldn't`.split(/\s+/),
);

/** Words common to many kinds of trouble: they count, but little. */
const GENERIC = new Set(
  `pod pods container containers app apps application applications service services deployment deployments workload
  workloads cluster kubernetes k8s openshift ocp stuck fail fails failed failing failure failures error errors
  issue issues problem problems broken down wrong bad slow unable cannot working work works dead dying die dies
  started start starting new wait waits waiting waited analysis`.split(/\s+/),
);

const DOMAIN_WORDS: Record<string, readonly string[]> = {
  storage: ['storage'],
  compute: ['compute', 'workload'],
  networking: ['network', 'networking'],
  platform: ['platform', 'infrastructure'],
};

interface Word {
  raw: string;
  stem: string;
  /** Index of the first word in the text's word sequence. */
  pos: number;
  /** Surface form in the text, e.g. `crash loop` for the compound `crashloop`. */
  surface: string;
  /** Word positions this word covers (two for a compound). */
  covers: number[];
}

interface VocabWord {
  stem: string;
  raws: Set<string>;
  weight: number;
}

interface IntentVocab {
  id: string;
  words: Map<string, VocabWord>;
  /** Multi-word synonyms as stems. */
  phrases: string[][];
  /** One-word synonyms: found exactly, such a word names the intent by itself ("crashloop", "coredns"). */
  singles: Set<string>;
}

interface DictionaryIndex {
  intents: IntentVocab[];
  /** Every vocabulary stem and word: a known word is never read as a typo of another. */
  known: Set<string>;
  /** Every vocabulary stem: such words after "in" are not namespaces. */
  reservedStems: Set<string>;
}

interface Match {
  word: Word;
  vocab: VocabWord;
  similarity: number;
  contribution: number;
}

interface IntentScore {
  id: string;
  score: number;
  matches: Match[];
}

const indexes = new WeakMap<TemplateRegistry, DictionaryIndex>();

/** Map free text to an intent and namespace. Throws InvalidNamespaceError when the text names an invalid namespace. */
export function resolveEntry(text: string, registry: TemplateRegistry): EntryResolution {
  const index = indexFor(registry);
  const cleaned = stripChatMarkup(text);
  const ns = parseNamespace(cleaned, { isReserved: (w) => isReservedWord(w, index) });
  const nsWhy = ns.namespace
    ? `namespace from "${ns.source}"`
    : ns.ignored
      ? `no namespace named ("${ns.ignored}" ignored: namespaces are lower-case)`
      : 'no namespace named';
  const body = ns.rest;
  const words = tokenize(body);

  const scores = index.intents
    .map((intent) => scoreIntent(intent, words, body, index.known))
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || byCodePoint(a.id, b.id));

  const base = { ...(ns.namespace ? { namespace: ns.namespace, namespaceExplicit: ns.explicit } : {}) };
  const [best, second] = scores;
  if (!best) {
    const near = nearestByLooseSpelling(words, index);
    const hint =
      near.length > 0
        ? `no triage vocabulary recognized; nearest by spelling: ${near.map((s) => s.intent).join(', ')}`
        : 'no triage vocabulary recognized';
    return {
      ...base,
      confidence: 0,
      why: `${hint}; ${nsWhy}`,
      suggestions: near,
      ambiguous: false,
      triggerMode: 'observe',
    };
  }

  const suggestions = scores.slice(0, MAX_SUGGESTIONS).map((s) => ({ intent: s.id, score: round2(strength(s.score)) }));
  const runnerUp = second?.score ?? 0;
  const margin = (best.score - runnerUp) / best.score;
  const confidence = round2(strength(best.score) * (0.6 + 0.4 * margin));
  const ambiguous = runnerUp >= ENTRY_THRESHOLDS.ambiguity * best.score;

  if (ambiguous) {
    const tied = scores.filter((s) => s.score >= ENTRY_THRESHOLDS.ambiguity * best.score).slice(0, MAX_SUGGESTIONS);
    const surfaces = uniqueSurfaces(tied.flatMap((s) => s.matches));
    const verb = surfaces.length === 1 ? 'fits' : 'fit';
    const why = `ambiguous: ${quoteList(surfaces)} ${verb} ${andList(tied.map((s) => s.id))} about equally; ${nsWhy}`;
    return { ...base, confidence, why, suggestions, ambiguous: true, triggerMode: 'observe' };
  }

  const matched = `matched ${describeMatches(best.matches)} (${best.id} synonyms)`;
  if (confidence >= ENTRY_THRESHOLDS.replace) {
    return {
      ...base,
      intent: best.id,
      confidence,
      why: `${matched}; ${nsWhy}`,
      suggestions,
      ambiguous: false,
      triggerMode: 'replace',
    };
  }
  if (confidence >= ENTRY_THRESHOLDS.suggest) {
    return {
      ...base,
      intent: best.id,
      confidence,
      why: `plausible: ${matched}; ${nsWhy}`,
      suggestions,
      ambiguous: false,
      triggerMode: 'suggest',
    };
  }
  return {
    ...base,
    confidence,
    why: `unclear: only weakly ${matched}; ${nsWhy}`,
    suggestions,
    ambiguous: false,
    triggerMode: 'observe',
  };
}

function indexFor(registry: TemplateRegistry): DictionaryIndex {
  let index = indexes.get(registry);
  if (!index) {
    index = buildIndex(registry.list());
    indexes.set(registry, index);
  }
  return index;
}

function buildIndex(templates: readonly TriageTemplate[]): DictionaryIndex {
  const raw = templates.map((t) => {
    const words = new Map<string, Set<string>>();
    const phrases: string[][] = [];
    const singles = new Set<string>();
    const sources = [...t.synonyms, t.id.replace(/-/g, ' ')];
    for (const phrase of sources) {
      const tokens = tokenize(phrase, false);
      for (const w of tokens) {
        const raws = words.get(w.stem) ?? new Set<string>();
        raws.add(w.raw);
        words.set(w.stem, raws);
      }
      const stems = [...new Set(tokens.map((w) => w.stem))];
      if (stems.length >= 2) phrases.push(stems);
      if (stems.length === 1 && tokens.length === 1 && stems[0]) singles.add(stems[0]);
    }
    const domainWords = new Set<string>();
    for (const d of DOMAIN_WORDS[t.domain] ?? []) {
      const stem = stemmer(d);
      domainWords.add(stem);
      const raws = words.get(stem) ?? new Set<string>();
      raws.add(d);
      words.set(stem, raws);
    }
    return { id: t.id, words, phrases, singles, domainWords };
  });

  const df = new Map<string, number>();
  for (const r of raw) for (const stem of r.words.keys()) df.set(stem, (df.get(stem) ?? 0) + 1);

  const reservedStems = new Set<string>();
  const known = new Set<string>();
  for (const r of raw) {
    for (const [stem, raws] of r.words) {
      known.add(stem);
      for (const w of raws) known.add(w);
    }
  }
  const intents = raw.map((r) => {
    const words = new Map<string, VocabWord>();
    for (const [stem, raws] of r.words) {
      let weight = 1 / (df.get(stem) ?? 1);
      const generic = [...raws].some((w) => GENERIC.has(w));
      if (generic) weight = Math.min(weight, GENERIC_WEIGHT);
      if (r.domainWords.has(stem)) weight = Math.min(weight, DOMAIN_WEIGHT);
      reservedStems.add(stem);
      words.set(stem, { stem, raws, weight });
    }
    return { id: r.id, words, phrases: r.phrases, singles: r.singles };
  });
  return { intents, known, reservedStems };
}

/** Exact vocabulary words only: a namespace that merely looks like a word ("analytics") must stay a namespace. */
function isReservedWord(word: string, index: DictionaryIndex): boolean {
  const w = word.toLowerCase();
  return STOPWORDS.has(w) || index.reservedStems.has(stemmer(w)) || index.reservedStems.has(w);
}

/** Content words of the text plus compounds of adjacent pairs ("crash loop" → crashloop), unless told not to. */
function tokenize(text: string, compounds = true): Word[] {
  const all = text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  const out: Word[] = [];
  all.forEach((raw, pos) => {
    if (!STOPWORDS.has(raw)) out.push({ raw, stem: stemmer(raw), pos, surface: raw, covers: [pos] });
  });
  for (let pos = 0; compounds && pos + 1 < all.length; pos++) {
    const a = all[pos]!;
    const b = all[pos + 1]!;
    if (STOPWORDS.has(a) || STOPWORDS.has(b)) continue;
    const raw = a + b;
    out.push({ raw, stem: stemmer(raw), pos, surface: `${a} ${b}`, covers: [pos, pos + 1] });
  }
  return out;
}

function scoreIntent(
  intent: IntentVocab,
  words: readonly Word[],
  text: string,
  known: ReadonlySet<string>,
): IntentScore {
  const matches: Match[] = [];
  const usedVocab = new Set<string>();
  const usedPositions = new Set<number>();
  // Compounds first: when "crash loop" matches crashloop, its halves must not count again.
  const ordered = [...words].sort((a, b) => b.covers.length - a.covers.length || a.pos - b.pos);
  for (const word of ordered) {
    if (word.covers.some((p) => usedPositions.has(p))) continue;
    let bestMatch: Match | undefined;
    for (const vocab of intent.words.values()) {
      if (usedVocab.has(vocab.stem)) continue;
      const sim = similarity(word, vocab, known);
      if (sim === 0) continue;
      const contribution = sim * vocab.weight;
      if (!bestMatch || contribution > bestMatch.contribution)
        bestMatch = { word, vocab, similarity: sim, contribution };
    }
    if (!bestMatch) continue;
    matches.push(bestMatch);
    usedVocab.add(bestMatch.vocab.stem);
    for (const p of word.covers) usedPositions.add(p);
  }

  const simByStem = new Map(matches.map((m) => [m.vocab.stem, m.similarity]));
  // A matched compound still counts as its halves for multi-word synonyms ("mount volumes" → "unable to mount").
  for (const m of matches) {
    if (m.word.covers.length < 2) continue;
    for (const part of m.word.surface.split(' ')) {
      const stem = stemmer(part);
      if (intent.words.has(stem) && !simByStem.has(stem)) simByStem.set(stem, m.similarity);
    }
  }
  let phraseBonus = 0;
  for (const phrase of intent.phrases) {
    if (!phrase.every((stem) => simByStem.has(stem))) continue;
    const avg = phrase.reduce((sum, stem) => sum + (simByStem.get(stem) ?? 0), 0) / phrase.length;
    phraseBonus = Math.max(phraseBonus, 0.5 * Math.min(phrase.length - 1, 2) * avg);
  }
  for (const m of matches) {
    if (m.similarity === 1 && m.vocab.weight === 1 && intent.singles.has(m.vocab.stem)) {
      phraseBonus = Math.max(phraseBonus, 0.5);
    }
  }
  const idBonus = text.toLowerCase().includes(intent.id) ? 1 : 0;
  const tokenScore = matches.reduce((sum, m) => sum + m.contribution, 0);
  matches.sort((a, b) => a.word.pos - b.word.pos);
  return { id: intent.id, score: tokenScore > 0 ? tokenScore + phraseBonus + idBonus : 0, matches };
}

/**
 * 1 for the same stem, less for a likely typo, 0 otherwise. Numbers (503, 137) match exactly or not at all, and a
 * word that is itself in the vocabulary is taken as written ("read" is not a typo of "ready").
 */
function similarity(word: Word, vocab: VocabWord, known: ReadonlySet<string>): number {
  if (word.stem === vocab.stem || vocab.raws.has(word.raw)) return 1;
  // Compounds exist to catch "crash loop" → crashloop exactly; fuzzy compounds only produce accidents.
  if (word.covers.length > 1 || known.has(word.stem) || known.has(word.raw)) return 0;
  if (/\d/.test(word.raw) || /\d/.test(vocab.stem)) return 0;
  let best = typoSimilarity(word.stem, vocab.stem);
  for (const raw of vocab.raws) best = Math.max(best, typoSimilarity(word.raw, raw));
  return best;
}

function typoSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  const shorter = Math.min(a.length, b.length);
  const longer = Math.max(a.length, b.length);
  if (shorter < 3 || longer - shorter > 2) return 0;
  const steps = levenshtein(a, b).steps;
  // Short words only forgive a swapped pair of letters ("dsn"), otherwise "pod" would match "pvc".
  if (longer < 5) return steps === 1 && a.length === b.length && sorted(a) === sorted(b) ? 0.8 : 0;
  const allowed = longer >= 8 ? 2 : 1;
  if (steps > allowed) return 0;
  // Typos rarely hit the first letter; requiring it keeps "count" from matching "mount".
  const sameStart = a[0] === b[0] || (a[0] === b[1] && a[1] === b[0]);
  if (!sameStart) return 0;
  return 0.95 * (1 - steps / longer);
}

function sorted(s: string): string {
  return [...s].sort().join('');
}

/** Last resort for text with no recognizable word: spelling-near intents, offered as suggestions only. */
function nearestByLooseSpelling(words: readonly Word[], index: DictionaryIndex): IntentSuggestion[] {
  const out: IntentSuggestion[] = [];
  for (const intent of index.intents) {
    let score = 0;
    for (const word of words) {
      if (word.raw.length < 4 || GENERIC.has(word.raw)) continue;
      for (const vocab of intent.words.values()) {
        if (vocab.weight <= GENERIC_WEIGHT) continue;
        for (const raw of vocab.raws) {
          if (raw.length < 4) continue;
          const sim = levenshtein(word.raw, raw).similarity;
          if (sim >= 0.6) score = Math.max(score, sim * vocab.weight * 0.5);
        }
      }
    }
    if (score > 0) out.push({ intent: intent.id, score: round2(score) });
  }
  return out.sort((a, b) => b.score - a.score || byCodePoint(a.intent, b.intent)).slice(0, MAX_SUGGESTIONS);
}

function strength(score: number): number {
  return 1 - Math.exp(-1.5 * score);
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

function describeMatches(matches: readonly Match[]): string {
  const parts = matches.slice(0, 4).map((m) => {
    const surface = `"${m.word.surface}"`;
    if (m.similarity === 1) return surface;
    const nearest = [...m.vocab.raws].sort(
      (x, y) => typoSimilarity(m.word.raw, y) - typoSimilarity(m.word.raw, x) || byCodePoint(x, y),
    )[0];
    return `${surface} (≈"${nearest ?? m.vocab.stem}")`;
  });
  return andList(parts);
}

function uniqueSurfaces(matches: readonly Match[]): string[] {
  const seen = new Map<string, number>();
  for (const m of matches) if (!seen.has(m.word.surface)) seen.set(m.word.surface, m.word.pos);
  return [...seen.entries()].sort((a, b) => a[1] - b[1]).map(([s]) => s);
}

function quoteList(items: readonly string[]): string {
  return andList(items.map((i) => `"${i}"`));
}

function andList(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** Slack wraps mentions, channels and links in angle brackets; a leading slash command is not part of the request. */
export function stripChatMarkup(text: string): string {
  return text
    .replace(/<[@#!][^>|]*\|([^>]*)>/g, ' $1 ')
    .replace(/<[@#!][^>]*>/g, ' ')
    .replace(/<(?:https?|mailto):[^>|]*\|([^>]*)>/g, ' $1 ')
    .replace(/<(?:https?|mailto):[^>]*>/g, ' ')
    .replace(/^\s*(?:\/[\w-]+\s+)+/, ' ')
    .replace(/^\s*\/[\w-]+\s*$/, ' ')
    .trim();
}
