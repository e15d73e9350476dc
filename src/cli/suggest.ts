import damerauLevenshtein from 'damerau-levenshtein';
import { byCodePoint } from '../code-point-order.js';

/**
 * "Did you mean": the known words a mistyped one most likely meant, as kubectl suggests commands. A word is close
 * when it is at most two edits away (a swap of neighbours counts as one), or when what was typed starts it (`--kube`
 * for `--kubeconfig`). Very short inputs are held to one edit, or every two-letter word would match everything.
 */

const MAX_SUGGESTIONS = 3;

export function suggest(typed: string, known: Iterable<string>): string[] {
  const input = typed.toLowerCase();
  // Dashes say which kind of flag, not which one: `-json` is one edit from `--json` in what it spells.
  const core = input.replace(/^-+/, '');
  // One letter is one edit from every other letter: too little to guess from.
  if (core.length < 2) return [];
  const limit = core.length <= 3 ? 1 : 2;
  const scored: Array<{ word: string; distance: number }> = [];
  for (const word of new Set(known)) {
    const candidate = word.toLowerCase();
    if (candidate === input) continue;
    const distance = damerauLevenshtein(core, candidate.replace(/^-+/, '')).steps;
    const prefix = candidate.startsWith(input);
    if (distance <= limit || prefix) scored.push({ word, distance: prefix ? Math.min(distance, limit) : distance });
  }
  return scored
    .sort((a, b) => a.distance - b.distance || byCodePoint(a.word, b.word))
    .slice(0, MAX_SUGGESTIONS)
    .map((s) => s.word);
}

/** `; did you mean "triage"?`, `; did you mean --json or --jsonpath?`, or nothing when nothing is close. */
export function didYouMean(typed: string, known: Iterable<string>, quote = true): string {
  const words = suggest(typed, known).map((w) => (quote ? `"${w}"` : w));
  if (words.length === 0) return '';
  const list = words.length === 1 ? words[0] : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
  return `; did you mean ${list}?`;
}
