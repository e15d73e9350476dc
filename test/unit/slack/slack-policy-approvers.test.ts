import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  checkBreakGlass,
  checkHandoff,
  checkPlanReview,
  decidersFor,
  GroupMembership,
  parsePolicy,
  parsePolicyText,
  type UsergroupsApi,
} from '../../../src/policy/channel-policy.js';
import { loadTemplates } from '../../../src/triage/templates/template-registry.js';

function fakeSlack(groups: Record<string, string[]>) {
  const asked: string[] = [];
  const api: UsergroupsApi = {
    usergroups: {
      users: {
        async list({ usergroup }) {
          asked.push(usergroup);
          const users = groups[usergroup];
          if (users === undefined) throw new Error('no_such_subteam');
          return { ok: true, users: [...users] };
        },
      },
    },
  };
  return { api, asked };
}

describe('the example policy (docs/policy.example.yaml)', () => {
  const text = readFileSync(new URL('../../../docs/policy.example.yaml', import.meta.url), 'utf8');

  it('is valid with the shipped intents and sets up its listed channels and the rest', () => {
    const policy = parsePolicyText(text, { knownIntents: loadTemplates().ids(), source: 'policy.example.yaml' });
    expect(policy.forChannel('C0EXAMPLE01')).toMatchObject({
      cluster: 'prod',
      approverUsers: ['U0EXAMPLE01', 'U0EXAMPLE02'],
      seniorUsers: ['U0EXAMPLE03'],
    });
    expect(policy.forChannel('C0EXAMPLE01')?.approverGroup).toBeUndefined();
    expect(policy.forChannel('C0EXAMPLE02')).toMatchObject({
      approverGroup: 'S0EXAMPLE02',
      seniorGroup: 'S0EXAMPLE03',
    });
    expect(policy.forChannel('C0EXAMPLE02')?.seniorUsers).toBeUndefined();
    expect(policy.forChannel('C0ANYOTHER')).toMatchObject({ cluster: 'staging', approverGroup: 'S0EXAMPLE01' });
  });

  it('explains every key it sets with a comment', () => {
    const keys = [...text.matchAll(/^\s*([a-zA-Z]+):/gm)].map((m) => m[1]);
    for (const key of new Set(keys)) {
      expect(text, `no comment mentions ${key}`).toMatch(new RegExp(`#.*\\b${key}\\b|#[^\\n]*\\n\\s*${key}:`));
    }
  });
});

describe('approvers as plain user id lists', () => {
  const policy = parsePolicy({
    defaults: { cluster: 'prod', approverUsers: ['UAPPROVER', 'UAUTHOR'], seniorUsers: ['USENIOR'] },
  });
  const channel = policy.forChannel('CANY')!;
  const slack = fakeSlack({});
  const membership = new GroupMembership(slack.api, 60);

  it('set up a channel without any user group, and never ask Slack for one', async () => {
    expect(channel).toMatchObject({ approverUsers: ['UAPPROVER', 'UAUTHOR'], seniorUsers: ['USENIOR'] });
    expect(await checkHandoff(channel, membership, { userId: 'UAPPROVER', requester: 'UREQ' })).toEqual({
      allowed: true,
    });
    const refused = await checkHandoff(channel, membership, { userId: 'UOTHER', requester: 'UREQ' });
    expect(refused).toMatchObject({ allowed: false, code: 'not-requester-or-approver' });
    expect(refused.allowed ? '' : refused.reason).toContain('<@UAPPROVER> or <@UAUTHOR>');
    expect(
      await checkPlanReview(channel, membership, {
        userId: 'UAUTHOR',
        planAuthor: 'UAUTHOR',
        planHasMutatingSteps: true,
      }),
    ).toMatchObject({ code: 'plan-author' });
    expect(
      await checkBreakGlass(channel, membership, { userId: 'USENIOR', namedSenior: 'USENIOR', requester: 'UREQ' }),
    ).toEqual({ allowed: true });
    expect(
      await checkBreakGlass(channel, membership, { userId: 'UAPPROVER', namedSenior: 'UAPPROVER', requester: 'UREQ' }),
    ).toMatchObject({ code: 'not-senior' });
    expect(slack.asked).toEqual([]);
  });

  it('list the listed users as deciders', async () => {
    expect(await decidersFor(channel, membership, { kind: 'handoff', requester: 'UREQ' })).toEqual([
      'UREQ',
      'UAPPROVER',
      'UAUTHOR',
    ]);
    expect(
      await decidersFor(channel, membership, {
        kind: 'plan-review',
        planAuthor: 'UAUTHOR',
        planHasMutatingSteps: true,
      }),
    ).toEqual(['UAPPROVER']);
    expect(
      await decidersFor(channel, membership, { kind: 'break-glass', requester: 'UREQ', approverUserId: 'USENIOR' }),
    ).toEqual(['USENIOR']);
  });

  it('add to a group named beside them: a member of either decides', async () => {
    const both = parsePolicy({
      defaults: { cluster: 'prod', approverGroup: 'SAPPROVERS', approverUsers: ['UGUEST'], seniorGroup: 'SSENIORS' },
    }).forChannel('CANY')!;
    const withGroups = new GroupMembership(fakeSlack({ SAPPROVERS: ['UMEMBER'], SSENIORS: ['USENIOR'] }).api, 60);
    for (const userId of ['UMEMBER', 'UGUEST']) {
      expect(await checkPlanReview(both, withGroups, { userId })).toEqual({ allowed: true });
    }
    expect(await checkPlanReview(both, withGroups, { userId: 'UOTHER' })).toMatchObject({
      code: 'not-approver',
      reason: expect.stringContaining('members of <!subteam^SAPPROVERS> or <@UGUEST>'),
    });
    expect(await decidersFor(both, withGroups, { kind: 'plan-review' })).toEqual(['UMEMBER', 'UGUEST']);
  });

  it('replace the defaults’ group in a channel that names its own, and the other way round', () => {
    const mixed = parsePolicy({
      defaults: { cluster: 'prod', approverGroup: 'SAPPROVERS', seniorGroup: 'SSENIORS' },
      channels: {
        CLISTS: { approverUsers: ['UONE'] },
        CGROUPS: { seniorGroup: 'SOTHERS' },
      },
    });
    const lists = mixed.forChannel('CLISTS')!;
    expect(lists.approverUsers).toEqual(['UONE']);
    expect(lists.approverGroup).toBeUndefined();
    expect(lists.seniorGroup).toBe('SSENIORS');
    expect(mixed.forChannel('CGROUPS')).toMatchObject({ approverGroup: 'SAPPROVERS', seniorGroup: 'SOTHERS' });
  });

  it('refuse ids that are not user ids, duplicates and empty lists, naming the field', () => {
    expect(() => parsePolicy({ defaults: { cluster: 'a', approverUsers: ['@alex'], seniorUsers: ['U1X'] } })).toThrow(
      /defaults\.approverUsers\.0: a Slack user id/,
    );
    expect(() =>
      parsePolicy({ defaults: { cluster: 'a', approverUsers: ['U1X', 'U1X'], seniorUsers: ['U2X'] } }),
    ).toThrow(/defaults\.approverUsers: a user is listed twice/);
    expect(() => parsePolicy({ defaults: { cluster: 'a', approverUsers: [], seniorUsers: ['U2X'] } })).toThrow(
      /defaults\.approverUsers: name at least one user/,
    );
    expect(() => parsePolicy({ channels: { C01A: { cluster: 'a', approverUsers: ['U1X'] } } })).toThrow(
      /channels\.C01A: needs cluster, approverGroup and seniorGroup/,
    );
  });
});
