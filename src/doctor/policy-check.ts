import { readFile } from 'node:fs/promises';
import type { WebClient } from '@slack/web-api';
import { type Policy, PolicyError, parsePolicyText } from '../policy/channel-policy.js';
import { type CheckResult, fail, pass } from './report.js';

/** Where the channel policy is: a file, inline text (CALMOPS_POLICY_JSON), or the deployed SSM parameter. */
export type PolicyLocation =
  | { kind: 'file'; file: string }
  | { kind: 'inline'; text: string; name: string }
  | { kind: 'parameter'; name: string }
  | { kind: 'none' };

export type ReadParameter = (name: string) => Promise<string>;

const START = 'start from docs/policy.example.yaml (reference: docs/policy.md)';

function describe(location: PolicyLocation): string {
  switch (location.kind) {
    case 'file':
      return location.file;
    case 'inline':
      return location.name;
    case 'parameter':
      return `SSM ${location.name}`;
    default:
      return '(none)';
  }
}

async function textOf(location: PolicyLocation, readParameter: ReadParameter): Promise<string> {
  if (location.kind === 'file') return readFile(location.file, 'utf8');
  if (location.kind === 'inline') return location.text;
  if (location.kind === 'parameter') return readParameter(location.name);
  throw new Error('no policy configured');
}

export interface PolicyCheckOutcome {
  results: CheckResult[];
  policy?: Policy;
}

/** Parses the policy with the functions' own rules and the shipped intents, and checks the clusters it names. */
export async function checkPolicy(
  location: PolicyLocation,
  options: { readParameter: ReadParameter; knownIntents: readonly string[]; clusters?: readonly string[] },
): Promise<PolicyCheckOutcome> {
  const target = describe(location);
  if (location.kind === 'none') {
    return {
      results: [
        fail(
          'policy',
          target,
          'no channel policy: every channel is refused',
          `${START}; deploy it with -c policyFile=<file>, or pass --policy <file> here to check one`,
        ),
      ],
    };
  }
  let text: string;
  try {
    text = await textOf(location, options.readParameter);
  } catch (error) {
    const fix =
      location.kind === 'parameter'
        ? 'deploy with -c policyFile=<file> (it creates the parameter), and run this with ssm:GetParameter on it'
        : START;
    return { results: [fail('policy', target, `cannot read it: ${(error as Error).message.split('\n')[0]}`, fix)] };
  }
  let policy: Policy;
  try {
    policy = parsePolicyText(text, { knownIntents: options.knownIntents, source: target });
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    return { results: [fail('policy', target, error.message, `fix the fields named; ${START}`)] };
  }
  const channels = policy.listedChannels();
  const unlisted = policy.forUnlistedChannels();
  const hasDefaults = unlisted !== undefined;
  if (channels.length === 0 && !hasDefaults) {
    return {
      results: [fail('policy', target, 'valid, but it sets up no channel: every channel is refused', START)],
      policy,
    };
  }
  const known = options.clusters;
  if (known !== undefined) {
    const named = [...new Set([...channels.map((c) => policy.forChannel(c)?.cluster), unlisted?.cluster])].filter(
      (c): c is string => c !== undefined,
    );
    const unknown = named.filter((c) => !known.includes(c));
    if (unknown.length > 0) {
      return {
        results: [
          fail(
            'policy',
            target,
            `names cluster(s) ${unknown.join(', ')}, but only ${known.join(', ')} ${known.length === 1 ? 'is' : 'are'} configured`,
            'add them to the deploy (-c clusters=…, each gets a kubeconfig secret) or fix the policy',
          ),
        ],
        policy,
      };
    }
  }
  const detail = `${channels.length} listed channel(s)${hasDefaults ? ', defaults for every other channel' : ''}`;
  return { results: [pass('policy', target, detail)], policy };
}

/**
 * Asks Slack about what the policy names: each listed channel exists and has the bot in it, each user group
 * exists and has members. A policy can be valid and still name a channel nobody invited the bot to.
 */
export async function checkPolicyReferences(policy: Policy, client: WebClient): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const channel of policy.listedChannels()) {
    try {
      const info = await client.conversations.info({ channel });
      const name = info.channel?.name === undefined ? channel : `#${info.channel.name}`;
      if (info.channel?.is_member === false) {
        results.push(
          fail(
            'policy-references',
            channel,
            `${name} exists, but the bot is not in it`,
            `in ${name}: /invite @calmops`,
          ),
        );
      } else {
        results.push(pass('policy-references', channel, `${name}: the bot is a member`));
      }
    } catch (error) {
      const code = (error as { data?: { error?: string } }).data?.error ?? 'error';
      results.push(
        fail(
          'policy-references',
          channel,
          `Slack does not know this channel to the bot: ${code}`,
          'copy the id from the channel’s About tab; for a private channel, invite the bot first',
        ),
      );
    }
  }
  const groups = new Set<string>();
  for (const rules of [policy.file.defaults, ...Object.values(policy.file.channels)]) {
    if (rules?.approverGroup !== undefined) groups.add(rules.approverGroup);
    if (rules?.seniorGroup !== undefined) groups.add(rules.seniorGroup);
  }
  for (const group of groups) {
    try {
      const answer = await client.usergroups.users.list({ usergroup: group });
      const members = answer.users?.length ?? 0;
      results.push(
        members > 0
          ? pass('policy-references', group, `user group with ${members} member(s)`)
          : fail(
              'policy-references',
              group,
              'the user group has no members: nobody it names can approve',
              'add people to it in Slack, or list them as approverUsers / seniorUsers',
            ),
      );
    } catch (error) {
      const code = (error as { data?: { error?: string } }).data?.error ?? 'error';
      results.push(
        fail(
          'policy-references',
          group,
          `Slack cannot list this user group: ${code}`,
          code === 'missing_scope'
            ? 'add the usergroups:read scope (calmops manifest) and reinstall the app'
            : 'copy the group id under People → User groups → ⋯ → Copy group ID, or use approverUsers / seniorUsers lists',
        ),
      );
    }
  }
  return results;
}
