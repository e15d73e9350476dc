import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readYaml } from '../../../src/yaml-text.js';

/**
 * The registration blocks of docs/mcp.md and the README are copied into assistants' configuration files as they are:
 * each must parse, and each must start calmops mcp with the namespace scope it refuses to start without.
 */

const root = join(import.meta.dirname, '..', '..', '..');

function blocks(file: string, language: 'json' | 'yaml'): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1] as string);
}

function servers(config: Record<string, unknown>): Array<{ command: string; args: string[] }> {
  const map = (config['mcpServers'] ?? config['servers'] ?? config['mcp_servers']) as Record<string, unknown>;
  return Object.values(map).map((entry) => {
    const server = entry as { command?: string; args?: string[]; config?: { command: string; args: string[] } };
    return server.config ?? { command: server.command ?? '', args: server.args ?? [] };
  });
}

describe('the assistant registrations in the docs', () => {
  const json = [...blocks('docs/mcp.md', 'json'), ...blocks('README.md', 'json')];

  it('parse, and start calmops mcp with a namespace scope', () => {
    expect(json.length).toBeGreaterThanOrEqual(5);
    const configs = [...json.map((b) => JSON.parse(b) as Record<string, unknown>)];
    const holmes = blocks('docs/mcp.md', 'yaml').map((b) => readYaml(b) as Record<string, unknown>);
    for (const config of [...configs, ...holmes.filter((h) => h['mcp_servers'] !== undefined)]) {
      for (const server of servers(config)) {
        expect(server.command).toBe('npx');
        const at = server.args.indexOf('calmops');
        expect(server.args.slice(at, at + 2)).toEqual(['calmops', 'mcp']);
        expect(server.args).toContain('--namespaces');
      }
    }
    expect(holmes.some((h) => h['mcp_servers'] !== undefined)).toBe(true);
  });
});
