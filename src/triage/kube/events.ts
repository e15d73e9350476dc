import { eventTime } from '../../cluster/event-time.js';
import type { KubeObject, ResourceKind } from '../../cluster/types.js';
import { byCodePoint } from '../../code-point-order.js';
import { clipLine, EVIDENCE_TEXT_MAX } from '../../limits.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import { scrubText } from '../scrub.js';

/**
 * Events are supporting evidence, never the whole story: they expire (1 h by default), repeat, and linger after a
 * fault is fixed. These helpers read both `core/v1` and `events.k8s.io/v1` shapes, collapse repeats, and weigh each
 * event by how recent it is relative to the analysis' "now".
 */

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
/** Events older than this, on an object that looks healthy now, describe history rather than the incident. */
const STALE_AFTER_MS = HOUR;

export interface EventSummary {
  reason: string;
  message: string;
  type: string;
  /** Total occurrences across collapsed duplicates (`count` / `series.count`). */
  count: number;
  first: Date | undefined;
  last: Date | undefined;
  involvedKind: string;
  involvedName: string;
  /** The namespace of the object the event is about (events read cluster-wide span several). */
  involvedNamespace?: string | undefined;
  fieldPath: string | undefined;
}

function parseTime(value: unknown): Date | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

/** When the event last happened (as `kubectl get events` reads it), else when it was created. */
function eventLastTime(event: KubeObject): Date | undefined {
  const at = eventTime(event);
  return at === undefined ? parseTime(event.metadata.creationTimestamp) : new Date(at);
}

function eventFirstTime(event: KubeObject): Date | undefined {
  return (
    parseTime(event['firstTimestamp']) ??
    parseTime(event['eventTime']) ??
    parseTime(event['deprecatedFirstTimestamp']) ??
    parseTime(event.metadata.creationTimestamp)
  );
}

function eventCount(event: KubeObject): number {
  const series = event['series'] as Record<string, unknown> | undefined;
  const candidates = [series?.['count'], event['count'], event['deprecatedCount']];
  for (const c of candidates) if (typeof c === 'number' && c > 0) return c;
  return 1;
}

function eventMessage(event: KubeObject): string {
  return String(event['message'] ?? event['note'] ?? '').trim();
}

export interface EventFilter {
  kind?: string;
  name?: string;
  namespace?: string;
  reasons?: readonly string[];
  /** Only events whose message matches. */
  message?: RegExp;
}

/** Events matching the filter, collapsed by (object, reason, message) and sorted newest first. */
export function findEvents(ctx: AnalyzerContext, filter: EventFilter): EventSummary[] {
  const records = candidates(ctx, filter);
  // Most pods have no event of the reasons asked for: nothing is made for them.
  let groups: Map<string, EventSummary> | undefined;
  for (const record of records) {
    if (filter.kind !== undefined && record.kind !== filter.kind) continue;
    if (filter.name !== undefined && record.name !== filter.name) continue;
    if (filter.namespace !== undefined && record.namespace !== filter.namespace) continue;
    const reason = record.reason;
    if (filter.reasons !== undefined && !filter.reasons.includes(reason)) continue;
    const message = messageOf(record);
    if (filter.message !== undefined && !filter.message.test(message)) continue;
    const key = `${record.kind}\u0000${record.namespace ?? ''}\u0000${record.name}\u0000${reason}\u0000${message}`;
    const first = timeOf(firstMs(record));
    const last = timeOf(lastMs(record));
    const count = countOf(record);
    groups ??= new Map();
    const existing = groups.get(key);
    if (existing === undefined) {
      groups.set(key, {
        reason,
        message,
        type: String(record.event['type'] ?? 'Normal'),
        count,
        first,
        last,
        involvedKind: record.kind,
        involvedName: record.name,
        involvedNamespace: record.namespace,
        fieldPath: record.fieldPath,
      });
    } else {
      existing.count += count;
      if (first !== undefined && (existing.first === undefined || first < existing.first)) existing.first = first;
      if (last !== undefined && (existing.last === undefined || last > existing.last)) existing.last = last;
    }
  }
  return groups === undefined ? [] : [...groups.values()].sort(compareEventSummaries);
}

/**
 * An event as findEvents reads it: what every question asks about it is worked out once per context, and its
 * message, times and count the first time they are needed.
 */
interface EventRecord {
  event: KubeObject;
  /** Its place among the context's events: candidates keep that order. */
  at: number;
  kind: string;
  name: string;
  namespace: string | undefined;
  fieldPath: string | undefined;
  reason: string;
  /** Undefined until first asked. */
  message?: string;
  /** Epoch ms, null when the event carries none; undefined until first asked. */
  first?: number | null;
  last?: number | null;
  count?: number;
}

interface EventIndex {
  all: EventRecord[];
  /** By involved name, whatever the kind: questions about one object name its kind too, and findEvents checks it. */
  byName: Map<string, EventRecord[]>;
  /** Made when first asked for: most contexts only ever ask by object. */
  byReason?: Map<string, EventRecord[]>;
}

/**
 * Analyzers ask for the events of one object per pod or claim, or for one reason across the namespace; with
 * thousands of each, scanning every event per question is quadratic. Events are indexed by the name of the object
 * they are about, and by reason, once per context.
 */
const indexes = new WeakMap<AnalyzerContext, EventIndex>();

function push<K>(map: Map<K, EventRecord[]>, key: K, record: EventRecord): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [record]);
  else list.push(record);
}

const NO_REF: Readonly<Record<string, unknown>> = Object.freeze({});

function eventIndex(ctx: AnalyzerContext): EventIndex {
  let index = indexes.get(ctx);
  if (index === undefined) {
    index = { all: [], byName: new Map() };
    const events = ctx.objects('events');
    for (let i = 0; i < events.length; i++) {
      const event = events[i] as KubeObject;
      // Both the core/v1 and the events.k8s.io/v1 shape name the object they are about.
      const ref = (event['involvedObject'] ?? event['regarding'] ?? NO_REF) as Record<string, unknown>;
      const namespace = ref['namespace'];
      const fieldPath = ref['fieldPath'];
      const record: EventRecord = {
        event,
        at: index.all.length,
        kind: String(ref['kind'] ?? ''),
        name: String(ref['name'] ?? ''),
        namespace: typeof namespace === 'string' ? namespace : event.metadata.namespace,
        fieldPath: typeof fieldPath === 'string' ? fieldPath : undefined,
        reason: String(event['reason'] ?? ''),
      };
      index.all.push(record);
      push(index.byName, record.name, record);
    }
    indexes.set(ctx, index);
  }
  return index;
}

/** Names of the objects of a kind that have at least one event with this reason, in any namespace. */
export function namesWithReason(ctx: AnalyzerContext, kind: string, reason: string): ReadonlySet<string> {
  const index = eventIndex(ctx);
  index.byReason ??= groupedByReason(index.all);
  const names = new Set<string>();
  for (const record of index.byReason.get(reason) ?? NONE) if (record.kind === kind) names.add(record.name);
  return names;
}

/** The events about one object (by its kind and name, in any namespace), in the context's order. */
export function eventsInvolving(ctx: AnalyzerContext, kind: string, name: string): KubeObject[] {
  const events: KubeObject[] = [];
  for (const record of eventIndex(ctx).byName.get(name) ?? NONE) if (record.kind === kind) events.push(record.event);
  return events;
}

const NONE: readonly EventRecord[] = [];

/** The records by reason, each list in the context's order. */
function groupedByReason(records: readonly EventRecord[]): Map<string, EventRecord[]> {
  const map = new Map<string, EventRecord[]>();
  for (let i = 0; i < records.length; i++) push(map, (records[i] as EventRecord).reason, records[i] as EventRecord);
  return map;
}

/** The events that can match the filter, in the context's order: a superset of the matches, never fewer. */
function candidates(ctx: AnalyzerContext, filter: EventFilter): readonly EventRecord[] {
  const index = eventIndex(ctx);
  if (filter.name !== undefined) return index.byName.get(filter.name) ?? NONE;
  if (filter.reasons !== undefined) {
    index.byReason ??= groupedByReason(index.all);
    const byReason = index.byReason;
    const lists = [...new Set(filter.reasons)].flatMap((reason) => byReason.get(reason) ?? []);
    return filter.reasons.length > 1 ? lists.sort((a, b) => a.at - b.at) : lists;
  }
  return index.all;
}

function messageOf(record: EventRecord): string {
  if (record.message === undefined) record.message = eventMessage(record.event);
  return record.message;
}

function firstMs(record: EventRecord): number | null {
  if (record.first === undefined) record.first = eventFirstTime(record.event)?.getTime() ?? null;
  return record.first;
}

function lastMs(record: EventRecord): number | null {
  if (record.last === undefined) record.last = eventLastTime(record.event)?.getTime() ?? null;
  return record.last;
}

function countOf(record: EventRecord): number {
  if (record.count === undefined) record.count = eventCount(record.event);
  return record.count;
}

/** Every summary gets Dates of its own: a caller that changes one changes no other summary. */
function timeOf(ms: number | null): Date | undefined {
  return ms === null ? undefined : new Date(ms);
}

function compareEventSummaries(a: EventSummary, b: EventSummary): number {
  const at = a.last?.getTime() ?? 0;
  const bt = b.last?.getTime() ?? 0;
  if (at !== bt) return bt - at;
  if (a.count !== b.count) return b.count - a.count;
  return byCodePoint(`${a.involvedName}${a.reason}${a.message}`, `${b.involvedName}${b.reason}${b.message}`);
}

function ageMs(now: Date, at: Date | undefined): number {
  return at === undefined ? Number.POSITIVE_INFINITY : Math.max(0, now.getTime() - at.getTime());
}

export function isRecent(now: Date, at: Date | undefined, windowMs = STALE_AFTER_MS): boolean {
  return ageMs(now, at) <= windowMs;
}

/** Compact human age: 45s, 12m, 3h, 2d. */
export function formatAge(ms: number): string {
  if (!Number.isFinite(ms)) return 'unknown';
  const s = Math.round(ms / 1000);
  if (s < 90) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 90) return `${m}m`;
  const h = Math.round(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.round(h / 24)}d`;
}

/** An evidence line: `text` on one line, clipped to the evidence length unless told otherwise. */
export function clip(text: string, max = EVIDENCE_TEXT_MAX): string {
  return clipLine(text, max);
}

/** An event as one evidence line: `FailedScheduling ×42 (last 3m ago): 0/3 nodes are available: …`. */
export function describeEvent(event: EventSummary, now: Date): string {
  const times = event.count > 1 ? ` ×${event.count}` : '';
  const age = ageMs(now, event.last);
  const when = event.last === undefined ? '' : age < 30_000 ? ' (last just now)' : ` (last ${formatAge(age)} ago)`;
  return clip(scrubText(`${event.reason}${times}${when}: ${event.message}`));
}

/** True when the kind was read successfully (analyzers stay quiet about kinds they could not see). */
export function canSee(ctx: AnalyzerContext, kind: ResourceKind): boolean {
  return !ctx.unavailable.has(kind);
}
