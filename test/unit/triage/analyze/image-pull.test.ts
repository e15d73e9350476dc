import { describe, expect, it } from 'vitest';
import { classifyPullError } from '../../../../src/triage/analyze/image-pull.js';
import { makePod, node, podEvent, run, runningOk } from '../../../support/analyzers/units.js';

describe('log and message classifiers', () => {
  it('classifies pull errors as containerd, CRI-O and Docker word them', () => {
    expect(classifyPullError('docker.io/acme/x:1: not found')).toBe('IMAGE_NOT_FOUND');
    expect(classifyPullError('reading manifest 1.0 in quay.io/acme/x: manifest unknown')).toBe('IMAGE_NOT_FOUND');
    expect(
      classifyPullError('pull access denied for acme/x, repository does not exist or may require authorization'),
    ).toBe('IMAGE_PULL_UNAUTHORIZED');
    expect(classifyPullError('no matching manifest for linux/arm64/v8 in the manifest list entries')).toBe(
      'IMAGE_PLATFORM_MISMATCH',
    );
    expect(
      classifyPullError(
        'choosing image instance: no image found in manifest list for architecture arm64, variant "v8", OS linux',
      ),
    ).toBe('IMAGE_PLATFORM_MISMATCH');
    expect(classifyPullError('dial tcp 52.1.1.1:443: i/o timeout')).toBe('IMAGE_PULL_BACKOFF');
  });
});

describe('image-pull names pods, nodes and what works elsewhere', () => {
  const image = 'registry.example.com/tax:4.2';
  const owner = { kind: 'ReplicaSet', name: 'tax-6c9f7' };
  const pulling = (name: string, nodeName: string, message: string) =>
    makePod(name, {
      owner,
      node: nodeName,
      containers: [{ name: 'tax', image }],
      statuses: [
        { name: 'tax', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff', message } } },
      ],
    });

  it('names every failing pod with its node and platform, and the replicas that run the image', () => {
    const msg = 'Back-off pulling image: no match for platform in manifest: not found';
    const objects = [
      node('arm-1', { labels: { 'kubernetes.io/arch': 'arm64' } }),
      node('arm-2', { labels: { 'kubernetes.io/arch': 'arm64' } }),
      node('amd-1'),
      pulling('tax-6c9f7-lllwq', 'arm-1', msg),
      pulling('tax-6c9f7-qvg2p', 'arm-2', msg),
      makePod('tax-6c9f7-tnx6q', {
        owner,
        node: 'amd-1',
        containers: [{ name: 'tax', image }],
        statuses: [runningOk('tax')],
        ready: true,
      }),
    ];
    const [f] = run(['image-pull'], objects);
    expect(f?.code).toBe('IMAGE_PLATFORM_MISMATCH');
    expect(f?.message).toContain('no build for linux/arm64 (node arm-1, arm-2); replicas on linux/amd64 nodes run it');
    expect(f?.evidence).toContain(
      '2 pods affected: tax-6c9f7-lllwq (node arm-1, linux/arm64), tax-6c9f7-qvg2p (node arm-2, linux/arm64)',
    );
    expect(f?.evidence).toContain('the same image runs ready on tax-6c9f7-tnx6q (node amd-1, linux/amd64)');
  });

  it('reads "no such host" for the registry as a wrong image reference and shows the reference that works', () => {
    const typo = 'r.ecr.amazoanws.com/ship/label:1.4.2';
    const pod = makePod('label-8b6d5-crrsq', {
      owner: { kind: 'ReplicaSet', name: 'label-8b6d5' },
      node: 'n1',
      containers: [{ name: 'label', image: typo }],
      statuses: [{ name: 'label', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff' } } }],
    });
    const failed = podEvent(
      'label-8b6d5-crrsq',
      'Failed',
      `Failed to pull image "${typo}": failed to do request: Head "https://r.ecr.amazoanws.com/v2/ship/label/manifests/1.4.2": dial tcp: lookup r.ecr.amazoanws.com on 10.0.0.2:53: no such host`,
      1,
    );
    const old = makePod('label-6f9c8-259z8', {
      owner: { kind: 'ReplicaSet', name: 'label-6f9c8' },
      node: 'n2',
      containers: [{ name: 'label', image: 'r.ecr.amazonaws.com/ship/label:1.4.1' }],
      statuses: [runningOk('label')],
      ready: true,
    });
    const [f] = run(['image-pull'], [pod, failed, old]);
    expect(f?.code).toBe('IMAGE_PULL_BACKOFF');
    expect(f?.confidence).toBeGreaterThanOrEqual(0.9);
    expect(f?.message).toContain('its registry host r.ecr.amazoanws.com does not exist (no such host)');
    expect(f?.evidence).toContain(
      'label-6f9c8-259z8 (node n2) runs r.ecr.amazonaws.com/ship/label:1.4.1 from registry r.ecr.amazonaws.com',
    );
  });
});
