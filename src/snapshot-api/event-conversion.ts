import type { KubeObject } from '../cluster/types.js';

/**
 * A dump may hold Events as `kubectl get events.events.k8s.io -o yaml` prints them. kube-apiserver stores one Event
 * and serves it through both groups, converting the fields (pkg/apis/events/v1/conversion.go); the snapshot serves
 * the core/v1 resource, so an events.k8s.io/v1 (or v1beta1) Event is converted the same way. Without it, field
 * selectors such as `involvedObject.kind=Node` and kubectl's columns would not see the event at all.
 */
export function isEventsGroupEvent(object: Pick<KubeObject, 'kind' | 'apiVersion'>): boolean {
  return (
    object.kind === 'Event' && typeof object.apiVersion === 'string' && object.apiVersion.startsWith('events.k8s.io/')
  );
}

export function toCoreEvent(object: KubeObject): KubeObject {
  const {
    apiVersion: _group,
    regarding,
    note,
    deprecatedSource,
    deprecatedFirstTimestamp,
    deprecatedLastTimestamp,
    deprecatedCount,
    reportingController,
    ...same
  } = object as KubeObject & Record<string, unknown>;
  return {
    ...same,
    apiVersion: 'v1',
    ...(regarding !== undefined ? { involvedObject: regarding } : {}),
    ...(note !== undefined ? { message: note } : {}),
    ...(deprecatedSource !== undefined ? { source: deprecatedSource } : {}),
    ...(deprecatedFirstTimestamp !== undefined ? { firstTimestamp: deprecatedFirstTimestamp } : {}),
    ...(deprecatedLastTimestamp !== undefined ? { lastTimestamp: deprecatedLastTimestamp } : {}),
    ...(deprecatedCount !== undefined ? { count: deprecatedCount } : {}),
    ...(reportingController !== undefined ? { reportingComponent: reportingController } : {}),
  } as KubeObject;
}
