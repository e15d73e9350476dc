/**
 * Orders strings by UTF-16 code unit, as `<` does. `localeCompare` would build an ICU collator on its first call
 * (6–8 ms, paid by every command and every cold start that sorts anything); the strings calmops sorts are names,
 * ids, timestamps and tie-breakers, which need a stable order, not a linguistic one.
 */
export function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Sorts strings in place in byCodePoint's order. Without a comparator, `sort` orders strings by UTF-16 code unit too,
 * and calls no function per comparison: thousands of keys sort in half the time.
 */
export function sortByCodePoint(strings: string[]): string[] {
  return strings.sort();
}
