import { randomBytes } from 'node:crypto';
import { viewProblems } from './block-rules.js';
import type { StandInView } from './records.js';
import { newId, type StandInState } from './state.js';
import { type Answer, type Args, fail, str } from './wire.js';

/** `views.*`: modals opened from a trigger id and App Home tabs, checked against Slack's view rules. */

function storeView(state: StandInState, raw: unknown, user: string | undefined, existing?: StandInView): StandInView {
  const problems = viewProblems(raw);
  if (problems.length > 0) fail('invalid_arguments', problems);
  const view = raw as Record<string, unknown>;
  const stored: StandInView = {
    ...view,
    type: view['type'] as 'modal' | 'home',
    id: existing?.id ?? newId('V'),
    hash: `${Date.now()}.${randomBytes(4).toString('hex')}`,
    team_id: state.teamId,
    app_id: 'ACALMOPS',
    bot_id: state.botId,
    state: { values: {} },
    ...(user === undefined ? {} : { user }),
  };
  state.views.set(stored.id, stored);
  return stored;
}

function findView(state: StandInState, args: Args): StandInView {
  const id = str(args['view_id']);
  const external = str(args['external_id']);
  const view =
    id !== undefined
      ? state.views.get(id)
      : [...state.views.values()].find((v) => external && v.external_id === external);
  if (view === undefined || view.closed) fail('not_found');
  const hash = str(args['hash']);
  if (hash !== undefined && hash !== view.hash) fail('hash_conflict');
  return view;
}

export function viewMethods(state: StandInState): Record<string, (args: Args) => Answer> {
  return {
    'views.open': (args) => {
      const trigger = str(args['trigger_id']);
      if (trigger === undefined) fail('invalid_trigger_id');
      if (typeof args['view'] === 'string')
        fail('invalid_arguments', ['[ERROR] failed to parse view [json-pointer:/view]']);
      const view = storeView(state, args['view'], state.triggers.get(trigger));
      if (view.type !== 'modal') fail('invalid_arguments', ['[ERROR] must be modal [json-pointer:/view/type]']);
      return { view };
    },
    'views.push': (args) => {
      const trigger = str(args['trigger_id']);
      if (trigger === undefined) fail('invalid_trigger_id');
      return { view: storeView(state, args['view'], state.triggers.get(trigger)) };
    },
    'views.update': (args) => {
      const existing = findView(state, args);
      return { view: storeView(state, args['view'], existing.user, existing) };
    },
    'views.publish': (args) => {
      const user = str(args['user_id']);
      if (user === undefined || !state.users.has(user)) fail('user_not_found');
      const raw = args['view'];
      if (typeof raw !== 'object' || raw === null || (raw as Args)['type'] !== 'home') {
        fail('invalid_arguments', ['[ERROR] must be home [json-pointer:/view/type]']);
      }
      const previous = state.homes.get(user);
      const view = storeView(state, raw, user, previous === undefined ? undefined : state.views.get(previous));
      state.homes.set(user, view.id);
      return { view };
    },
  };
}
