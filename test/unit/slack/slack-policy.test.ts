import { describe, expect, it } from 'vitest';
import {
  checkApproval,
  checkBreakGlass,
  checkHandoff,
  checkIntent,
  checkNamespace,
  checkPlanReview,
  decidersFor,
  GroupMembership,
  PolicyError,
  parsePolicy,
  parsePolicyText,
  type UsergroupsApi,
} from '../../../src/policy/channel-policy.js';

function fakeSlack(groups: Record<string, string[]>) {
  const calls: string[] = [];
  const api: UsergroupsApi = {
    usergroups: {
      users: {
        async list({ usergroup }) {
          calls.push(usergroup);
          const users = groups[usergroup];
          if (users === undefined) throw new Error('no_such_subteam');
          return { ok: true, users: [...users] };
        },
      },
    },
  };
  return { api, calls, groups };
}

const yaml = `
defaults:
  cluster: shared
  approverGroup: SAPPROVERS
  seniorGroup: SSENIORS
channels:
  CPAYMENTS:
    cluster: prod-eu
    allowedIntents: [pvc-binding, crashloop-analysis]
membershipCacheSeconds: 60
`;

describe('channel policy file', () => {
  it('reads YAML and merges channel rules over defaults', () => {
    const policy = parsePolicyText(yaml, { knownIntents: ['pvc-binding', 'crashloop-analysis', 'oom-killed'] });
    expect(policy.forChannel('CPAYMENTS')).toEqual({
      channelId: 'CPAYMENTS',
      cluster: 'prod-eu',
      allowedIntents: ['pvc-binding', 'crashloop-analysis'],
      approverGroup: 'SAPPROVERS',
      seniorGroup: 'SSENIORS',
      allowedNamespaces: [],
      scope: { namespaces: ['*'] },
    });
    expect(policy.forChannel('COTHER')).toMatchObject({ cluster: 'shared', allowedIntents: '*' });
    expect(policy.listedChannels()).toEqual(['CPAYMENTS']);
  });

  it('reads each channel’s namespaces, a listed channel replacing the defaults', () => {
    const policy = parsePolicy({
      defaults: { cluster: 'a', approverGroup: 'S01', seniorGroup: 'S02', allowedNamespaces: ['shared-db'] },
      channels: {
        CPLATFORM: { allowedNamespaces: ['*', 'kube-system', 'openshift-*'] },
        CTEAMA: { allowedNamespaces: ['team-a-*'] },
      },
    });
    expect(policy.forChannel('CPLATFORM')?.scope).toEqual({ namespaces: ['*', 'kube-system', 'openshift-*'] });
    expect(policy.forChannel('COTHER')?.scope).toEqual({ namespaces: ['shared-db'] });
    expect(policy.forChannel('CTEAMA')?.scope).toEqual({ namespaces: ['team-a-*'] });
    expect(() =>
      parsePolicy({ defaults: { cluster: 'a', approverGroup: 'S01', seniorGroup: 'S02', allowedNamespaces: ['a*b'] } }),
    ).toThrowError(/defaults\.allowedNamespaces\.0: a namespace name, a name prefix followed by "\*"/);
  });

  it('lets a channel without a list read every namespace but the platform’s', () => {
    const policy = parsePolicy({ defaults: { cluster: 'a', approverGroup: 'S01', seniorGroup: 'S02' } });
    const channel = policy.forChannel('CANY');
    expect(channel?.scope).toEqual({ namespaces: ['*'] });
    if (channel === undefined) return;
    expect(checkNamespace(channel, 'shop')).toEqual({ allowed: true });
    expect(checkNamespace(channel, 'kube-system')).toMatchObject({ allowed: false, code: 'namespace-outside-channel' });
    expect(checkNamespace(channel, 'openshift-ingress')).toMatchObject({ allowed: false });
  });

  it('reads JSON too', () => {
    const policy = parsePolicyText(
      JSON.stringify({ channels: { C01A: { cluster: 'a', approverGroup: 'S01', seniorGroup: 'S02' } } }),
    );
    expect(policy.forChannel('C01A')?.cluster).toBe('a');
    expect(policy.forChannel('C2')).toBeUndefined();
  });

  it('names every problem in an invalid file', () => {
    expect(() => parsePolicy({ channels: { notachannel: { cluster: 'Bad Name' } }, extra: true })).toThrowError(
      PolicyError,
    );
    expect(() =>
      parsePolicy({ channels: { C01A: { cluster: 'a', approverGroup: 'nope' } }, extra: true }),
    ).toThrowError(/channels\.C01A\.approverGroup: a Slack user group id.*extra/);
    expect(() => parsePolicy({ channels: { notachannel: {} } })).toThrowError(
      /channels\.notachannel: a Slack channel id/,
    );
    expect(() => parsePolicy({ channels: { C01A: { cluster: 'a' } } })).toThrowError(
      /channels\.C01A: needs cluster, approverGroup and seniorGroup/,
    );
    expect(() => parsePolicyText(yaml, { knownIntents: ['pvc-binding'] })).toThrowError(
      /unknown intent "crashloop-analysis"/,
    );
    expect(() => parsePolicyText('channels: [unclosed')).toThrowError(/not valid YAML or JSON: line \d+: /);
    // A key given twice is a mistake to point at, not a value to pick.
    expect(() =>
      parsePolicyText('membershipCacheSeconds: 30\nchannels: {}\nmembershipCacheSeconds: 60\n', { source: 'p.yaml' }),
    ).toThrowError('The channel policy in p.yaml is not valid YAML or JSON: line 3: duplicated mapping key');
    expect(() => parsePolicyText('channels: {}\n---\nchannels: {}\n')).toThrowError(/expected a single document/);
    // YAML 1.2: `on` and `yes` are words, so a channel list of them is read as written.
    expect(parsePolicyText('defaults:\n  allowedIntents: [on, yes]\n').file.defaults?.allowedIntents).toEqual([
      'on',
      'yes',
    ]);
  });

  it('allows only the listed intents', () => {
    const channel = parsePolicyText(yaml).forChannel('CPAYMENTS')!;
    expect(checkIntent(channel, 'pvc-binding')).toEqual({ allowed: true });
    expect(checkIntent(channel, 'oom-killed')).toMatchObject({ allowed: false, code: 'intent-not-allowed' });
  });
});

describe('who may decide', () => {
  const channel = parsePolicyText(yaml).forChannel('CPAYMENTS')!;
  const slack = fakeSlack({ SAPPROVERS: ['UAPPROVER', 'UAUTHOR', 'USENIOR'], SSENIORS: ['USENIOR'] });
  const membership = new GroupMembership(slack.api, 60);

  it('handoffs: the requester or an approver', async () => {
    expect(await checkHandoff(channel, membership, { userId: 'UREQ', requester: 'UREQ' })).toEqual({ allowed: true });
    expect(await checkHandoff(channel, membership, { userId: 'UAPPROVER', requester: 'UREQ' })).toEqual({
      allowed: true,
    });
    expect(await checkHandoff(channel, membership, { userId: 'UOTHER', requester: 'UREQ' })).toMatchObject({
      allowed: false,
      code: 'not-requester-or-approver',
    });
  });

  it('plan review: an approver who is not the author of a mutating plan', async () => {
    const plan = { planAuthor: 'UAUTHOR', planHasMutatingSteps: true };
    expect(await checkPlanReview(channel, membership, { userId: 'UAPPROVER', ...plan })).toEqual({ allowed: true });
    expect(await checkPlanReview(channel, membership, { userId: 'UAUTHOR', ...plan })).toMatchObject({
      code: 'plan-author',
    });
    expect(
      await checkPlanReview(channel, membership, {
        userId: 'UAUTHOR',
        planAuthor: 'UAUTHOR',
        planHasMutatingSteps: false,
      }),
    ).toEqual({
      allowed: true,
    });
    expect(await checkPlanReview(channel, membership, { userId: 'UREQ', ...plan })).toMatchObject({
      code: 'not-approver',
    });
  });

  it('break-glass: only the named senior, in the senior group, never the requester', async () => {
    const base = { namedSenior: 'USENIOR', requester: 'UREQ' };
    expect(await checkBreakGlass(channel, membership, { userId: 'USENIOR', ...base })).toEqual({ allowed: true });
    expect(await checkBreakGlass(channel, membership, { userId: 'UREQ', ...base })).toMatchObject({
      code: 'requester-cannot-approve',
    });
    expect(await checkBreakGlass(channel, membership, { userId: 'UAPPROVER', ...base })).toMatchObject({
      code: 'not-named-senior',
    });
    expect(
      await checkBreakGlass(channel, membership, { userId: 'UAPPROVER', namedSenior: 'UAPPROVER', requester: 'UREQ' }),
    ).toMatchObject({ code: 'not-senior' });
    expect(
      await checkBreakGlass(channel, membership, { userId: 'USENIOR', namedSenior: 'USENIOR', requester: 'USENIOR' }),
    ).toMatchObject({ code: 'requester-cannot-approve' });
  });

  it('routes clicks by approval kind and lists the deciders the store should hold', async () => {
    expect(await checkApproval(channel, membership, { kind: 'postmortem', requester: 'UREQ' }, 'UREQ')).toEqual({
      allowed: true,
    });
    expect(await decidersFor(channel, membership, { kind: 'handoff', requester: 'UREQ' })).toEqual([
      'UREQ',
      'UAPPROVER',
      'UAUTHOR',
      'USENIOR',
    ]);
    expect(
      await decidersFor(channel, membership, {
        kind: 'plan-review',
        planAuthor: 'UAUTHOR',
        planHasMutatingSteps: true,
      }),
    ).toEqual(['UAPPROVER', 'USENIOR']);
    expect(
      await decidersFor(channel, membership, { kind: 'break-glass', approverUserId: 'USENIOR', requester: 'UREQ' }),
    ).toEqual(['USENIOR']);
    expect(
      await decidersFor(channel, membership, { kind: 'break-glass', approverUserId: 'UREQ', requester: 'UREQ' }),
    ).toEqual([]);
  });
});

describe('group membership cache', () => {
  it('asks Slack once per group within the TTL and again after it', async () => {
    const slack = fakeSlack({ SAPPROVERS: ['U1'] });
    let now = 1_000_000;
    const membership = new GroupMembership(slack.api, 60, () => now);
    expect(await membership.isMember('SAPPROVERS', 'U1')).toBe(true);
    slack.groups['SAPPROVERS'] = ['U2'];
    now += 59_000;
    expect(await membership.isMember('SAPPROVERS', 'U1')).toBe(true);
    now += 2_000;
    expect(await membership.isMember('SAPPROVERS', 'U1')).toBe(false);
    expect(await membership.isMember('SAPPROVERS', 'U2')).toBe(true);
    expect(slack.calls).toEqual(['SAPPROVERS', 'SAPPROVERS']);
  });
});
