import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { JSONRPCMessage, Tool } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { SandboxRequestError } from './routes/requests.js';

/**
 * The sandbox's "MCP tools" pane: the page talks to `calmops mcp`, the command an assistant would start, spawned
 * here with the served cluster's kubeconfig and driven by the SDK's own client over stdio. The page sees the tools
 * the server lists and the JSON-RPC messages of each call, so what it shows is what an assistant gets.
 *
 *   GET  /sandbox/api/mcp        the command line, the tools with their annotations (starts the server once)
 *   POST /sandbox/api/mcp/call   { tool, arguments } → the request and the response as sent on the wire
 */

/** The installed command, as an assistant's configuration names it. */
const CALMOPS_BIN = fileURLToPath(new URL('../../bin/calmops.js', import.meta.url));

export interface SandboxMcpOptions {
  /** `calmops mcp`'s arguments: the served cluster's kubeconfig, its namespaces, a snapshot folder. */
  args: string[];
  cwd: string;
}

export type McpPanelView =
  | { available: true; command: string; tools: Tool[]; instructions?: string }
  | { available: false; reason: string };

export interface McpCallAnswer {
  request: JSONRPCMessage;
  response: JSONRPCMessage | undefined;
}

export interface McpPanel {
  view(): Promise<McpPanelView>;
  call(body: unknown): Promise<McpCallAnswer>;
  close(): Promise<void>;
}

const CallSchema = z.object({
  tool: z.string().min(1).max(64),
  arguments: z.record(z.string(), z.unknown()).default({}),
});

interface Connection {
  client: Client;
  /** Every JSON-RPC message of the connection, both ways, in order. */
  wire: JSONRPCMessage[];
}

function quoteArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`;
}

export function createMcpPanel(options: SandboxMcpOptions | { unavailable: string }): McpPanel {
  let connection: Promise<Connection> | undefined;
  let stderr = '';

  const connect = async (settings: SandboxMcpOptions): Promise<Connection> => {
    // Loaded on the pane's first use: `npm start` does not pay for the client until someone opens it.
    const [{ Client }, { StdioClientTransport }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
    ]);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CALMOPS_BIN, 'mcp', ...settings.args],
      cwd: settings.cwd,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr = `${stderr}${chunk.toString('utf8')}`.slice(-4000);
    });
    const wire: JSONRPCMessage[] = [];
    const send = transport.send.bind(transport);
    transport.send = async (message: JSONRPCMessage) => {
      wire.push(message);
      return send(message);
    };
    const client = new Client({ name: 'calmops-sandbox', version: '1.0.0' });
    // A server that exits is started again by the next request.
    client.onclose = () => {
      connection = undefined;
    };
    await client.connect(transport);
    const receive = transport.onmessage;
    transport.onmessage = (message: JSONRPCMessage) => {
      wire.push(message);
      receive?.(message);
    };
    return { client, wire };
  };

  const connected = (settings: SandboxMcpOptions): Promise<Connection> => {
    if (connection === undefined) {
      connection = connect(settings);
      connection.catch(() => {
        connection = undefined;
      });
    }
    return connection;
  };

  const failure = (error: unknown) =>
    new SandboxRequestError(
      `calmops mcp did not answer: ${(error as Error).message}${stderr ? `\n${stderr.trim()}` : ''}`,
      502,
    );

  return {
    async view() {
      if ('unavailable' in options) return { available: false, reason: options.unavailable };
      try {
        const { client } = await connected(options);
        const { tools } = await client.listTools();
        const instructions = client.getInstructions();
        return {
          available: true,
          command: ['calmops', 'mcp', ...options.args].map(quoteArg).join(' '),
          tools,
          ...(instructions === undefined ? {} : { instructions }),
        };
      } catch (error) {
        throw failure(error);
      }
    },
    async call(body) {
      if ('unavailable' in options) throw new SandboxRequestError(options.unavailable, 409);
      const parsed = CallSchema.safeParse(body);
      if (!parsed.success) throw new SandboxRequestError(`not a tool call: ${parsed.error.issues[0]?.message}`, 400);
      let link: Connection;
      try {
        link = await connected(options);
      } catch (error) {
        throw failure(error);
      }
      const from = link.wire.length;
      await link.client.callTool({ name: parsed.data.tool, arguments: parsed.data.arguments });
      const sent = link.wire
        .slice(from)
        .find(
          (m): m is JSONRPCMessage & { id: string | number } => 'method' in m && m.method === 'tools/call' && 'id' in m,
        );
      if (sent === undefined) throw new SandboxRequestError('the call was not sent', 500);
      const response = link.wire.slice(from).find((m) => !('method' in m) && 'id' in m && m.id === sent.id);
      return { request: sent, response };
    },
    async close() {
      const open = connection;
      connection = undefined;
      await open?.then((c) => c.client.close()).catch(() => undefined);
    },
  };
}
