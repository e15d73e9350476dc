import { channelFor } from './chat.js';
import type { StandInState } from './state.js';
import { type Answer, type Args, fail, str } from './wire.js';

/** What the bot looks up about the workspace: itself, people, user groups and channels. */
export function directoryMethods(state: StandInState): Record<string, (args: Args) => Answer> {
  return {
    'auth.test': () => ({
      url: 'https://calmops-sandbox.slack.com/',
      team: 'calmops sandbox',
      user: 'calmops',
      team_id: state.teamId,
      user_id: state.botUserId,
      bot_id: state.botId,
      is_enterprise_install: false,
    }),
    'usergroups.users.list': (args) => {
      const id = str(args['usergroup']);
      const group = id === undefined ? undefined : state.usergroups.get(id);
      if (group === undefined) fail('no_such_subteam');
      return { users: [...group.users] };
    },
    'users.info': (args) => {
      const id = str(args['user']);
      const user = id === undefined ? undefined : state.users.get(id);
      if (user === undefined) fail('user_not_found');
      return {
        user: {
          id: user.id,
          team_id: state.teamId,
          name: user.name,
          real_name: user.real_name,
          is_bot: user.is_bot ?? false,
          tz: user.tz ?? 'UTC',
          profile: { real_name: user.real_name, display_name: user.name },
        },
      };
    },
    'conversations.info': (args) => {
      const channel = channelFor(state, args);
      return {
        channel: {
          id: channel.id,
          name: channel.name,
          is_channel: !channel.is_im && !channel.is_private,
          is_group: channel.is_private ?? false,
          is_im: channel.is_im ?? false,
          is_private: channel.is_private ?? channel.is_im ?? false,
          is_member: channel.is_member,
          ...(channel.user === undefined ? {} : { user: channel.user }),
        },
      };
    },
  };
}
