import { dump } from 'js-yaml';
import { quantityValue } from '../cluster/quantity.js';
import { RESOURCES } from '../cluster/resources.js';
import type { KubeObject, ResourceKind, ServerTable } from '../cluster/types.js';
import { goSort } from './go-sort.js';
import { executeTemplate, JsonPathTemplateError, selectValues } from './jsonpath.js';
import { alignRows } from './tabwriter.js';

/**
 * kubectl's printers over what the API server sent: the server's Table as kubectl lays it out (NAMESPACE with -A,
 * wide columns, -L and --show-labels, kind-prefixed names for several types), and the object printers (-o name,
 * json, yaml, jsonpath, custom-columns), with --sort-by as kubectl sorts.
 */

export class PrintError extends Error {
  override readonly name = 'PrintError';
}

export interface TableOptions {
  wide: boolean;
  withNamespace: boolean;
  withKind: boolean;
  showLabels: boolean;
  labelColumns: readonly string[];
  noHeaders: boolean;
}

/** `pod`, `deployment.apps`, `horizontalpodautoscaler.autoscaling`: how kubectl names a kind in `-o name` and tables. */
export function kindPrefix(kind: ResourceKind): string {
  const info = RESOURCES[kind];
  return `${info.kind.toLowerCase()}${info.group === '' ? '' : `.${info.group}`}`;
}

/** labels.FormatLabels: the `key=value` pairs in byte order (`app.kubernetes.io/…=` before `app=`). */
function formatLabels(labels: Readonly<Record<string, unknown>> | undefined): string {
  const pairs = Object.entries(labels ?? {}).map(([k, v]) => `${k}=${String(v)}`);
  return pairs.length === 0 ? '<none>' : pairs.sort().join(',');
}

function cellText(cell: unknown): string {
  if (cell === null || cell === undefined) return '<nil>';
  if (typeof cell === 'string') return cell;
  if (typeof cell === 'number' || typeof cell === 'boolean') return String(cell);
  return JSON.stringify(cell);
}

/** The rows (header first) of one server Table, as kubectl's table printer builds them. */
export function tableRows(kind: ResourceKind, table: ServerTable, options: TableOptions): string[][] {
  const columns = table.columnDefinitions
    .map((c, index) => ({ ...c, index }))
    .filter((c) => options.wide || c.priority === 0);
  const header = [
    ...(options.withNamespace ? ['NAMESPACE'] : []),
    ...columns.map((c) => c.name.toUpperCase()),
    ...options.labelColumns.map((l) => (l.split('/').pop() ?? l).toUpperCase()),
    ...(options.showLabels ? ['LABELS'] : []),
  ];
  const rows = table.rows.map((row) => {
    const object = row.object;
    const labels = object?.metadata?.labels;
    return [
      ...(options.withNamespace ? [object?.metadata?.namespace ?? ''] : []),
      ...columns.map((c) => {
        const text = cellText(row.cells[c.index]);
        return options.withKind && c.format === 'name' ? `${kindPrefix(kind)}/${text}` : text;
      }),
      ...options.labelColumns.map((l) => labels?.[l] ?? ''),
      ...(options.showLabels ? [formatLabels(labels)] : []),
    ];
  });
  return options.noHeaders ? rows : [header, ...rows];
}

/** Several tables printed one after the other, as `kubectl get pods,svc` does. */
export function printTables(blocks: readonly (readonly (readonly string[])[])[], noHeaders: boolean): string {
  const printed = blocks.filter((b) => b.length > (noHeaders ? 0 : 1)).map((b) => alignRows(b));
  return printed.join(noHeaders ? '' : '\n');
}

// Sorting

/** kubectl's isLess: numbers and booleans as such, two quantities by value, other text byte by byte. */
function lessValue(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a < b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return !a && b;
  if (typeof a === 'string' && typeof b === 'string') {
    const qa = quantityValue(a);
    const qb = quantityValue(b);
    if (qa !== undefined && qb !== undefined) return qa < qb;
    return a < b;
  }
  return false;
}

/**
 * Objects (or rows holding them) ordered by a field as kubectl's sorter orders them: by the first value the path
 * selects, an object without one counting as smallest, with Go's unstable sort deciding among equals.
 */
export function sortByField<T>(items: readonly T[], field: string, objectOf: (item: T) => unknown): T[] {
  const path = field.trim().replace(/^\{(.*)\}$/s, '$1');
  let keyed: Array<{ item: T; key: unknown }>;
  try {
    keyed = items.map((item) => {
      const values = selectValues(path, objectOf(item));
      return { item, key: values.length === 0 ? undefined : values[0] };
    });
  } catch (error) {
    throw new PrintError(`couldn't parse --sort-by ${field}: ${(error as Error).message}`, { cause: error });
  }
  // A field an object lacks counts as less than anything (even another such); a null field is less than a value.
  goSort(keyed, (a, b) => {
    if (a.key === undefined) return true;
    if (b.key === undefined) return false;
    if (a.key === null || b.key === null) return a.key === null && b.key !== null;
    return lessValue(a.key, b.key);
  });
  return keyed.map((k) => k.item);
}

// Object printers

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortedKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** What kubectl prints for several objects: a v1 List around them. */
export function asList(objects: readonly KubeObject[]): object {
  return { apiVersion: 'v1', items: objects, kind: 'List', metadata: { resourceVersion: '' } };
}

export function printJson(value: unknown): string {
  return `${JSON.stringify(sortedKeys(value), null, 4)}\n`;
}

export function printYaml(value: unknown): string {
  return dump(sortedKeys(value), { lineWidth: -1, noRefs: true, noArrayIndent: true, quotingType: '"' });
}

export function printNames(items: ReadonlyArray<{ kind: ResourceKind; object: KubeObject }>): string {
  return items.map(({ kind, object }) => `${kindPrefix(kind)}/${object.metadata.name}\n`).join('');
}

export function printJsonPath(template: string, data: unknown): string {
  try {
    return executeTemplate(template, data);
  } catch (error) {
    if (error instanceof JsonPathTemplateError) throw new PrintError(`error: ${error.message}`, { cause: error });
    throw error;
  }
}

/** A value as Go's `%v` prints it: what custom-columns shows for maps and lists. */
function goValue(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goValue).join(' ')}]`;
  if (typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${k}:${goValue((value as Record<string, unknown>)[k])}`);
    return `map[${entries.join(' ')}]`;
  }
  return String(value);
}

function parseCustomColumns(spec: string): Array<{ header: string; path: string }> {
  const columns = spec.split(',').map((part) => {
    const colon = part.indexOf(':');
    if (colon <= 0) {
      throw new PrintError(`error: unexpected custom-columns spec: ${part}, expected <header>:<json-path-expr>`);
    }
    return { header: part.slice(0, colon), path: part.slice(colon + 1).replace(/^\{(.*)\}$/s, '$1') };
  });
  return columns;
}

export function printCustomColumns(spec: string, objects: readonly KubeObject[], noHeaders: boolean): string {
  const columns = parseCustomColumns(spec);
  const rows = objects.map((object) =>
    columns.map((c) => {
      let values: unknown[];
      try {
        values = selectValues(c.path, object);
      } catch (error) {
        throw new PrintError(`error: ${(error as Error).message}`, { cause: error });
      }
      return values.length === 0 ? '<none>' : values.map(goValue).join(',');
    }),
  );
  return alignRows(noHeaders ? rows : [columns.map((c) => c.header), ...rows]);
}
