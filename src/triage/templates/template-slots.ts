/**
 * The placeholders a remediation template may write besides the command variables: the template format defines
 * them, the registry checks templates against them at load, and the plan synthesizer (src/review/names.ts) fills
 * them from the findings.
 */

/** Slots that stand for one object of a kind. */
export const OBJECT_SLOTS = {
  pod: 'Pod',
  configmap: 'ConfigMap',
  secret: 'Secret',
  pvc: 'PersistentVolumeClaim',
  pv: 'PersistentVolume',
  storageclass: 'StorageClass',
  node: 'Node',
  service: 'Service',
  ingress: 'Ingress',
  ingressclass: 'IngressClass',
  route: 'Route',
  networkpolicy: 'NetworkPolicy',
  hpa: 'HorizontalPodAutoscaler',
  resourcequota: 'ResourceQuota',
  pdb: 'PodDisruptionBudget',
  volumeattachment: 'VolumeAttachment',
} as const;
export type ObjectSlot = keyof typeof OBJECT_SLOTS;

/** Slots with `.kind`, `.name` and `.namespace`. */
export const REF_SLOTS = ['resource', 'owner', 'workload'] as const;
export type RefSlot = (typeof REF_SLOTS)[number];

/** Slots whose value is a detail the evidence states (a container, a key, a label selector, a revision). */
export const DETAIL_SLOTS = ['container', 'key', 'selector', 'revision'] as const;
export type DetailSlot = (typeof DETAIL_SLOTS)[number];

export type NameSlot = ObjectSlot | RefSlot | DetailSlot;

/** Every placeholder a remediation template may use besides `{{namespace}}`. */
export const PLAN_TEMPLATE_VARS: readonly string[] = [
  'namespace',
  ...REF_SLOTS.flatMap((s) => [`${s}.kind`, `${s}.name`, `${s}.namespace`]),
  ...Object.keys(OBJECT_SLOTS).flatMap((s) => [s, `${s}.namespace`]),
  ...DETAIL_SLOTS,
];
