import { humanDuration } from '../snapshot-api/tables.js';
import { goSort } from './go-sort.js';
import { DESCRIBE_TABWRITER, formatTabbed } from './tabwriter.js';

/**
 * kubectl describe's PrefixWriter: text written at a level (two spaces each) into a tabwriter, flushed where kubectl
 * flushes (before the events), plus the small formatters every describer shares.
 */

// biome-ignore lint/suspicious/noExplicitAny: raw API JSON read defensively, as kubectl's typed structs default
export type Json = any;

export class DescribeWriter {
  private done = '';
  private pending = '';

  write(level: number, text: string): void {
    this.pending += '  '.repeat(level) + text;
  }

  /** Ends every column block so far, as kubectl's `w.Flush()` does. */
  flush(): void {
    this.done += formatTabbed(this.pending, DESCRIBE_TABWRITER);
    this.pending = '';
  }

  text(): string {
    this.flush();
    return this.done;
  }
}

export const list = (value: Json): Json[] => (Array.isArray(value) ? value : []);
export const str = (value: Json): string => (value === undefined || value === null ? '' : String(value));

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Go's time.RFC1123Z in UTC; a missing time prints as Go's zero time does. */
export function rfc1123z(value: Json): string {
  const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) return 'Mon, 01 Jan 0001 00:00:00 +0000';
  const d = new Date(at);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${DAYS[d.getUTCDay()]}, ${pad(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`;
}

export function since(value: Json, now: Date): string {
  const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) return '<unknown>';
  return humanDuration(now.getTime() - at);
}

export function printLabels(
  w: DescribeWriter,
  title: string,
  labels: Json,
  initialIndent = '',
  innerIndent = '\t',
): void {
  w.write(0, `${initialIndent}${title}:${innerIndent}`);
  const keys = Object.keys(labels ?? {}).sort();
  if (keys.length === 0) {
    w.write(0, '<none>\n');
    return;
  }
  keys.forEach((key, i) => {
    if (i !== 0) w.write(0, `${initialIndent}${innerIndent}`);
    w.write(0, `${key}=${str(labels[key])}\n`);
  });
}

const SKIPPED_ANNOTATIONS = new Set(['kubectl.kubernetes.io/last-applied-configuration']);
const MAX_ANNOTATION_LEN = 140;

export function printAnnotations(w: DescribeWriter, title: string, annotations: Json): void {
  w.write(0, `${title}:\t`);
  const keys = Object.keys(annotations ?? {})
    .filter((k) => !SKIPPED_ANNOTATIONS.has(k))
    .sort();
  if (keys.length === 0) {
    w.write(0, '<none>\n');
    return;
  }
  keys.forEach((key, i) => {
    if (i !== 0) w.write(0, '\t');
    const value = str(annotations[key]).replace(/\n$/, '');
    if (value.length + key.length + 2 > MAX_ANNOTATION_LEN || value.includes('\n')) {
      w.write(0, `${key}:\n`);
      for (const line of value.split('\n')) {
        const short = line.length > MAX_ANNOTATION_LEN - 2 ? `${line.slice(0, MAX_ANNOTATION_LEN - 5)}...` : line;
        w.write(0, `\t  ${short}\n`);
      }
    } else {
      w.write(0, `${key}: ${value}\n`);
    }
  });
}

export function printTolerations(w: DescribeWriter, title: string, tolerations: Json, initialIndent = ''): void {
  w.write(0, `${initialIndent}${title}:\t`);
  const sorted = [...list(tolerations)].sort((a, b) =>
    str(a.key) < str(b.key) ? -1 : str(a.key) > str(b.key) ? 1 : 0,
  );
  if (sorted.length === 0) {
    w.write(0, '<none>\n');
    return;
  }
  sorted.forEach((t, i) => {
    if (i !== 0) w.write(0, `${initialIndent}\t`);
    let text = str(t.key);
    if (str(t.value)) text += `=${t.value}`;
    if (str(t.effect)) text += `:${t.effect}`;
    if (t.operator === 'Exists' && !str(t.value)) text += str(t.key) || str(t.effect) ? ' op=Exists' : 'op=Exists';
    if (typeof t.tolerationSeconds === 'number') text += ` for ${t.tolerationSeconds}s`;
    w.write(0, `${text}\n`);
  });
}

export function printTaints(w: DescribeWriter, title: string, taints: Json): void {
  w.write(0, `${title}:\t`);
  const key = (t: Json) => `${str(t.effect)},${str(t.key)}`;
  const sorted = [...list(taints)].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  if (sorted.length === 0) {
    w.write(0, '<none>\n');
    return;
  }
  sorted.forEach((t, i) => {
    if (i !== 0) w.write(0, '\t');
    w.write(0, `${str(t.key)}${str(t.value) ? `=${t.value}` : ''}:${str(t.effect)}\n`);
  });
}

/** The events section: kubectl's table of an object's events, oldest last seen first. */
export function describeEvents(w: DescribeWriter, events: readonly Json[], now: Date): void {
  if (events.length === 0) {
    w.write(0, 'Events:\t<none>\n');
    return;
  }
  w.flush();
  const last = (e: Json) => {
    const t = Date.parse(str(e.lastTimestamp));
    return Number.isNaN(t) ? Number.NEGATIVE_INFINITY : t;
  };
  const sorted = goSort([...events], (a, b) => last(a) < last(b));
  w.write(0, 'Events:\n  Type\tReason\tAge\tFrom\tMessage\n');
  w.write(1, '----\t------\t----\t----\t-------\n');
  for (const e of sorted) {
    let first = since(e.eventTime, now);
    if (!e.eventTime) first = since(e.firstTimestamp, now);
    let interval: string;
    if (e.series) interval = `${since(e.series.lastObservedTime, now)} (x${e.series.count ?? 0} over ${first})`;
    else if (typeof e.count === 'number' && e.count > 1)
      interval = `${since(e.lastTimestamp, now)} (x${e.count} over ${first})`;
    else interval = first;
    const source = str(e.source?.component) || str(e.reportingComponent);
    const message = str(e.message).trim();
    w.write(1, `${str(e.type)}\t${str(e.reason)}\t${interval}\t${source}\t${message}\n`);
  }
}

/** `Kind/name` of the controller an object names in its ownerReferences. */
export function controllerOf(object: Json): string {
  const ref = list(object?.metadata?.ownerReferences).find((r: Json) => r.controller === true);
  return ref ? `${ref.kind}/${ref.name}` : '';
}

/** metav1.FormatLabelSelector: `a=b,c in (d,e),!f`, `<none>` for none and `<all>` for empty. */
export function formatLabelSelector(selector: Json): string {
  if (selector === undefined || selector === null) return '<none>';
  const parts: string[] = Object.keys(selector.matchLabels ?? {})
    .sort()
    .map((k) => `${k}=${selector.matchLabels[k]}`);
  for (const expr of list(selector.matchExpressions)) {
    const op = str(expr.operator);
    if (op === 'Exists') parts.push(expr.key);
    else if (op === 'DoesNotExist') parts.push(`!${expr.key}`);
    else parts.push(`${expr.key} ${op === 'In' ? 'in' : 'notin'} (${list(expr.values).join(',')})`);
  }
  return parts.length === 0 ? '<all>' : parts.join(',');
}

/** labels.Selector's String() for a LabelSelector: requirements sorted by key. */
export function selectorString(selector: Json): string {
  if (selector === undefined || selector === null) return '';
  const reqs: Array<{ key: string; text: string }> = Object.keys(selector.matchLabels ?? {}).map((k) => ({
    key: k,
    text: `${k}=${selector.matchLabels[k]}`,
  }));
  for (const expr of list(selector.matchExpressions)) {
    const op = str(expr.operator);
    const values = [...list(expr.values)].sort().join(',');
    const text =
      op === 'Exists'
        ? expr.key
        : op === 'DoesNotExist'
          ? `!${expr.key}`
          : `${expr.key} ${op === 'In' ? 'in' : 'notin'} (${values})`;
    reqs.push({ key: expr.key, text });
  }
  reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return reqs.length === 0 ? '' : reqs.map((r) => r.text).join(',');
}

/** A map of labels as `labels.FormatLabels` prints it. */
export function formatMap(map: Json): string {
  const pairs = Object.entries(map ?? {}).map(([k, v]) => `${k}=${str(v)}`);
  return pairs.length === 0 ? '<none>' : pairs.sort().join(',');
}

export function accessModes(modes: Json): string {
  const short: Record<string, string> = {
    ReadWriteOnce: 'RWO',
    ReadOnlyMany: 'ROX',
    ReadWriteMany: 'RWX',
    ReadWriteOncePod: 'RWOP',
  };
  const present = new Set(list(modes));
  return ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod']
    .filter((m) => present.has(m))
    .map((m) => short[m])
    .join(',');
}

export function goBool(value: Json): string {
  return value === true ? 'true' : 'false';
}
