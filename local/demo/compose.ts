import type { SnapshotLogs } from '../../src/cluster/snapshot.js';
import { snapshotNow } from '../../src/cluster/snapshot.js';
import type { KubeObject } from '../../src/cluster/types.js';

/** One incident captured on its own, to be placed in a shared demo cluster. */
export interface Scenario {
  name: string;
  objects: KubeObject[];
  logs: SnapshotLogs;
}

export class DemoComposeError extends Error {
  override readonly name = 'DemoComposeError';
}

const ISO = /\b(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?Z\b/g;
const ISO_EXACT = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?Z$/;

/** Moves an ISO-8601 UTC instant by `deltaMs`, keeping its precision (none, milli or micro seconds). */
function shiftInstant(whole: string, deltaMs: number): string {
  const match = ISO_EXACT.exec(whole);
  if (match === null) return whole;
  const fraction = match[2] ?? '';
  const shifted = new Date(Date.parse(`${match[1]}${fraction.slice(0, 4)}Z`) + deltaMs).toISOString();
  const seconds = shifted.slice(0, 19);
  const millis = shifted.slice(19, 23);
  // Keep the original precision unless the shift itself needs milliseconds.
  if (fraction === '') return millis === '.000' ? `${seconds}Z` : `${seconds}${millis}Z`;
  // Sub-millisecond digits (kube writes microseconds in some fields) are carried over unchanged.
  return `${seconds}${millis}${fraction.slice(4)}Z`;
}

function shiftValue(value: unknown, deltaMs: number): unknown {
  if (typeof value === 'string') return ISO_EXACT.test(value) ? shiftInstant(value, deltaMs) : value;
  if (Array.isArray(value)) return value.map((item) => shiftValue(item, deltaMs));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shiftValue(item, deltaMs)]));
  }
  return value;
}

/**
 * Puts several incidents, each captured at its own time, into one cluster: every timestamp of a scenario (object
 * fields and instants in its log lines) moves by the same amount so that all scenarios end at `now`. Ages, event
 * recency and restart timing then read in the shared cluster exactly as they did in each capture.
 */
export function composeScenarios(
  scenarios: readonly Scenario[],
  now: Date,
): { objects: KubeObject[]; logs: SnapshotLogs } {
  const objects: KubeObject[] = [];
  const logs: SnapshotLogs = {};
  const seen = new Map<string, string>();
  for (const scenario of scenarios) {
    const end = snapshotNow(scenario.objects);
    if (end === undefined) throw new DemoComposeError(`scenario ${scenario.name} has no timestamps to align`);
    const delta = now.getTime() - end.getTime();
    for (const object of scenario.objects) {
      const key = `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
      const owner = seen.get(key);
      if (owner !== undefined) {
        throw new DemoComposeError(`${key} is in both ${owner} and ${scenario.name}; scenarios must not overlap`);
      }
      seen.set(key, scenario.name);
      objects.push(shiftValue(object, delta) as KubeObject);
    }
    for (const [key, text] of Object.entries(scenario.logs)) {
      logs[key] = text.replace(ISO, (whole) => shiftInstant(whole, delta));
    }
  }
  return { objects, logs };
}
