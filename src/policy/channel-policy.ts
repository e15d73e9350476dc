import { readFile } from 'node:fs/promises';
import * as z from 'zod';
import {
  describeReadScope,
  isPlatformNamespace,
  type ReadScope,
  SCOPE_ENTRY,
  scopeAllows,
} from '../cluster/read-only-guard.js';
import { KUBE_LABEL_PATTERN } from '../limits.js';
import { readYaml } from '../yaml-text.js';

/**
 * Who may do what, per channel. The file names, for each channel, the cluster it talks about, the intents it may
 * run and who approves (and, for break-glass, who is senior): Slack user groups, plain lists of user ids (for
 * workspaces without user groups), or both. Group membership is read from Slack (`usergroups.users.list`) and cached
 * briefly, so a change in Slack takes effect within a minute. Identity always comes from the signed payload's
 * `user.id`; nothing here trusts a name typed into a message.
 */

const SlackUsergroupId = z.string().regex(/^S[A-Z0-9]{2,}$/, 'a Slack user group id such as S0123ABCD');
const SlackUserId = z.string().regex(/^[UW][A-Z0-9]{2,}$/, 'a Slack user id such as U0123ABCD');
const UserList = z
  .array(SlackUserId)
  .min(1, 'name at least one user, or leave the list out')
  .max(100)
  .refine((ids) => new Set(ids).size === ids.length, 'a user is listed twice');
const SlackChannelId = z.string().regex(/^[CGD][A-Z0-9]{2,}$/, 'a Slack channel id such as C0123ABCD');
const ClusterName = z.string().regex(KUBE_LABEL_PATTERN, 'a cluster name: lower-case letters, digits and "-"');
const IntentList = z.union([z.literal('*'), z.array(z.string().regex(/^[a-z0-9-]+$/)).min(1)]);
const NamespaceName = z.string().regex(KUBE_LABEL_PATTERN, 'a namespace name: lower-case letters, digits and "-"');

const ScopeEntry = z
  .string()
  .regex(SCOPE_ENTRY, 'a namespace name, a name prefix followed by "*" (team-a-*), or "*" alone');

const ChannelRulesSchema = z.strictObject({
  cluster: ClusterName.optional(),
  /** `*` or a list of intent ids this channel may run. */
  allowedIntents: IntentList.optional(),
  approverGroup: SlackUsergroupId.optional(),
  /** Approvers by user id, besides (or instead of) the approver group's members. */
  approverUsers: UserList.optional(),
  seniorGroup: SlackUsergroupId.optional(),
  /** Break-glass seniors by user id, besides (or instead of) the senior group's members. */
  seniorUsers: UserList.optional(),
  /**
   * The namespaces sessions in this channel may read and post about, and the only ones `/triage … in <ns>` and
   * alerts may open a session in: names, `prefix*` patterns, or `*` for every namespace that is not the platform's.
   * Absent: every namespace that is not the platform's. A listed channel's list replaces the defaults' list.
   */
  allowedNamespaces: z.array(ScopeEntry).max(50).optional(),
});

/** A value of an alert's `cluster` label: whatever the monitoring stack names its clusters, within reason. */
const ClusterLabel = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'a cluster label value: letters, digits and . _ : -');

/** Whether an alert's cluster label is one a route of the policy could name. */
export function isClusterLabel(value: string): boolean {
  return ClusterLabel.safeParse(value).success;
}
const SeverityLabel = z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'a severity label value such as critical');

/** Alerts whose labels all match the given ones go to `channel`; the first matching route wins. */
const AlertRouteSchema = z
  .strictObject({
    namespace: NamespaceName.optional(),
    cluster: ClusterLabel.optional(),
    severity: SeverityLabel.optional(),
    channel: SlackChannelId,
  })
  .refine((r) => r.namespace !== undefined || r.cluster !== undefined || r.severity !== undefined, {
    message: 'a route matches on namespace, cluster or severity (at least one)',
  });

const AlertsPolicySchema = z.strictObject({
  /** Where alert sessions open unless a route says otherwise. */
  channel: SlackChannelId,
  routes: z.array(AlertRouteSchema).max(100).default([]),
});

/** The labels alert routing looks at. */
export interface AlertRouteLabels {
  namespace?: string;
  cluster?: string;
  severity?: string;
}

export const PolicyFileSchema = z.strictObject({
  /** Applies to every channel not listed, and fills in what a listed channel leaves out. Omit to allow only listed channels. */
  defaults: ChannelRulesSchema.optional(),
  channels: z.record(SlackChannelId, ChannelRulesSchema).default({}),
  /** How long user group membership is cached, in seconds. */
  membershipCacheSeconds: z.number().int().min(0).max(3600).default(60),
  /** Where alerts open sessions. Omit it and calmops accepts no alerts. */
  alerts: AlertsPolicySchema.optional(),
});

/** Who approves (or who is senior): a user group's members, listed users, or both. At least one is set. */
export interface Deciders {
  group?: string;
  users?: readonly string[];
}

export interface ChannelPolicy {
  channelId: string;
  cluster: string;
  allowedIntents: '*' | readonly string[];
  approverGroup?: string;
  approverUsers?: readonly string[];
  seniorGroup?: string;
  seniorUsers?: readonly string[];
  /** Namespaces (and patterns) the channel lists; empty when it lists none. */
  allowedNamespaces: readonly string[];
  /** What sessions in the channel may read: the list, or every namespace but the platform's when there is none. */
  scope: ReadScope;
}

export class PolicyError extends Error {
  override readonly name = 'PolicyError';
}

export class Policy {
  constructor(readonly file: z.output<typeof PolicyFileSchema>) {}

  /** The rules for a channel, or undefined when the channel has none (not listed and no complete defaults). */
  forChannel(channelId: string): ChannelPolicy | undefined {
    const listed = this.file.channels[channelId];
    const defaults = this.file.defaults;
    if (listed === undefined && defaults === undefined) return undefined;
    const merged = { ...defaults, ...listed };
    const approvers = decidersOf(listed, defaults, 'approverGroup', 'approverUsers');
    const seniors = decidersOf(listed, defaults, 'seniorGroup', 'seniorUsers');
    if (merged.cluster === undefined || approvers === undefined || seniors === undefined) return undefined;
    return {
      channelId,
      cluster: merged.cluster,
      allowedIntents: merged.allowedIntents ?? '*',
      ...(approvers.group === undefined ? {} : { approverGroup: approvers.group }),
      ...(approvers.users === undefined ? {} : { approverUsers: approvers.users }),
      ...(seniors.group === undefined ? {} : { seniorGroup: seniors.group }),
      ...(seniors.users === undefined ? {} : { seniorUsers: seniors.users }),
      allowedNamespaces: merged.allowedNamespaces ?? [],
      scope: { namespaces: merged.allowedNamespaces ?? ['*'] },
    };
  }

  /** The rules every channel the file does not list gets, or undefined when such channels are refused. */
  forUnlistedChannels(): ChannelPolicy | undefined {
    if (this.file.defaults === undefined) return undefined;
    return new Policy({ ...this.file, channels: {} }).forChannel('*');
  }

  /** Channels the file lists by id (App Home looks for a person's sessions there). */
  listedChannels(): string[] {
    return Object.keys(this.file.channels);
  }

  get membershipCacheSeconds(): number {
    return this.file.membershipCacheSeconds;
  }

  /** The channel an alert with these labels opens its session in, or undefined when the policy takes no alerts. */
  alertChannel(labels: AlertRouteLabels): string | undefined {
    const alerts = this.file.alerts;
    if (alerts === undefined) return undefined;
    const route = alerts.routes.find(
      (r) =>
        (r.namespace === undefined || r.namespace === labels.namespace) &&
        (r.cluster === undefined || r.cluster === labels.cluster) &&
        (r.severity === undefined || r.severity === labels.severity),
    );
    return route?.channel ?? alerts.channel;
  }
}

type ChannelRules = z.output<typeof ChannelRulesSchema>;

/**
 * A group and a user list name one set of people, so a channel that names either replaces both of the defaults':
 * a channel with its own `approverUsers` does not also take the defaults' `approverGroup`.
 */
function decidersOf(
  listed: ChannelRules | undefined,
  defaults: ChannelRules | undefined,
  groupKey: 'approverGroup' | 'seniorGroup',
  usersKey: 'approverUsers' | 'seniorUsers',
): Deciders | undefined {
  const names = (rules: ChannelRules | undefined) => rules?.[groupKey] !== undefined || rules?.[usersKey] !== undefined;
  const source = names(listed) ? listed : names(defaults) ? defaults : undefined;
  if (source === undefined) return undefined;
  return {
    ...(source[groupKey] === undefined ? {} : { group: source[groupKey] }),
    ...(source[usersKey] === undefined ? {} : { users: source[usersKey] }),
  };
}

/** The channel's approvers: its approver group's members and its listed approvers. */
export function approversOf(channel: ChannelPolicy): Deciders {
  return {
    ...(channel.approverGroup === undefined ? {} : { group: channel.approverGroup }),
    ...(channel.approverUsers === undefined ? {} : { users: channel.approverUsers }),
  };
}

/** The channel's break-glass seniors: its senior group's members and its listed seniors. */
export function seniorsOf(channel: ChannelPolicy): Deciders {
  return {
    ...(channel.seniorGroup === undefined ? {} : { group: channel.seniorGroup }),
    ...(channel.seniorUsers === undefined ? {} : { users: channel.seniorUsers }),
  };
}

/** How a message names the deciders: `<!subteam^S…>`, `<@U1>, <@U2>`, or both. */
export function mentionDeciders(deciders: Deciders): string {
  const parts = [
    ...(deciders.group === undefined ? [] : [`members of <!subteam^${deciders.group}>`]),
    ...(deciders.users ?? []).map((u) => `<@${u}>`),
  ];
  return parts.length <= 1 ? (parts[0] ?? 'nobody') : `${parts.slice(0, -1).join(', ')} or ${parts.at(-1)}`;
}

function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const where = i.path.length > 0 ? i.path.join('.') : '(root)';
      // A bad record key reports "Invalid key in record"; the key's own rule says what is wrong with it.
      const inner = i.code === 'invalid_key' ? i.issues[0]?.message : undefined;
      return `${where}: ${inner ?? i.message}`;
    })
    .join('; ');
}

/**
 * Validates a policy object. With `knownIntents`, every listed intent must exist, and every listed channel must end up
 * with a cluster, an approver group and a senior group (from itself or the defaults).
 */
export function parsePolicy(
  input: unknown,
  options: { knownIntents?: readonly string[]; source?: string } = {},
): Policy {
  const where = options.source === undefined ? 'The channel policy' : `The channel policy in ${options.source}`;
  const result = PolicyFileSchema.safeParse(input);
  if (!result.success)
    throw new PolicyError(`${where} is invalid: ${formatIssues(result.error)}`, { cause: result.error });
  const policy = new Policy(result.data);
  const problems: string[] = [];
  const known = options.knownIntents === undefined ? undefined : new Set(options.knownIntents);
  const scopes: [string, z.output<typeof ChannelRulesSchema> | undefined][] = [
    ['defaults', result.data.defaults],
    ...Object.entries(result.data.channels).map(([id, rules]): [string, typeof rules] => [`channels.${id}`, rules]),
  ];
  for (const [path, rules] of scopes) {
    if (known !== undefined && Array.isArray(rules?.allowedIntents)) {
      for (const intent of rules.allowedIntents) {
        if (!known.has(intent)) problems.push(`${path}.allowedIntents: unknown intent "${intent}"`);
      }
    }
  }
  for (const id of Object.keys(result.data.channels)) {
    if (policy.forChannel(id) === undefined) {
      problems.push(
        `channels.${id}: needs cluster, approverGroup and seniorGroup (here or in defaults; approverUsers and ` +
          'seniorUsers lists may stand in for the groups)',
      );
    }
  }
  const alerts = result.data.alerts;
  if (alerts !== undefined) {
    const targets: [string, string][] = [
      ['alerts.channel', alerts.channel],
      ...alerts.routes.map((r, i): [string, string] => [`alerts.routes.${i}.channel`, r.channel]),
    ];
    for (const [path, channelId] of targets) {
      if (policy.forChannel(channelId) === undefined) {
        problems.push(`${path}: ${channelId} has no channel policy (list it under channels, or set complete defaults)`);
      }
    }
  }
  if (problems.length > 0) throw new PolicyError(`${where} is invalid: ${problems.join('; ')}`);
  return policy;
}

/** Parses YAML or JSON text (JSON is YAML, so one parser reads both). */
export function parsePolicyText(
  text: string,
  options: { knownIntents?: readonly string[]; source?: string } = {},
): Policy {
  let data: unknown;
  try {
    data = readYaml(text);
  } catch (error) {
    const reason = error instanceof Error ? `: ${error.message}` : '';
    throw new PolicyError(
      `The channel policy${options.source ? ` in ${options.source}` : ''} is not valid YAML or JSON${reason}`,
      { cause: error },
    );
  }
  return parsePolicy(data ?? {}, options);
}

export async function loadPolicyFile(
  path: string,
  options: { knownIntents?: readonly string[] } = {},
): Promise<Policy> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new PolicyError(`Cannot read the channel policy file ${path}`, { cause: error });
  }
  return parsePolicyText(text, { ...options, source: path });
}

/** The subset of the Web API client membership needs; a WebClient satisfies it. */
export interface UsergroupsApi {
  usergroups: { users: { list(args: { usergroup: string }): Promise<{ ok?: boolean; users?: string[] }> } };
}

/** Reads user group members from Slack, caching each group for `ttlSeconds`. */
export class GroupMembership {
  private readonly cache = new Map<string, { users: ReadonlySet<string>; until: number }>();

  constructor(
    private readonly api: UsergroupsApi,
    private readonly ttlSeconds = 60,
    private readonly now: () => number = Date.now,
  ) {}

  async members(groupId: string): Promise<ReadonlySet<string>> {
    const cached = this.cache.get(groupId);
    const at = this.now();
    if (cached !== undefined && cached.until > at) return cached.users;
    const result = await this.api.usergroups.users.list({ usergroup: groupId });
    const users = new Set(result.users ?? []);
    this.cache.set(groupId, { users, until: at + this.ttlSeconds * 1000 });
    return users;
  }

  async isMember(groupId: string, userId: string): Promise<boolean> {
    return (await this.members(groupId)).has(userId);
  }

  /** Whether a person is among the deciders; the listed users answer without asking Slack. */
  async includes(deciders: Deciders, userId: string): Promise<boolean> {
    if (deciders.users?.includes(userId)) return true;
    return deciders.group === undefined ? false : this.isMember(deciders.group, userId);
  }

  /** Everyone among the deciders: the group's members and the listed users. */
  async everyone(deciders: Deciders): Promise<ReadonlySet<string>> {
    const members = deciders.group === undefined ? [] : await this.members(deciders.group);
    return new Set([...members, ...(deciders.users ?? [])]);
  }

  forget(): void {
    this.cache.clear();
  }
}

export type PolicyDecision = { allowed: true } | { allowed: false; code: RefusalCode; reason: string };

export type RefusalCode =
  | 'no-channel-policy'
  | 'intent-not-allowed'
  | 'not-requester-or-approver'
  | 'not-approver'
  | 'plan-author'
  | 'not-named-senior'
  | 'not-senior'
  | 'requester-cannot-approve'
  | 'outside-session-channel'
  | 'namespace-outside-channel';

const ALLOWED: PolicyDecision = { allowed: true };
const refuse = (code: RefusalCode, reason: string): PolicyDecision => ({ allowed: false, code, reason });

export function noChannelPolicy(channelId: string): PolicyDecision {
  return refuse(
    'no-channel-policy',
    `calmops is not set up for this channel (<#${channelId}>): the channel policy names no cluster or approvers for it. Ask your platform team to add it.`,
  );
}

export function checkIntent(channel: ChannelPolicy, intent: string): PolicyDecision {
  if (channel.allowedIntents === '*' || channel.allowedIntents.includes(intent)) return ALLOWED;
  return refuse(
    'intent-not-allowed',
    `\`${intent}\` is not enabled in this channel. Enabled here: ${channel.allowedIntents.map((i) => `\`${i}\``).join(', ')}.`,
  );
}

/** A session opens only in a namespace the channel's scope allows: a channel is its tenants' boundary. */
export function checkNamespace(channel: ChannelPolicy, namespace: string): PolicyDecision {
  if (scopeAllows(channel.scope, namespace)) return ALLOWED;
  const platform = isPlatformNamespace(namespace) ? ', a platform namespace,' : '';
  return refuse(
    'namespace-outside-channel',
    `Namespace \`${namespace.slice(0, 63)}\`${platform} is outside this channel's namespaces (${describeReadScope(channel.scope)}); nothing was started and nothing was read. Ask your platform team to add it to \`allowedNamespaces\` in the channel policy, or triage it from a channel that covers it.`,
  );
}

/** Handoffs and "mark resolved": the requester, or a member of the approver group. */
export async function checkHandoff(
  channel: ChannelPolicy,
  membership: GroupMembership,
  input: { userId: string; requester: string },
): Promise<PolicyDecision> {
  if (input.userId === input.requester) return ALLOWED;
  if (await membership.includes(approversOf(channel), input.userId)) return ALLOWED;
  return refuse(
    'not-requester-or-approver',
    `Only <@${input.requester}> (who started this session) or ${mentionDeciders(approversOf(channel))} can decide this.`,
  );
}

/** Plan review: an approver, who is not the plan's author when the plan has mutating steps. */
export async function checkPlanReview(
  channel: ChannelPolicy,
  membership: GroupMembership,
  input: { userId: string; planAuthor?: string; planHasMutatingSteps?: boolean },
): Promise<PolicyDecision> {
  if (!(await membership.includes(approversOf(channel), input.userId))) {
    return refuse('not-approver', `Only ${mentionDeciders(approversOf(channel))} can review remediation plans.`);
  }
  if (input.planHasMutatingSteps === true && input.planAuthor !== undefined && input.planAuthor === input.userId) {
    return refuse(
      'plan-author',
      'This plan changes the cluster, so someone other than its author has to review it. Ask another approver.',
    );
  }
  return ALLOWED;
}

/** Break-glass: only the named senior, who must be in the senior group and is never the requester. */
export async function checkBreakGlass(
  channel: ChannelPolicy,
  membership: GroupMembership,
  input: { userId: string; namedSenior: string; requester: string },
): Promise<PolicyDecision> {
  if (input.userId === input.requester) {
    return refuse('requester-cannot-approve', 'You asked for this override, so you cannot approve it yourself.');
  }
  if (input.userId !== input.namedSenior) {
    return refuse('not-named-senior', `Only <@${input.namedSenior}>, the senior named in the request, can approve it.`);
  }
  if (!(await membership.includes(seniorsOf(channel), input.userId))) {
    return refuse('not-senior', `Break-glass approvals need a senior: ${mentionDeciders(seniorsOf(channel))}.`);
  }
  return ALLOWED;
}

/** The facts about an approval the policy judges by; the store's approval `data` carries them. */
export interface ApprovalFacts {
  kind: string;
  requester?: string;
  approverUserId?: string;
  planAuthor?: string;
  planHasMutatingSteps?: boolean;
}

/** One entry point for button clicks: which rule applies follows from the approval's kind. */
export async function checkApproval(
  channel: ChannelPolicy,
  membership: GroupMembership,
  approval: ApprovalFacts,
  userId: string,
): Promise<PolicyDecision> {
  const requester = approval.requester ?? '';
  switch (approval.kind) {
    case 'plan-review':
      return checkPlanReview(channel, membership, {
        userId,
        ...(approval.planAuthor === undefined ? {} : { planAuthor: approval.planAuthor }),
        ...(approval.planHasMutatingSteps === undefined ? {} : { planHasMutatingSteps: approval.planHasMutatingSteps }),
      });
    case 'break-glass':
      return checkBreakGlass(channel, membership, {
        userId,
        namedSenior: approval.approverUserId ?? '',
        requester,
      });
    default:
      return checkHandoff(channel, membership, { userId, requester });
  }
}

/**
 * Everyone the policy would let decide an approval right now: what the notifier stores as the approval's
 * `allowedDeciders`, so the store's conditional decision and the policy agree.
 */
export async function decidersFor(
  channel: ChannelPolicy,
  membership: GroupMembership,
  approval: ApprovalFacts,
): Promise<string[]> {
  const approvers = [...(await membership.everyone(approversOf(channel)))];
  const seniors = await membership.everyone(seniorsOf(channel));
  let out: string[];
  switch (approval.kind) {
    case 'plan-review':
      out = approvers.filter((u) => !(approval.planHasMutatingSteps === true && u === approval.planAuthor));
      break;
    case 'break-glass':
      out =
        approval.approverUserId !== undefined &&
        approval.approverUserId !== approval.requester &&
        seniors.has(approval.approverUserId)
          ? [approval.approverUserId]
          : [];
      break;
    default:
      out = [...(approval.requester === undefined ? [] : [approval.requester]), ...approvers];
  }
  return [...new Set(out)];
}
