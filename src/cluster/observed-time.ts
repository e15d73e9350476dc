/**
 * When something was last seen to happen in an object: its creation, its events' times, its conditions'
 * transitions and heartbeats, its containers' starts and exits, its Lease renewals. A snapshot's "now" and a live
 * triage's default "now" are the newest of these. Times that name a future on purpose (a Certificate's `notAfter`
 * or `renewalTime`, an expiry) are not observations and never move "now".
 */

type Json = Record<string, unknown>;

const EVENT_TIMES = [
  'lastTimestamp',
  'firstTimestamp',
  'eventTime',
  'deprecatedLastTimestamp',
  'deprecatedFirstTimestamp',
];
const CONDITION_TIMES = ['lastTransitionTime', 'lastHeartbeatTime', 'lastProbeTime', 'lastUpdateTime'];
const STATUS_TIMES = ['startTime', 'completionTime', 'lastScheduleTime', 'lastSuccessfulTime', 'refreshTime'];

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The instant `value` names in ms, or -Infinity when it is no timestamp. Snapshots and lists hold thousands of objects
 * whose times repeat (a pod's creation, start and conditions often share one second): the last text read is kept
 * with its instant, so a repeat is not parsed again.
 */
let lastText = '';
let lastMs = Number.NEGATIVE_INFINITY;
function instant(value: unknown): number {
  if (typeof value !== 'string' || value.length < 20) return Number.NEGATIVE_INFINITY;
  if (value !== lastText) {
    const t = Date.parse(value);
    lastText = value;
    lastMs = Number.isNaN(t) ? Number.NEGATIVE_INFINITY : t;
  }
  return lastMs;
}

/** The newest of `keys` in `record`, and `newest`. */
function newestOf(record: Json, keys: readonly string[], newest: number): number {
  for (let i = 0; i < keys.length; i++) {
    const t = instant(record[keys[i] as string]);
    if (t > newest) newest = t;
  }
  return newest;
}

const STARTED_FINISHED = ['startedAt', 'finishedAt'];
const SERIES_TIMES = ['lastObservedTime'];
const LEASE_TIMES = ['renewTime', 'acquireTime'];
const CREATION = ['creationTimestamp'];

/** Starts and exits of the containers in `statuses` (a pod's `containerStatuses` or `initContainerStatuses`). */
function newestContainerTime(statuses: unknown, newest: number): number {
  if (!Array.isArray(statuses)) return newest;
  for (const cs of statuses) {
    if (!isObject(cs)) continue;
    for (const state of [cs['state'], cs['lastState']]) {
      if (!isObject(state)) continue;
      for (const s of Object.values(state)) if (isObject(s)) newest = newestOf(s, STARTED_FINISHED, newest);
    }
  }
  return newest;
}

/** The newest observed instant in one object, in ms since the epoch; -Infinity when it carries none. */
export function newestObservedTime(object: unknown): number {
  if (!isObject(object)) return Number.NEGATIVE_INFINITY;
  let newest = Number.NEGATIVE_INFINITY;
  const metadata = object['metadata'];
  if (isObject(metadata)) newest = newestOf(metadata, CREATION, newest);
  newest = newestOf(object, EVENT_TIMES, newest);
  const series = object['series'];
  if (isObject(series)) newest = newestOf(series, SERIES_TIMES, newest);
  const spec = object['spec'];
  // A Lease's renewals are the node's (or the leader's) heartbeats.
  if (object['kind'] === 'Lease' && isObject(spec)) newest = newestOf(spec, LEASE_TIMES, newest);
  const status = object['status'];
  if (isObject(status)) {
    const conditions = status['conditions'];
    if (Array.isArray(conditions)) {
      for (const c of conditions) if (isObject(c)) newest = newestOf(c, CONDITION_TIMES, newest);
    }
    newest = newestOf(status, STATUS_TIMES, newest);
    newest = newestContainerTime(status['containerStatuses'], newest);
    newest = newestContainerTime(status['initContainerStatuses'], newest);
  }
  return newest;
}
