import { NAMESPACE_ACTION_PREFIX } from '../../../views/namespace-choice.js';

export const ACTIONS = {
  approve: 'approval_approve',
  deny: 'approval_deny',
  requestChanges: 'approval_request_changes',
  /** Matched by prefix: every hypothesis button of one message needs its own action_id. */
  hypothesis: /^hypothesis_choose(:\d+)?$/,
  resolved: 'session_resolved',
  breakGlassOpen: 'breakglass_open',
  /** Matched by prefix, like the hypotheses: one button per namespace a request's words matched. */
  namespace: new RegExp(`^${NAMESPACE_ACTION_PREFIX}(:\\d+)?$`),
} as const;

/** Every action id calmops puts on a button; anything else is answered as an unknown button. */
export function isKnownAction(actionId: string): boolean {
  return Object.values(ACTIONS).some((known) =>
    typeof known === 'string' ? known === actionId : known.test(actionId),
  );
}
