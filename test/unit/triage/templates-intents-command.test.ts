import { describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/commands/intents.js';
import { type CliIo, UsageError } from '../../../src/cli/io.js';

function capture(): { io: CliIo; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    io: { stdout: (t) => (out += t), stderr: (t) => (err += t), env: {} },
    out: () => out,
    err: () => err,
  };
}

describe('calmops intents', () => {
  it('prints each intent with domain, title and examples', async () => {
    const c = capture();
    expect(await run([], c.io)).toBe(0);
    const text = c.out();
    expect(text).toMatch(/^crashloop-analysis\s+compute\s+Containers that crash and restart$/m);
    expect(text).toMatch(/^pvc-binding\s+storage\s+PersistentVolumeClaim stuck Pending$/m);
    expect(text).toContain('e.g. "Quick triage PVC binding in student03"');
    expect(text).toMatch(/^node-not-ready\s+platform\s+/m);
    expect(c.err()).toBe('');
  });

  it('prints machine-readable JSON with --json', async () => {
    const c = capture();
    expect(await run(['--json'], c.io)).toBe(0);
    const list = JSON.parse(c.out()) as { id: string; domain: string; title: string; examples: string[] }[];
    expect(list).toHaveLength(13);
    expect(list.find((i) => i.id === 'route-5xx')).toMatchObject({
      domain: 'networking',
      examples: expect.arrayContaining(['checkout returns 503 through the route in shop']),
    });
  });

  it('refuses unknown arguments', async () => {
    await expect(run(['--yaml'], capture().io)).rejects.toThrow(UsageError);
  });
});
