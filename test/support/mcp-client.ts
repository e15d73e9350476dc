import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CALMOPS_BIN } from './calmops-bin.js';

/**
 * `calmops mcp` as an assistant runs it: the installed command started as a child process, driven by the SDK's own
 * client over its standard input and output.
 */
export interface McpSession {
  client: Client;
  /** Everything the server wrote on stderr so far. */
  stderr(): string;
  /** The server process's id. */
  pid: number;
  /** Settles once the connection is closed, by either side. */
  closed: Promise<void>;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface StartMcpOptions {
  cwd: string;
  env?: Record<string, string>;
  /** `npx`: as docs/mcp.md registers it, `npx --prefix <checkout> calmops mcp …`; default `node bin/calmops.js mcp …`. */
  via?: 'node' | 'npx';
}

export async function startMcp(args: string[], options: StartMcpOptions): Promise<McpSession> {
  const transport = new StdioClientTransport({
    ...(options.via === 'npx'
      ? { command: 'npx', args: ['--prefix', ROOT, 'calmops', 'mcp', ...args] }
      : { command: process.execPath, args: [CALMOPS_BIN, 'mcp', ...args] }),
    cwd: options.cwd,
    env: {
      ...(process.env as Record<string, string>),
      NODE_OPTIONS: '',
      KUBECONFIG: '',
      HOME: options.cwd,
      ...options.env,
    },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client({ name: 'calmops-test', version: '1.0.0' });
  const closed = new Promise<void>((resolve) => {
    client.onclose = () => resolve();
  });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`calmops mcp did not start: ${(error as Error).message}\n${stderr}`, { cause: error });
  }
  return {
    client,
    stderr: () => stderr,
    pid: transport.pid ?? 0,
    closed,
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: () => client.close(),
  };
}

/** The text of a tool result's first content block. */
export function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}
