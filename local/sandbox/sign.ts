import { slackSignature } from '../../src/slack/receiver.js';

export { slackSignature };

/** The headers Slack adds to every request it sends to an app, signed with the app's signing secret. */
export interface SignedHeaders {
  'content-type': string;
  'x-slack-request-timestamp': string;
  'x-slack-signature': string;
  'user-agent': string;
}

const SLACK_USER_AGENT = 'Slackbot 1.0 (+https://api.slack.com/robots)';

export function signedHeaders(
  signingSecret: string,
  body: string,
  contentType: 'application/json' | 'application/x-www-form-urlencoded',
  now: Date = new Date(),
): SignedHeaders {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'content-type': contentType,
    'x-slack-request-timestamp': String(timestamp),
    'x-slack-signature': slackSignature(signingSecret, timestamp, body),
    'user-agent': SLACK_USER_AGENT,
  };
}
