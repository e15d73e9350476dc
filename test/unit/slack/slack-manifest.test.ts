import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

interface Manifest {
  features: { slash_commands: { command: string; should_escape: boolean }[]; app_home: { home_tab_enabled: boolean } };
  oauth_config: { scopes: { bot: string[] } };
  settings: { event_subscriptions: { bot_events: string[] }; interactivity: { is_enabled: boolean } };
}

const manifest = parse(readFileSync(new URL('../../../manifest.yaml', import.meta.url), 'utf8')) as Manifest;

describe('Slack app manifest', () => {
  it('asks for exactly the scopes the code uses', () => {
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual(
      [
        'app_mentions:read',
        'channels:history',
        'channels:read',
        'chat:write',
        'commands',
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
