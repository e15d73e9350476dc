import { EVIDENCE_PER_FINDING } from '../../limits.js';
import { clip } from './events.js';

/** `a, b, c and 2 more`: names in evidence stay readable however many replicas fail. */
export function nameList(names: readonly string[], max = 5): string {
  const unique = new Set(names);
  if (unique.size <= max) return [...unique].join(', ');
  // Thousands of ready replicas may be counted: only the names shown are copied out.
  const shown: string[] = [];
  for (const name of unique) {
    if (shown.length === max) break;
    shown.push(name);
  }
  return `${shown.join(', ')} and ${unique.size - max} more`;
}

/**
 * Evidence lines in the order a person needs them, lowest rank first (ties keep insertion order), cut to the few a
 * finding carries: the decisive lines must lead and survive the cut.
 */
export class EvidenceList {
  private readonly entries: { rank: number; text: string }[] = [];

  add(rank: number, text: string | undefined | false): this {
    if (text) this.entries.push({ rank, text });
    return this;
  }

  lines(max = EVIDENCE_PER_FINDING): string[] {
    const seen = new Set<string>();
    return this.entries
      .map((e, i) => ({ ...e, i }))
      .sort((a, b) => a.rank - b.rank || a.i - b.i)
      .map((e) => clip(e.text))
      .filter((text) => !seen.has(text) && seen.add(text))
      .slice(0, max);
  }
}
