import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerDemoRoute, type SandboxDemoCluster } from '../demo-routes.js';
import type { PageState } from '../page-state.js';
import { sendJson } from './requests.js';

/** `/_sandbox/demo` (see demo-routes.ts) over HTTP, answered once the sandbox checked Host and Origin. */
export function demoClusterRoute(options: { demoCluster: SandboxDemoCluster | undefined; page: PageState }) {
  return (request: IncomingMessage, response: ServerResponse, path: string): void => {
    try {
      const answer = answerDemoRoute(request.method ?? 'GET', path, options.demoCluster);
      if (answer.changed) options.page.changed();
      sendJson(response, answer.status, answer.body);
    } catch (error) {
      sendJson(response, 500, { error: (error as Error).message });
    }
  };
}
