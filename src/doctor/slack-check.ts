import type { WebClient } from '@slack/web-api';
import * as z from 'zod';
import { createSlackClient } from '../slack/client.js';
import { type CheckResult, fail, pass } from './report.js';

/** Where the doctor finds the bot token: the environment (as `npm start` has it) or the deployed secret. */
export type SlackSource = { kind: 'env'; botToken: string } | { kind: 'secret'; secretId: string };

export type ReadSecret = (secretId: string) => Promise<string>;

const SlackSecretSchema = z.object({
  signingSecret: z.string().min(1),
  botToken: z.string().regex(/^xoxb-/, 'must be the Bot User OAuth Token (xoxb-…)'),
});

const putSecret = (secretId: string) =>
  `aws secretsmanager put-secret-value --secret-id ${secretId} --secret-string ` +
  `'{"signingSecret":"<Basic Information → Signing Secret>","botToken":"xoxb-…"}'`;

/** What Slack's `auth.test` errors mean for the person fixing them. */
function tokenFix(code: string): string {
  switch (code) {
    case 'invalid_auth':
    case 'not_authed':
      return 'the token is not valid: copy the Bot User OAuth Token from OAuth & Permissions and put it again';
    case 'account_inactive':
    case 'token_revoked':
    case 'token_expired':
      return 'the app was uninstalled or its token revoked: reinstall the app (OAuth & Permissions) and put the new token';
    default:
      return 'check that this machine reaches Slack (or SLACK_API_URL) and try again';
  }
}

export interface SlackCheckOutcome {
  results: CheckResult[];
  /** A client with a working token, for the checks that ask Slack about the policy's channels and groups. */
  client?: WebClient;
}

export async function checkSlack(
  source: SlackSource,
  options: { readSecret: ReadSecret; apiUrl?: string },
): Promise<SlackCheckOutcome> {
  const results: CheckResult[] = [];
  let token: string;
  if (source.kind === 'env') {
    token = source.botToken;
  } else {
    let raw: string;
    try {
      raw = await options.readSecret(source.secretId);
    } catch (error) {
      results.push(
        fail(
          'slack-secret',
          source.secretId,
          `cannot read the secret: ${(error as Error).message.split('\n')[0]}`,
          'deploy the stack (it creates the secret), and run this with credentials allowed secretsmanager:GetSecretValue on it',
        ),
      );
      return { results };
    }
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      json = undefined;
    }
    const parsed = SlackSecretSchema.safeParse(json);
    if (!parsed.success) {
      // Never echo the value: it may be a real credential in the wrong shape.
      const why = json === undefined ? 'is not JSON (still the placeholder the stack created?)' : 'is incomplete';
      const fields = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      results.push(
        fail(
          'slack-secret',
          source.secretId,
          `the secret ${why}${json === undefined ? '' : `: ${fields}`}`,
          putSecret(source.secretId),
        ),
      );
      return { results };
    }
    results.push(pass('slack-secret', source.secretId, 'readable, with a signing secret and a bot token'));
    token = parsed.data.botToken;
  }
  const client = createSlackClient({
    token,
    ...(options.apiUrl === undefined ? {} : { slackApiUrl: options.apiUrl }),
    timeoutMs: 5000,
    retries: 1,
  });
  try {
    const answer = await client.auth.test();
    const bot = answer.user_id === undefined ? 'the bot' : `bot ${answer.user ?? ''} (${answer.user_id})`.trim();
    results.push(pass('slack-token', 'auth.test', `${bot} in ${answer.team ?? answer.team_id ?? 'the workspace'}`));
    return { results, client };
  } catch (error) {
    const code = (error as { data?: { error?: string } }).data?.error ?? (error as { code?: string }).code ?? 'error';
    results.push(fail('slack-token', 'auth.test', `Slack refused the token: ${code}`, tokenFix(code)));
    return { results };
  }
}
