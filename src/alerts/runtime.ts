import { loadConfig, resolveAlertsToken } from '../config.js';
import type { SlackAppDeps } from '../slack/deps.js';
import { webClientPoster } from '../workflow/deps.js';
import type { AlertHandlerDeps } from './handler.js';
import { handleAlertGroup } from './handler.js';
import { createAlertsHttpHandler, type RoutedHttpHandler } from './http.js';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The alert route's dependencies, built over the Slack function's own (its store, Slack client, channel policy,
 * templates and workflow), so an alert session is started exactly as `/triage` starts one. The alert token's
 * configuration is read here, apart from Slack's: a mistake in it fails the alert route, never the Slack one.
 */
export function createAlertsRoute(env: Env, slack: SlackAppDeps): RoutedHttpHandler {
  const config = loadConfig(env, ['alerts']);
  let botUser: Promise<string> | undefined;
  const requester = (): Promise<string> => {
    if (slack.botUserId !== undefined) return Promise.resolve(slack.botUserId);
    botUser ??= slack.client.auth
      .test()
      .then((r) => {
        if (r.user_id === undefined) throw new Error('auth.test named no bot user');
        return r.user_id;
      })
      .catch((error: unknown) => {
        // Forget the failure so the next alert asks again instead of failing forever.
        botUser = undefined;
        throw error;
      });
    return botUser;
  };
  const poster = webClientPoster(slack.client);
  const handlerDeps = (): AlertHandlerDeps => ({
    store: slack.store,
    // Read per notification: the Slack function replaces the policy in force before each request.
    policy: slack.policy,
    templates: slack.registry,
    slack: poster,
    workflow: slack.workflow,
    requester,
    now: slack.now ?? (() => new Date()),
    ...(slack.logger === undefined ? {} : { logger: slack.logger }),
  });
  return createAlertsHttpHandler({
    token: () => resolveAlertsToken(config.alerts),
    handle: (group) => handleAlertGroup(handlerDeps(), group),
    ...(slack.logger === undefined ? {} : { logger: slack.logger }),
  });
}
