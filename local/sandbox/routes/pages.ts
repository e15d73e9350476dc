import type { ServerResponse } from 'node:http';
import { type ClientAssets, loadClientAssets } from '../assets.js';
import type { PageState } from '../page-state.js';
import type { SandboxWorkspace } from '../workspace.js';
import { sendJson } from './requests.js';

function sendAsset(response: ServerResponse, contentType: string, body: string): void {
  response.writeHead(200, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-cache',
  });
  response.end(body);
}

/**
 * What the page reads (GET): the page itself, its script and stylesheet (built once, on first use or `warm`), the
 * workspace it pretends to be, and its state, which waits for a change (`?since=<version>`).
 */
export function pageRoutes(options: { workspace: SandboxWorkspace; page: PageState }) {
  let assets: Promise<ClientAssets> | undefined;
  const getAssets = () => {
    // A failed build is not kept: the next request tries again.
    assets ??= loadClientAssets().catch((error: unknown) => {
      assets = undefined;
      throw error;
    });
    return assets;
  };

  return {
    async redirect(response: ServerResponse) {
      response.writeHead(302, { location: '/sandbox/' });
      response.end();
    },
    html: async (response: ServerResponse) => sendAsset(response, 'text/html; charset=utf-8', (await getAssets()).html),
    script: async (response: ServerResponse) =>
      sendAsset(response, 'text/javascript; charset=utf-8', (await getAssets()).script),
    css: async (response: ServerResponse) => sendAsset(response, 'text/css; charset=utf-8', (await getAssets()).css),
    workspace: async (response: ServerResponse) => sendJson(response, 200, options.workspace),
    state: async (response: ServerResponse, url: URL) =>
      sendJson(response, 200, await options.page.poll(url.searchParams.get('since'))),
    async warm() {
      await getAssets();
    },
  };
}
