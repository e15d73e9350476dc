import type { KubeObject } from './types.js';

/**
 * The field labels kube-apiserver lets a field selector name, per resource (pkg/registry/.../strategy.go,
 * ToSelectableFields), and how each is read from an object. Every resource also has `metadata.name` and
 * `metadata.namespace`. The order of each list is the order their values are kept in (stored-object.ts).
 */

type FieldGetter = (object: KubeObject) => string;

const str = (value: unknown): string => (typeof value === 'string' ? value : value == null ? '' : String(value));
const member = (value: unknown, key: string): unknown =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;

const COMMON_FIELDS: ReadonlySet<string> = new Set(['metadata.name', 'metadata.namespace']);

const FIELDS_BY_RESOURCE: Readonly<Record<string, ReadonlyArray<readonly [string, FieldGetter]>>> = {
  pods: [
    ['spec.nodeName', (o) => str(o.spec?.nodeName)],
    ['spec.restartPolicy', (o) => str(o.spec?.restartPolicy)],
    ['spec.schedulerName', (o) => str(o.spec?.schedulerName)],
    ['spec.serviceAccountName', (o) => str(o.spec?.serviceAccountName)],
    ['spec.hostNetwork', (o) => String(o.spec?.hostNetwork === true)],
    ['status.phase', (o) => str(o.status?.phase)],
    ['status.podIP', (o) => str(o.status?.podIP)],
    ['status.nominatedNodeName', (o) => str(o.status?.nominatedNodeName)],
  ],
  events: [
    ['involvedObject.kind', (o) => str(member(o.involvedObject, 'kind'))],
    ['involvedObject.namespace', (o) => str(member(o.involvedObject, 'namespace'))],
    ['involvedObject.name', (o) => str(member(o.involvedObject, 'name'))],
    ['involvedObject.uid', (o) => str(member(o.involvedObject, 'uid'))],
    ['involvedObject.apiVersion', (o) => str(member(o.involvedObject, 'apiVersion'))],
    ['involvedObject.resourceVersion', (o) => str(member(o.involvedObject, 'resourceVersion'))],
    ['involvedObject.fieldPath', (o) => str(member(o.involvedObject, 'fieldPath'))],
    ['reason', (o) => str(o.reason)],
    ['reportingComponent', (o) => str(o.reportingComponent)],
    ['source', (o) => str(member(o.source, 'component'))],
    ['type', (o) => str(o.type)],
  ],
  nodes: [['spec.unschedulable', (o) => String(o.spec?.unschedulable === true)]],
  namespaces: [['status.phase', (o) => str(o.status?.phase)]],
  replicasets: [['status.replicas', (o) => String(o.status?.replicas ?? 0)]],
};

const POSITIONS = new Map<string, ReadonlyMap<string, number>>(
  Object.entries(FIELDS_BY_RESOURCE).map(([resource, fields]) => [
    resource,
    new Map(fields.map(([name], index) => [name, index])),
  ]),
);

/** Where `field` sits among the values of `resource` (see `selectableValues`); undefined for one it does not have. */
export function selectableFieldPosition(resource: string, field: string): number | undefined {
  return POSITIONS.get(resource)?.get(field);
}

/** Whether a field selector on `resource` may name `field`; the real server answers 400 to any other. */
export function isSelectableField(resource: string, field: string): boolean {
  return COMMON_FIELDS.has(field) || selectableFieldPosition(resource, field) !== undefined;
}

/** The values of the resource's own selectable fields (not the metadata ones), in their order. */
export function selectableValues(resource: string, object: KubeObject): string[] {
  return (FIELDS_BY_RESOURCE[resource] ?? []).map(([, read]) => read(object));
}
