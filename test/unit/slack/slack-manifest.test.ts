import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ManifestSourceError,
  ManifestUrlError,
  renderManifest,
  renderManifestJson,
} from '../../../src/slack/manifest/app-manifest.js';
import { inlineScalars, replaceInlineScalars } from '../../../src/slack/manifest/inline-scalars.js';
import { readYaml } from '../../../src/yaml-text.js';

interface Manifest {
  features: { slash_commands: { command: string; should_escape: boolean }[]; app_home: { home_tab_enabled: boolean } };
  oauth_config: { scopes: { bot: string[] } };
  settings: { event_subscriptions: { bot_events: string[] }; interactivity: { is_enabled: boolean } };
}

const source = readFileSync(new URL('../../../manifest.yaml', import.meta.url), 'utf8');
const manifest = readYaml(source) as Manifest;

describe('Slack app manifest', () => {
  it('asks for exactly the scopes the code uses', () => {
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual(
      [
        'app_mentions:read',
        'channels:history',
        'channels:read',
        'chat:write',
        'commands',
        'files:write',
        'groups:history',
        'groups:read',
        'usergroups:read',
      ].sort(),
    );
  });

  it('declares /triage, the handled events, interactivity and App Home', () => {
    expect(manifest.features.slash_commands.map((c) => c.command)).toEqual(['/triage']);
    expect([...manifest.settings.event_subscriptions.bot_events].sort()).toEqual(
      ['app_home_opened', 'app_mention', 'message.channels', 'message.groups'].sort(),
    );
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(manifest.features.app_home.home_tab_enabled).toBe(true);
  });
});

describe('calmops manifest', () => {
  const url = 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod/slack/events';

  it('sets every request URL and changes nothing else', () => {
    const expected = structuredClone(readYaml(source)) as {
      features: { slash_commands: { url: string }[] };
      settings: { event_subscriptions: { request_url: string }; interactivity: { request_url: string } };
    };
    for (const command of expected.features.slash_commands) command.url = url;
    expected.settings.event_subscriptions.request_url = url;
    expected.settings.interactivity.request_url = url;
    const yaml = renderManifest({ requestUrl: url });
    expect(readYaml(yaml)).toEqual(expected);
    expect(yaml).not.toContain('example.execute-api');
    expect(JSON.parse(renderManifestJson({ requestUrl: url }))).toEqual(expected);
  });

  it('keeps every comment of manifest.yaml, under a header naming the URL', () => {
    const yaml = renderManifest({ requestUrl: url });
    expect(yaml.split('\n')[0]).toBe(`# Slack app manifest for calmops, for ${url}`);
    const comments = source.split('\n').filter((line) => line.trimStart().startsWith('#'));
    expect(comments.length).toBeGreaterThan(5);
    for (const comment of comments) expect(yaml.split('\n')).toContain(comment);
    // Lines without a URL are the source's own lines, folding and quoting as written.
    const untouched = source.split('\n').filter((line) => !line.includes('example.execute-api'));
    expect(yaml.split('\n').filter((line) => !line.includes(url))).toEqual(expect.arrayContaining(untouched));
  });

  it('names the app and its bot user with --name', () => {
    const named = readYaml(renderManifest({ requestUrl: url, name: 'calmops Staging 2' })) as {
      display_information: { name: string };
      features: { bot_user: { display_name: string } };
    };
    expect(named.display_information.name).toBe('calmops Staging 2');
    expect(named.features.bot_user.display_name).toBe('calmops-staging-2');
    expect(() => renderManifest({ requestUrl: url, name: 'a: b' })).toThrow(ManifestUrlError);
  });

  it('quotes a value that would read as something else', () => {
    const named = readYaml(renderManifest({ requestUrl: url, name: 'true' })) as {
      display_information: { name: unknown };
    };
    expect(named.display_information.name).toBe('true');
  });

  it('refuses a manifest it cannot fill in place rather than cutting a value', () => {
    const folded = source.replace(
      /^( {4}request_url: )(https:\/\/\S+)$/m,
      (_, key: string, value: string) => `${key}${value.slice(0, 20)}\n      ${value.slice(20)}`,
    );
    expect(folded).not.toBe(source);
    expect(() => renderManifest({ requestUrl: url }, folded)).toThrow(ManifestSourceError);
    const without = source.replace(/^ {4}is_enabled: true\n {4}request_url: .*\n/m, '    is_enabled: true\n');
    expect(() => renderManifest({ requestUrl: url }, without)).toThrow(/settings\.interactivity\.request_url/);
  });
});

describe('one-line values of block YAML', () => {
  const text = [
    '# head',
    'a:',
    '  b: "x # y" # trailing',
    "  c: 'it''s'",
    '  d: |',
    '    e: not a key',
    '  f:',
    '    - g: 1',
    '      h: plain text  # note',
    '    - g: 2',
    '    - scalar item',
    '  i: goes on',
    '    past its line',
    'j: [1, 2]',
    '',
  ].join('\n');

  it('finds each by path, skipping block scalars, flow values and values that go past their line', () => {
    const found = Object.fromEntries(
      inlineScalars(text).map((s) => [s.path.join('.'), text.split('\n')[s.line]!.slice(s.start, s.end)]),
    );
    expect(found).toEqual({
      'a.b': '"x # y"',
      'a.c': "'it''s'",
      'a.f.0.g': '1',
      'a.f.0.h': 'plain text',
      'a.f.1.g': '2',
    });
  });

  it('replaces them and nothing else', () => {
    const spots = inlineScalars(text);
    const at = (path: string) => spots.find((s) => s.path.join('.') === path)!;
    const edited = replaceInlineScalars(text, [
      { at: at('a.b'), scalar: 'z' },
      { at: at('a.f.0.h'), scalar: '"other"' },
    ]);
    expect(edited).toBe(
      text.replace('"x # y" # trailing', 'z # trailing').replace('plain text  # note', '"other"  # note'),
    );
  });
});
