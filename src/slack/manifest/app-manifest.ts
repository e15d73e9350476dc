import { isDeepStrictEqual } from 'node:util';
import { readYaml, yamlScalar } from '../../yaml-text.js';
import { APP_MANIFEST_YAML } from './app-manifest-text.generated.js';
import { type InlineScalar, inlineScalars, type PathSegment, replaceInlineScalars } from './inline-scalars.js';

/**
 * The Slack app manifest (`manifest.yaml` at the repository root) with the deployment's request URL filled in, ready
 * to paste into Slack. The manifest's text is compiled in (app-manifest-text.generated.ts), so a bundled CLI prints
 * it without finding the repository on disk.
 */

export class ManifestUrlError extends Error {
  override readonly name = 'ManifestUrlError';
}

/** The manifest text has no place for a value calmops fills in, or one it cannot replace in place. */
export class ManifestSourceError extends Error {
  override readonly name = 'ManifestSourceError';
}

/** The path every Slack request arrives on (the stack's only API route). */
const SLACK_REQUEST_PATH = '/slack/events';

/** Checks a request URL the way Slack will: https, a host, and here also the stack's route. */
function checkRequestUrl(raw: string): string {
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

/**
 * The manifest as YAML, with every request URL (and optionally the name) replaced. The values are replaced where
 * they stand in the text, so its comments, which say why each scope is asked for, reach Slack's editor unchanged.
 */
export function renderManifest(options: ManifestOptions, source: string = APP_MANIFEST_YAML): string {
  const url = checkRequestUrl(options.requestUrl);
  const values: { path: readonly PathSegment[]; value: string }[] = [
    ...slashCommandIndexes(source).map((i) => ({ path: ['features', 'slash_commands', i, 'url'], value: url })),
    { path: ['settings', 'event_subscriptions', 'request_url'], value: url },
    { path: ['settings', 'interactivity', 'request_url'], value: url },
  ];
  if (options.name !== undefined) {
    const name = options.name.trim();
    if (!/^[\p{L}\p{N} ._-]{1,35}$/u.test(name)) {
      throw new ManifestUrlError('the name is 1–35 letters, digits, spaces, dots, dashes or underscores');
    }
    values.push({ path: ['display_information', 'name'], value: name });
    values.push({
      path: ['features', 'bot_user', 'display_name'],
      value: name.toLowerCase().replace(/[^a-z0-9._-]+/g, '-'),
    });
  }
  const header = [
    `# Slack app manifest for calmops, for ${url}`,
    '# Paste it at https://api.slack.com/apps → Create New App → From an app manifest (or, for an existing app,',
    '# into its App Manifest editor), then install the app and put its credentials (docs/deploy.md).',
    '',
    '',
  ].join('\n');
  return header + fillIn(source, values);
}

/** The same manifest as JSON, which Slack's editor accepts too. */
export function renderManifestJson(options: ManifestOptions, source: string = APP_MANIFEST_YAML): string {
  return `${JSON.stringify(readYaml(renderManifest(options, source)), null, 2)}\n`;
}

function slashCommandIndexes(source: string): number[] {
  const manifest = readYaml(source) as { features?: { slash_commands?: unknown } } | null;
  const commands = manifest?.features?.slash_commands;
  return Array.isArray(commands) ? commands.map((_, i) => i) : [];
}

/**
 * The source with each value set. The result is read back and must be the source's data with exactly these values
 * set, so a layout the in-place edit misreads fails here rather than reaching Slack.
 */
function fillIn(source: string, values: readonly { path: readonly PathSegment[]; value: string }[]): string {
  const spots = inlineScalars(source);
  const edits = values.map(({ path, value }) => {
    const at: InlineScalar | undefined = spots.find((s) => isDeepStrictEqual(s.path, path));
    if (at === undefined) {
      throw new ManifestSourceError(`the manifest has no one-line value at ${path.join('.')} to fill in`);
    }
    return { at, scalar: yamlScalar(value) };
  });
  const text = replaceInlineScalars(source, edits);
  const expected = readYaml(source);
  for (const { path, value } of values) setAt(expected, path, value);
  if (!isDeepStrictEqual(readYaml(text), expected)) {
    throw new ManifestSourceError('the manifest is laid out in a way its values cannot be replaced in place');
  }
  return text;
}

function setAt(root: unknown, path: readonly PathSegment[], value: string): void {
  let node = root as Record<PathSegment, unknown>;
  for (const segment of path.slice(0, -1)) node = node[segment] as Record<PathSegment, unknown>;
  node[path.at(-1) as PathSegment] = value;
}
