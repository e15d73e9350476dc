import { describe, expect, it } from 'vitest';
import { type LabelSelectorRequirement, requirementHolds } from '../../../src/cluster/label-selector.js';
import { StoredObject } from '../../../src/cluster/stored-object.js';
import type { KubeObject } from '../../../src/cluster/types.js';
import {
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  SelectorSyntaxError,
  validateFieldSelector,
} from '../../../src/snapshot-api/selectors.js';

const labels = { app: 'web', tier: 'frontend', 'app.kubernetes.io/version': '3', empty: '' };

function selects(selector: string, target: Record<string, string> | undefined): boolean {
  return matchesLabels(parseLabelSelector(selector), target);
}

describe('label selectors', () => {
  it.each([
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app=api', false],
    ['app!=api', true],
    ['app!=web', false],
    ['missing!=x', true],
    ['tier in (frontend,backend)', true],
    ['tier in (backend)', false],
    ['tier notin (backend, batch)', true],
    ['tier notin (frontend)', false],
    ['missing notin (x)', true],
    ['missing in (x)', false],
    ['app', true],
    ['missing', false],
    ['!missing', true],
    ['!app', false],
    ['empty=', true],
    ['empty', true],
    ['app.kubernetes.io/version>2', true],
    ['app.kubernetes.io/version<3', false],
    ['app=web,tier in (frontend),!canary', true],
    ['app=web,tier=backend', false],
    [' app = web , tier in ( frontend , x ) ', true],
  ])('%j selects the labels: %s', (selector, expected) => {
    expect(selects(selector, labels)).toBe(expected);
  });

  it('treats an object without labels as having none', () => {
    expect(selects('!app', undefined)).toBe(true);
    expect(selects('app', undefined)).toBe(false);
    expect(selects('app!=web', undefined)).toBe(true);
  });

  it('parses set requirements into their values', () => {
    expect(parseLabelSelector('env in (prod, staging),!canary')).toEqual([
      { key: 'env', operator: 'in', values: ['prod', 'staging'] },
      { key: 'canary', operator: '!exists', values: [] },
    ]);
  });

  it.each([
    'app=web,',
    'tier in ()',
    'tier in (a',
    'tier in a)',
    'app=we b',
    '-app=web',
    'app=-web',
    'Bad_Prefix/app=web',
    'version>two',
    'app===web',
  ])('rejects %j', (selector) => {
    expect(() => parseLabelSelector(selector)).toThrow(SelectorSyntaxError);
  });
});

const pod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-1', namespace: 'shop' },
  spec: { nodeName: 'worker-1', hostNetwork: false },
  status: { phase: 'Running' },
};

const event: KubeObject = {
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name: 'web-1.abc', namespace: 'shop' },
  involvedObject: { kind: 'Pod', name: 'web-1', namespace: 'shop', uid: 'u-1', fieldPath: 'spec.containers{web}' },
  reason: 'BackOff',
  type: 'Warning',
  source: { component: 'kubelet', host: 'worker-1' },
};

function fieldSelects(resource: string, selector: string, object: KubeObject): boolean {
  const parsed = parseFieldSelector(selector);
  validateFieldSelector(resource, parsed);
  return matchesFields(resource, parsed, StoredObject.of(object));
}

describe('field selectors', () => {
  it.each([
    ['metadata.name=web-1', true],
    ['metadata.name==web-1', true],
    ['metadata.namespace=shop', true],
    ['metadata.name!=web-1', false],
    ['spec.nodeName=worker-1', true],
    ['spec.nodeName=', false],
    ['status.phase!=Running', false],
    ['status.phase=Running,spec.nodeName=worker-1', true],
    ['spec.hostNetwork=false', true],
  ])('pods: %j → %s', (selector, expected) => {
    expect(fieldSelects('pods', selector, pod)).toBe(expected);
  });

  it.each([
    ['involvedObject.kind=Pod,involvedObject.name=web-1,involvedObject.namespace=shop,involvedObject.uid=u-1', true],
    ['involvedObject.fieldPath=spec.containers{web}', true],
    ['type=Warning', true],
    ['type!=Warning', false],
    ['reason=BackOff', true],
    ['source=kubelet', true],
    ['involvedObject.name=web-2', false],
  ])('events: %j → %s', (selector, expected) => {
    expect(fieldSelects('events', selector, event)).toBe(expected);
  });

  it('a pending pod matches an empty nodeName, as the scheduler queries it', () => {
    const pending = { ...pod, spec: {} };
    expect(fieldSelects('pods', 'spec.nodeName=', pending)).toBe(true);
  });

  it('unescapes commas and equals signs in values', () => {
    expect(parseFieldSelector('metadata.name=a\\,b\\=c,type=x')).toEqual([
      { field: 'metadata.name', operator: '=', value: 'a,b=c' },
      { field: 'type', operator: '=', value: 'x' },
    ]);
  });

  it('rejects field labels the real server does not support for the resource', () => {
    expect(() => fieldSelects('pods', 'reason=BackOff', pod)).toThrow('field label not supported: reason');
    expect(() => fieldSelects('persistentvolumeclaims', 'status.phase=Bound', pod)).toThrow(SelectorSyntaxError);
  });

  it('rejects malformed selectors', () => {
    expect(() => parseFieldSelector('metadata.name')).toThrow(SelectorSyntaxError);
    expect(() => parseFieldSelector('metadata.name=a\\x')).toThrow(SelectorSyntaxError);
  });
});

describe('one requirement rule for the analyzers and the snapshot server', () => {
  const served = (selector: string, labels: Record<string, string>) =>
    matchesLabels(parseLabelSelector(selector), labels);

  it('decides the same for both shapes of a requirement', () => {
    const labels = { app: 'web', replicas: '3' };
    const cases: Array<[string, LabelSelectorRequirement]> = [
      ['app in (web,api)', { key: 'app', operator: 'In', values: ['web', 'api'] }],
      ['app notin (web)', { key: 'app', operator: 'NotIn', values: ['web'] }],
      ['tier', { key: 'tier', operator: 'Exists' }],
      ['!tier', { key: 'tier', operator: 'DoesNotExist' }],
      ['replicas>2', { key: 'replicas', operator: 'Gt', values: ['2'] }],
      ['replicas<2', { key: 'replicas', operator: 'Lt', values: ['2'] }],
    ];
    for (const [text, requirement] of cases) {
      expect(served(text, labels), text).toBe(requirementHolds(requirement, labels));
    }
  });

  it('reads only the object’s own labels, and compares only integers', () => {
    expect(requirementHolds({ key: 'constructor', operator: 'Exists' }, {})).toBe(false);
    expect(served('constructor', {})).toBe(false);
    expect(requirementHolds({ key: 'v', operator: 'Gt', values: ['1'] }, { v: '2.5' })).toBe(false);
    expect(requirementHolds({ key: 'v', operator: 'Gt', values: ['1'] }, { v: '2' })).toBe(true);
  });
});
