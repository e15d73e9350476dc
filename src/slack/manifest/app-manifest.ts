import { isMap, isSeq, parseDocument } from 'yaml';
import { APP_MANIFEST_YAML } from './app-manifest-text.generated.js';

/**
 * The Slack app manifest (`manifest.yaml` at the repository root) with the deployment's request URL filled in, ready
 * to paste into Slack. The manifest's text is compiled in (app-manifest-text.generated.ts), so a bundled CLI prints
 * it without finding the repository on disk.
 */

export class ManifestUrlError extends Error {
  override readonly name = 'ManifestUrlError';
}

/** The path every Slack request arrives on (the stack's only API route). */
export const SLACK_REQUEST_PATH = '/slack/events';

/** Checks a request URL the way Slack will: https, a host, and here also the stack's route. */
export function checkRequestUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch (cause) {
    throw new ManifestUrlError(`"${raw.slice(0, 200)}" is not a URL; give the stack output SlackRequestUrl`, { cause });
  }
  if (url.protocol !== 'https:') throw new ManifestUrlError('Slack only sends requests to https:// URLs');
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new ManifestUrlError('the request URL carries no credentials, query or fragment');
  }
  if (!url.pathname.endsWith(SLACK_REQUEST_PATH)) {
    throw new ManifestUrlError(
      `the request URL ends in ${SLACK_REQUEST_PATH} (the stack output SlackRequestUrl does); got ${url.pathname}`,
    );
  }
  return url.toString();
}

export interface ManifestOptions {
  /** The stack output SlackRequestUrl. */
  requestUrl: string;
  /** The app's and bot's name in Slack, for a second install (say a staging stack) beside the first. */
  name?: string;
}

/** The manifest as YAML, its comments kept, with every request URL (and optionally the name) replaced. */
export function renderManifest(options: ManifestOptions, source: string = APP_MANIFEST_YAML): string {
  const url = checkRequestUrl(options.requestUrl);
  const doc = parseDocument(source);
  const commands = doc.getIn(['features', 'slash_commands']);
  if (isSeq(commands)) {
    for (const command of commands.items) if (isMap(command)) command.set('url', url);
  }
  doc.setIn(['settings', 'event_subscriptions', 'request_url'], url);
  doc.setIn(['settings', 'interactivity', 'request_url'], url);
  if (options.name !== undefined) {
    const name = options.name.trim();
    if (!/^[\p{L}\p{N} ._-]{1,35}$/u.test(name)) {
      throw new ManifestUrlError('the name is 1–35 letters, digits, spaces, dots, dashes or underscores');
    }
    doc.setIn(['display_information', 'name'], name);
    doc.setIn(['features', 'bot_user', 'display_name'], name.toLowerCase().replace(/[^a-z0-9._-]+/g, '-'));
  }
  doc.commentBefore = [
    ` Slack app manifest for calmops, for ${url}`,
    ' Paste it at https://api.slack.com/apps → Create New App → From an app manifest (or, for an existing app,',
    ' into its App Manifest editor), then install the app and put its credentials (docs/deploy.md).',
  ].join('\n');
  return doc.toString({ lineWidth: 0 });
}

/** The same manifest as JSON, which Slack's editor accepts too. */
export function renderManifestJson(options: ManifestOptions, source: string = APP_MANIFEST_YAML): string {
  return `${JSON.stringify(parseDocument(renderManifest(options, source)).toJS(), null, 2)}\n`;
}
