/**
 * The entries of a list in an object read from a cluster that are objects themselves. An API server that validates
 * what it stores never sends anything else, but a dump, or a server that does not validate, may: a list that is not
 * a list, or null among its entries, reads as what is there, so that the triage still answers (the cluster never
 * makes it throw).
 *
 * A list whose entries are all objects, as every list from a validating server is, is handed back as it is rather
 * than copied: callers read it, never change it.
 */
export function entriesOf<T extends object = Record<string, unknown>>(list: unknown): readonly T[] {
  if (!Array.isArray(list)) return NONE as readonly T[];
  for (let i = 0; i < list.length; i++) {
    if (!isEntry(list[i])) return list.filter(isEntry) as T[];
  }
  return list as T[];
}

const NONE: readonly object[] = Object.freeze([]);

function isEntry(entry: unknown): entry is object {
  return typeof entry === 'object' && entry !== null && !Array.isArray(entry);
}
