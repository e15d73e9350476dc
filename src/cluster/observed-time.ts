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
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObject) : []);

/** The newest observed instant in one object, in ms since the epoch; -Infinity when it carries none. */
export function newestObservedTime(object: unknown): number {
  if (!isObject(object)) return Number.NEGATIVE_INFINITY;
  let newest = Number.NEGATIVE_INFINITY;
  const consider = (value: unknown) => {
    if (typeof value !== 'string' || value.length < 20) return;
    const t = Date.parse(value);
    if (!Number.isNaN(t) && t > newest) newest = t;
  };
  const metadata = object['metadata'];
  if (isObject(metadata)) consider(metadata['creationTimestamp']);
  for (const key of EVENT_TIMES) consider(object[key]);
  const series = object['series'];
  if (isObject(series)) consider(series['lastObservedTime']);
  const spec = object['spec'];
  // A Lease's renewals are the node's (or the leader's) heartbeats.
  if (object['kind'] === 'Lease' && isObject(spec)) {
    consider(spec['renewTime']);
    consider(spec['acquireTime']);
  }
  const status = object['status'];
  if (isObject(status)) {
    for (const c of list(status['conditions'])) for (const key of CONDITION_TIMES) consider(c[key]);
    for (const key of STATUS_TIMES) consider(status[key]);
    for (const cs of [...list(status['containerStatuses']), ...list(status['initContainerStatuses'])]) {
      for (const state of [cs['state'], cs['lastState']]) {
        if (!isObject(state)) continue;
        for (const s of Object.values(state)) {
          if (!isObject(s)) continue;
          consider(s['startedAt']);
          consider(s['finishedAt']);
        }
      }
    }
  }
  return newest;
}
