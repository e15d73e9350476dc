/**
 * When an Event last happened, read the way `kubectl get events` reads it for LAST SEEN: a series' last observation,
 * else the last timestamp (`deprecatedLastTimestamp` in the `events.k8s.io/v1` shape), else the first, else
 * `eventTime`. A field that is empty or not a time is skipped, so a producer that fills only some still has a time.
 */

const EVENT_TIME_FIELDS = [
  'lastTimestamp',
  'deprecatedLastTimestamp',
  'firstTimestamp',
  'deprecatedFirstTimestamp',
  'eventTime',
] as const;

function instant(value: unknown): number | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The instant an Event (either shape) last happened, in ms since the epoch; undefined when it carries none. */
export function eventTime(event: unknown): number | undefined {
  if (typeof event !== 'object' || event === null) return undefined;
  const e = event as Record<string, unknown>;
  const series = e['series'];
  if (typeof series === 'object' && series !== null) {
    const last = instant((series as Record<string, unknown>)['lastObservedTime']);
    if (last !== undefined) return last;
  }
  for (const field of EVENT_TIME_FIELDS) {
    const at = instant(e[field]);
    if (at !== undefined) return at;
  }
  return undefined;
}
