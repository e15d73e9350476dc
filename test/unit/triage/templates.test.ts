import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RESOURCES } from '../../../src/cluster/resources.js';
import { ANALYZERS } from '../../../src/triage/analyze/index.js';
import {
  defaultTemplatesDir,
  loadTemplates,
  parseTemplate,
  TemplateValidationError,
} from '../../../src/triage/templates/template-registry.js';
import { readYaml as parse, writeYaml as stringify } from '../../../src/yaml-text.js';

const INTENTS = [
  'crashloop-analysis',
  'dns-failure',
  'image-pull',
  'ingress-pending',
  'namespace-sweep',
  'node-not-ready',
  'oom-killed',
  'pvc-binding',
  'route-5xx',
  'scheduling-failures',
  'service-connectivity',
  'volume-mount-failures',
  'workload-rollout',
];

const FINDING_CODES =
  `PVC_NO_STORAGECLASS PVC_NO_DEFAULT_STORAGECLASS PVC_STORAGECLASS_NOT_FOUND PVC_PROVISIONER_MISSING
PVC_PROVISIONING_FAILED PVC_WAIT_FOR_FIRST_CONSUMER PVC_NO_MATCHING_PV PVC_PV_SIZE_MISMATCH PVC_PV_ACCESSMODE_MISMATCH
PVC_PV_SELECTOR_MISMATCH POD_INSUFFICIENT_CPU POD_INSUFFICIENT_MEMORY POD_UNTOLERATED_TAINT POD_AFFINITY_MISMATCH
POD_NODE_SELECTOR_MISMATCH POD_UNBOUND_PVC POD_TOO_MANY_PODS POD_UNSCHEDULABLE CONTAINER_CRASHLOOP
CONTAINER_CRASHLOOP_CONFIG_ERROR CONTAINER_CONFIG_ERROR CONTAINER_LIVENESS_FAILING CONTAINER_OOMKILLED IMAGE_NOT_FOUND
IMAGE_PULL_UNAUTHORIZED IMAGE_PLATFORM_MISMATCH IMAGE_PULL_BACKOFF NODE_NOT_READY NODE_PRESSURE POD_EVICTED
INGRESS_NO_CLASS INGRESS_CLASS_NOT_FOUND INGRESS_CLASS_NO_CONTROLLER INGRESS_BACKEND_SERVICE_MISSING
INGRESS_BACKEND_NO_ENDPOINTS INGRESS_NO_ADDRESS ROUTE_SERVICE_MISSING ROUTE_SERVICE_SELECTS_NO_PODS ROUTE_PODS_NOT_READY
ROUTE_TARGET_PORT_MISMATCH SERVICE_NO_ENDPOINTS DNS_COREDNS_UNAVAILABLE DNS_COREDNS_ERRORS DNS_LOOKUP_FAILURES
VOLUME_MOUNT_FAILED VOLUME_ATTACH_FAILED VOLUME_CONFIGMAP_MISSING VOLUME_PERMISSION_DENIED WORKLOAD_QUOTA_EXCEEDED
WORKLOAD_LIMITRANGE_REJECTED WORKLOAD_ADMISSION_DENIED WORKLOAD_CREATE_FAILED WORKLOAD_ROLLOUT_STUCK HPA_AT_MAX_REPLICAS
JOB_FAILED PDB_BLOCKS_DISRUPTION NETWORK_POLICY_BLOCKS NETWORK_POLICY_BLOCKS_DNS
MESH_TLS_MODE_CONFLICT MESH_MTLS_PLAINTEXT_REFUSED INGRESS_UPSTREAM_TIMEOUT DEPENDENCY_HOST_NOT_FOUND
DEPENDENCY_UNAVAILABLE DEPENDENCY_UNREACHABLE DEPENDENCY_ERRORS PVC_LOST PVC_TOPOLOGY_MISMATCH ROUTE_BACKEND_ERRORS
ROUTE_BACKEND_SCALED_TO_ZERO ROUTE_BACKEND_TLS_FAILED ROUTE_BACKEND_TIMEOUT ROUTE_NO_SERVER_AVAILABLE RBAC_FORBIDDEN
VOLUME_FULL CERTIFICATE_NOT_READY EXTERNALSECRET_NOT_SYNCED EXTERNALSECRET_KEY_MISSING HPA_METRICS_UNAVAILABLE
NODEPOOL_LIMIT_REACHED LOADBALANCER_NO_ADDRESS ISSUER_NOT_READY
SERVICE_TARGET_PORT_MISMATCH VOLUME_CSI_DRIVER_NOT_REGISTERED VOLUME_SECRET_MISSING`.split(/\s+/);

describe('shipped templates', () => {
  const registry = loadTemplates();

  it('loads every intent and caches the default registry', () => {
    expect(registry.ids()).toEqual(INTENTS);
    expect(registry.list().map((t) => t.id)).toEqual(INTENTS);
    expect(loadTemplates()).toBe(registry);
    expect(registry.get('pvc-binding')?.domain).toBe('storage');
    expect(registry.get('no-such-intent')).toBeUndefined();
  });

  it('uses every domain and stays within the step budget', () => {
    expect(new Set(registry.list().map((t) => t.domain))).toEqual(
      new Set(['storage', 'compute', 'networking', 'platform']),
    );
    for (const t of registry.list()) expect(t.rounds.length, t.id).toBeLessThanOrEqual(3);
  });

  it('names only known analyzers and finding codes', () => {
    for (const t of registry.list()) {
      for (const a of t.analyzers) expect([...ANALYZERS.keys()], `${t.id} analyzer`).toContain(a);
      for (const a of t.nextActions) if (a.when !== 'always') expect(FINDING_CODES, `${t.id} action`).toContain(a.when);
      for (const r of t.remediation) expect(FINDING_CODES, `${t.id} remediation`).toContain(r.when);
    }
  });

  it('offers a next action and a remediation for every finding code', () => {
    const all = registry.list();
    for (const code of FINDING_CODES) {
      expect(
        all.some((t) => t.nextActions.some((a) => a.when === code)),
        `${code} has a next action`,
      ).toBe(true);
      expect(
        all.some((t) => t.remediation.some((r) => r.when === code)),
        `${code} has a remediation`,
      ).toBe(true);
    }
  });

  it('opens with a safe read and labels every mutating command', () => {
    for (const t of registry.list()) {
      expect(
        t.nextActions.some((a) => a.when === 'always' && a.type === 'read-only'),
        t.id,
      ).toBe(true);
      for (const a of t.nextActions) {
        const mutatingVerb =
          /^(kubectl|oc) (delete|patch|scale|annotate|label|taint|cordon|drain|set|rollout (undo|restart)|apply|create)\b/;
        if (mutatingVerb.test(a.command)) {
          expect(a.type, a.command).toBe('mutating');
          expect(a.safety, a.command).not.toBe('SAFE');
        }
      }
    }
  });

  it('reads round 1 broadly with server-side selectors and narrows later rounds through forEach', () => {
    for (const t of registry.list()) {
      const first = t.rounds[0]?.reads ?? [];
      expect(
        first.every((r) => r.forEach === undefined),
        t.id,
      ).toBe(true);
      for (const round of t.rounds.slice(1)) {
        for (const read of round.reads) expect(read.forEach, `${t.id}/${read.id}`).toBeDefined();
      }
    }
    const pvc = registry.get('pvc-binding')!;
    expect(pvc.rounds[0]?.reads.find((r) => r.kind === 'events')?.fieldSelector).toBe(
      'involvedObject.kind=PersistentVolumeClaim',
    );
    const crash = registry.get('crashloop-analysis')!;
    const logs = crash.rounds[1]?.reads.find((r) => r.id === 'previous-logs');
    expect(logs).toMatchObject({ kind: 'logs', previous: true, forEach: { where: 'restarting', each: 'container' } });
  });

  it('never reads secrets and scopes cluster-wide kinds correctly', () => {
    for (const t of registry.list()) {
      for (const round of t.rounds) {
        for (const read of round.reads) {
          expect(read.kind).not.toBe('secrets');
          if (read.kind !== 'logs' && !RESOURCES[read.kind].namespaced) expect(read.scope).toBe('cluster');
        }
      }
    }
  });
});

describe('template validation', () => {
  let dir: string;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function shipped(id: string): Record<string, unknown> {
    return parse(readFileSync(join(defaultTemplatesDir(), `${id}.yaml`), 'utf8')) as Record<string, unknown>;
  }

  function tempDirWith(files: Record<string, string>): string {
    dir = mkdtempSync(join(tmpdir(), 'calmops-templates-'));
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  }

  function rejection(doc: unknown, name = 'pvc-binding.yaml'): TemplateValidationError {
    const d = tempDirWith({ [name]: typeof doc === 'string' ? doc : stringify(doc) });
    try {
      loadTemplates(d);
    } catch (error) {
      expect(error).toBeInstanceOf(TemplateValidationError);
      return error as TemplateValidationError;
    }
    throw new Error('template was accepted');
  }

  it('loads a valid template from another folder', () => {
    const d = tempDirWith({ 'pvc-binding.yaml': stringify(shipped('pvc-binding')) });
    expect(loadTemplates(d).ids()).toEqual(['pvc-binding']);
  });

  it('rejects a schema violation naming the file and the zod path', () => {
    const doc = shipped('pvc-binding');
    (doc['rounds'] as { reads: { kind: string }[] }[])[0]!.reads[1]!.kind = 'secrets';
    const error = rejection(doc);
    expect(error.file).toContain('pvc-binding.yaml');
    expect(error.issues[0]?.path).toBe('rounds[0].reads[1].kind');
    expect(error.message).toMatch(/pvc-binding\.yaml: rounds\[0\]\.reads\[1\]\.kind: /);
  });

  it('rejects a mutating action labelled SAFE and a write step without rollback', () => {
    const doc = shipped('pvc-binding');
    const actions = doc['nextActions'] as { type: string; safety: string }[];
    const mutating = actions.findIndex((a) => a.type === 'mutating');
    actions[mutating]!.safety = 'SAFE';
    expect(rejection(doc).message).toContain(`nextActions[${mutating}]: a mutating action cannot be labelled SAFE`);

    const doc2 = shipped('pvc-binding');
    const steps = (doc2['remediation'] as { steps: { mode: string; rollback?: string }[] }[])[0]!.steps;
    const write = steps.findIndex((s) => s.mode === 'write');
    delete steps[write]!.rollback;
    expect(rejection(doc2).message).toContain(`remediation[0].steps[${write}]: a write step needs a rollback`);
  });

  it('rejects a file whose name differs from the id', () => {
    expect(rejection(shipped('pvc-binding'), 'pvc.yaml').message).toContain(
      'id "pvc-binding" must equal the file name "pvc"',
    );
  });

  it('rejects duplicate read ids', () => {
    const doc = shipped('pvc-binding');
    const reads = (doc['rounds'] as { reads: { id: string }[] }[])[0]!.reads;
    reads[1]!.id = reads[0]!.id;
    expect(rejection(doc).message).toContain('rounds[0].reads[1].id: duplicate read id "pvcs"');
  });

  it('rejects forEach on a read of the same or a later round', () => {
    const doc = shipped('pvc-binding');
    const rounds = doc['rounds'] as { reads: { forEach?: { read: string } }[] }[];
    rounds[1]!.reads[0]!.forEach!.read = 'consumer-events';
    expect(rejection(doc).message).toContain(
      'rounds[1].reads[0].forEach.read: "consumer-events" is not a read of an earlier round',
    );
  });

  it('rejects required evidence that no read produces', () => {
    const doc = shipped('pvc-binding');
    (doc['evidence'] as { required: string[] }).required.push('quotas');
    expect(rejection(doc).message).toContain('evidence.required[4]: no read produces evidence type "quotas"');
  });

  it('rejects placeholders out of scope and cluster-scoped kinds read per namespace', () => {
    const doc = shipped('pvc-binding');
    const actions = doc['nextActions'] as { when: string; command: string }[];
    actions[0]!.command = 'kubectl describe pvc {{resource.name}} -n {{namespace}}';
    expect(rejection(doc).message).toContain('nextActions[0].command: placeholder {{resource.name}} is not available');

    const doc2 = shipped('pvc-binding');
    const reads = (doc2['rounds'] as { reads: { id: string; scope?: string }[] }[])[0]!.reads;
    const sc = reads.findIndex((r) => r.id === 'storageclasses');
    delete reads[sc]!.scope;
    expect(rejection(doc2).message).toContain(`rounds[0].reads[${sc}].scope: storageclasses are cluster-scoped`);
  });

  it('rejects a cluster-wide list of a namespaced kind without a selector, and logs without a pod', () => {
    const doc = shipped('dns-failure');
    const reads = (doc['rounds'] as { reads: Record<string, unknown>[] }[])[0]!.reads;
    delete reads[0]!['labelSelector'];
    expect(rejection(doc, 'dns-failure.yaml').message).toContain(
      'rounds[0].reads[0].scope: a cluster-wide pods read needs a label or field selector',
    );

    const doc2 = shipped('crashloop-analysis');
    const logs = (doc2['rounds'] as { reads: Record<string, unknown>[] }[])[1]!.reads[0]!;
    delete logs['forEach'];
    expect(rejection(doc2, 'crashloop-analysis.yaml').message).toContain(
      'a logs read needs a pod: forEach over a pods read, or name',
    );
  });

  it('rejects invalid YAML with its line', () => {
    const error = rejection('id: pvc-binding\nid: again\n');
    expect(error.message).toMatch(/pvc-binding\.yaml: line 2: invalid YAML: duplicated mapping key/);
  });

  it('rejects an empty folder', () => {
    const d = tempDirWith({ 'README.md': 'not a template' });
    expect(() => loadTemplates(d)).toThrow(/no \*\.yaml templates found/);
  });

  it('parses a single document through parseTemplate', () => {
    const text = readFileSync(join(defaultTemplatesDir(), 'route-5xx.yaml'), 'utf8');
    expect(parseTemplate(text, '/x/route-5xx.yaml').id).toBe('route-5xx');
    expect(() => parseTemplate(text, '/x/other.yaml')).toThrow(TemplateValidationError);
  });
});
