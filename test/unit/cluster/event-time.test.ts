import { describe, expect, it } from 'vitest';
import { eventTime } from '../../../src/cluster/event-time.js';

const at = (iso: string) => Date.parse(iso);

describe('eventTime', () => {
  it('reads a core/v1 Event by its last timestamp, as kubectl prints LAST SEEN', () => {
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web-1.17a', namespace: 'shop', creationTimestamp: '2025-01-31T09:00:00Z' },
      involvedObject: { kind: 'Pod', name: 'web-1', namespace: 'shop' },
      reason: 'BackOff',
      message: 'Back-off restarting failed container web in pod web-1_shop(4f1c)',
      count: 14,
      firstTimestamp: '2025-01-31T09:00:00Z',
      lastTimestamp: '2025-01-31T09:42:00Z',
      eventTime: null,
      type: 'Warning',
    };
    expect(eventTime(event)).toBe(at('2025-01-31T09:42:00Z'));
  });

  it('reads an events.k8s.io/v1 Event by its series before its eventTime', () => {
    const event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'db-0.17b', namespace: 'shop', creationTimestamp: '2025-01-31T09:00:00Z' },
      regarding: { kind: 'Pod', name: 'db-0', namespace: 'shop' },
      reason: 'FailedScheduling',
      note: '0/3 nodes are available: 3 Insufficient memory.',
      eventTime: '2025-01-31T09:00:00.123456Z',
      series: { count: 9, lastObservedTime: '2025-01-31T09:30:00.654321Z' },
      reportingController: 'default-scheduler',
      reportingInstance: 'default-scheduler-master-0',
      action: 'Scheduling',
      type: 'Warning',
    };
    expect(eventTime(event)).toBe(at('2025-01-31T09:30:00.654321Z'));
  });

  it('takes a singleton events.k8s.io/v1 Event at its deprecated last timestamp, else its eventTime', () => {
    const singleton = {
      metadata: { name: 'db-0.17c' },
      eventTime: '2025-01-31T09:10:00.000001Z',
      deprecatedFirstTimestamp: '2025-01-31T09:05:00Z',
      deprecatedLastTimestamp: '2025-01-31T09:20:00Z',
    };
    expect(eventTime(singleton)).toBe(at('2025-01-31T09:20:00Z'));
    expect(eventTime({ metadata: { name: 'x' }, eventTime: '2025-01-31T09:10:00.000001Z' })).toBe(
      at('2025-01-31T09:10:00.000001Z'),
    );
  });

  it('falls back to the first timestamp when the last is missing or not a time', () => {
    const event = { lastTimestamp: '', firstTimestamp: '2025-01-31T08:00:00Z', eventTime: '2025-01-31T07:00:00Z' };
    expect(eventTime(event)).toBe(at('2025-01-31T08:00:00Z'));
    expect(eventTime({ lastTimestamp: 'yesterday', eventTime: '2025-01-31T07:00:00Z' })).toBe(
      at('2025-01-31T07:00:00Z'),
    );
  });

  it('has no time for an event that carries none', () => {
    expect(eventTime({ metadata: { name: 'x', creationTimestamp: '2025-01-31T07:00:00Z' } })).toBeUndefined();
    expect(eventTime(null)).toBeUndefined();
    expect(eventTime({ series: 'broken', lastTimestamp: 42 })).toBeUndefined();
  });
});
