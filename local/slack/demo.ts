/**
 * The demo workspace the stand-in starts with: a requester, a senior approver and another engineer, the bot,
 * an approver group and a senior group, an incident channel the bot is in, one it is not in, and a DM.
 */

export interface StandInUser {
  id: string;
  name: string;
  real_name: string;
  is_bot?: boolean;
  tz?: string;
}

export interface StandInChannel {
  id: string;
  name: string;
  is_member: boolean;
  is_im?: boolean;
  is_private?: boolean;
  /** The other person of a DM. */
  user?: string;
}

export interface StandInUsergroup {
  id: string;
  handle: string;
  name: string;
  users: string[];
}

export const DEMO_IDS = {
  team: 'TCALMOPS',
  botUser: 'UCALMOPSBOT',
  botId: 'BCALMOPS',
  requester: 'UREQUESTER',
  senior: 'USENIOR',
  engineer: 'UENGINEER',
  approvers: 'SAPPROVERS',
  seniors: 'SSENIORS',
  incidents: 'CINCIDENTS',
  notMember: 'CRANDOM',
  dm: 'DREQUESTER',
} as const;

export function demoUsers(): StandInUser[] {
  return [
    { id: DEMO_IDS.requester, name: 'alex', real_name: 'Alex Rivera (on call)', tz: 'Europe/Berlin' },
    { id: DEMO_IDS.senior, name: 'sam', real_name: 'Sam Okafor (senior SRE)', tz: 'Europe/London' },
    { id: DEMO_IDS.engineer, name: 'eve', real_name: 'Eve Lindqvist (platform engineer)', tz: 'Europe/Stockholm' },
    { id: DEMO_IDS.botUser, name: 'calmops', real_name: 'calmops', is_bot: true },
  ];
}

export function demoUsergroups(): StandInUsergroup[] {
  return [
    {
      id: DEMO_IDS.approvers,
      handle: 'sre-approvers',
      name: 'SRE approvers',
      users: [DEMO_IDS.senior, DEMO_IDS.engineer],
    },
    { id: DEMO_IDS.seniors, handle: 'sre-seniors', name: 'Senior SREs', users: [DEMO_IDS.senior] },
  ];
}

export function demoChannels(): StandInChannel[] {
  return [
    { id: DEMO_IDS.incidents, name: 'incidents', is_member: true },
    { id: DEMO_IDS.notMember, name: 'random', is_member: false },
    { id: DEMO_IDS.dm, name: DEMO_IDS.dm, is_member: true, is_im: true, user: DEMO_IDS.requester },
  ];
}
