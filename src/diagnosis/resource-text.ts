import type { ResourceRef } from '../triage/envelope/index.js';
import { isClusterScoped, kindLabel } from './kinds.js';

/** A resource as people read it: `PersistentVolumeClaim payments/data-db-0`, `StorageClass fast-ssd`. */
export function describeResource(ref: ResourceRef): string {
  const ns = ref.namespace && !isClusterScoped(ref.kind) ? `${ref.namespace}/` : '';
  return `${kindLabel(ref.kind)} ${ns}${ref.name}`;
}
