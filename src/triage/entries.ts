/**
 * The entries of a list in an object read from a cluster that are objects themselves. An API server that validates
 * what it stores never sends anything else, but a dump, or a server that does not validate, may: a list that is not
 * a list, or null among its entries, reads as what is there, so that the triage still answers (the cluster never
 * makes it throw).
 */
export function entriesOf<T extends object = Record<string, unknown>>(list: unknown): T[] {
  if (!Array.isArray(list)) return [];
  const entries: T[] = [];
  for (let i = 0; i < list.length; i++) {
    const entry: unknown = list[i];
    if (typeof entry === 'object' && entry !== null && !Array.isArray(entry)) entries.push(entry as T);
  }
  return entries;
}
