import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import * as z from 'zod';

/**
 * Who may do what, per channel. The file names, for each channel, the cluster it talks about, the intents it may
 * run and the Slack user groups whose members approve (and, for break-glass, the senior group). Group membership is
 * read from Slack (`usergroups.users.list`) and cached briefly, so a change in Slack takes effect within a minute.
 * Identity always comes from the signed payload's `user.id`; nothing here trusts a name typed into a message.
 */

const SlackUsergroupId = z.string().regex(/^S[A-Z0-9]{2,}$/, 'a Slack user group id such as S0123ABCD');
const SlackChannelId = z.string().regex(/^[CGD][A-Z0-9]{2,}$/, 'a Slack channel id such as C0123ABCD');
const ClusterName = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'a cluster name: lower-case letters, digits and "-"');
const IntentList = z.union([z.literal('*'), z.array(z.string().regex(/^[a-z0-9-]+$/)).min(1)]);
const NamespaceName = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'a namespace name: lower-case letters, digits and "-"');

const ChannelRulesSchema = z.strictObject({
  cluster: ClusterName.optional(),
  /** `*` or a list of intent ids this channel may run. */
  allowedIntents: IntentList.optional(),
  approverGroup: SlackUsergroupId.optional(),
  seniorGroup: SlackUsergroupId.optional(),
  /**
   * Namespaces a session's thread may read besides the session's own (cluster-scoped kinds are always readable).
   * A listed channel's list replaces the defaults' list.
   */
  allowedNamespaces: z.array(NamespaceName).max(50).optional(),
});

export const PolicyFileSchema = z.strictObject({
  /** Applies to every channel not listed, and fills in what a listed channel leaves out. Omit to allow only listed channels. */
  defaults: ChannelRulesSchema.optional(),
  channels: z.record(SlackChannelId, ChannelRulesSchema).default({}),
  /** How long user group membership is cached, in seconds. */
  membershipCacheSeconds: z.number().int().min(0).max(3600).default(60),
});
export type PolicyFile = z.input<typeof PolicyFileSchema>;

export interface ChannelPolicy {
  channelId: string;
  cluster: string;
  allowedIntents: '*' | readonly string[];
  approverGroup: string;
  seniorGroup: string;
  /** Namespaces readable from a session's thread besides the session's own. */
  allowedNamespaces: readonly string[];
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
    if (merged.cluster === undefined || merged.approverGroup === undefined || merged.seniorGroup === undefined) {
      return undefined;
    }
    return {
      channelId,
      cluster: merged.cluster,
      allowedIntents: merged.allowedIntents ?? '*',
      approverGroup: merged.approverGroup,
      seniorGroup: merged.seniorGroup,
      allowedNamespaces: merged.allowedNamespaces ?? [],
    };
  }

  /** Channels the file lists by id (App Home looks for a person's sessions there). */
  listedChannels(): string[] {
    return Object.keys(this.file.channels);
  }

  get membershipCacheSeconds(): number {
    return this.file.membershipCacheSeconds;
  }
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
      problems.push(`channels.${id}: needs cluster, approverGroup and seniorGroup (here or in defaults)`);
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
    data = parseYaml(text);
  } catch (error) {
    throw new PolicyError(
      `The channel policy${options.source ? ` in ${options.source}` : ''} is not valid YAML or JSON`,
      {
        cause: error,
      },
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
  | 'outside-session-channel';

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

/** Handoffs and "mark resolved": the requester, or a member of the approver group. */
export async function checkHandoff(
  channel: ChannelPolicy,
  membership: GroupMembership,
  input: { userId: string; requester: string },
): Promise<PolicyDecision> {
  if (input.userId === input.requester) return ALLOWED;
  if (await membership.isMember(channel.approverGroup, input.userId)) return ALLOWED;
  return refuse(
    'not-requester-or-approver',
    `Only <@${input.requester}> (who started this session) or a member of <!subteam^${channel.approverGroup}> can decide this.`,
  );
}

/** Plan review: an approver, who is not the plan's author when the plan has mutating steps. */
export async function checkPlanReview(
  channel: ChannelPolicy,
  membership: GroupMembership,
  input: { userId: string; planAuthor?: string; planHasMutatingSteps?: boolean },
): Promise<PolicyDecision> {
  if (!(await membership.isMember(channel.approverGroup, input.userId))) {
    return refuse('not-approver', `Only members of <!subteam^${channel.approverGroup}> can review remediation plans.`);
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
  if (!(await membership.isMember(channel.seniorGroup, input.userId))) {
    return refuse('not-senior', `Break-glass approvals need a member of <!subteam^${channel.seniorGroup}>.`);
  }
  return ALLOWED;
}

export type ApprovalKind = 'handoff' | 'plan-review' | 'break-glass' | 'postmortem';

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
  const approvers = [...(await membership.members(channel.approverGroup))];
  const seniors = await membership.members(channel.seniorGroup);
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
