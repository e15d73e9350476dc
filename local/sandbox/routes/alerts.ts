import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PageState } from '../page-state.js';
import { createSampleAlerts, type SampleAlertTarget } from '../sample-alerts.js';
import { isJson, readJson, SandboxRequestError, sendJson } from './requests.js';

const NOT_THE_DEMO =
  'Sample alerts are for the demo cluster. Send your own from Alertmanager or curl to the webhook npm start prints (docs/alerts.md).';

/**
 * `POST /_sandbox/alerts/sample` (see sample-alerts.ts), answered once the sandbox checked Host and Origin, and the
 * sample alerts' part of the page's state.
 */
export function sampleAlertRoute(options: {
  target: SampleAlertTarget | undefined;
  /** Whether the sandbox serves the demo cluster, whose pods and services the samples name. */
  demoCluster: boolean;
  page: PageState;
}) {
  // With your own cluster the samples would point at nothing.
  const sampleAlerts = createSampleAlerts({
    ...(options.target === undefined ? {} : { target: options.target }),
    ...(options.target !== undefined && !options.demoCluster ? { unavailable: NOT_THE_DEMO } : {}),
  });

  return {
    view: () => sampleAlerts.view(),
    async answer(request: IncomingMessage, response: ServerResponse, path: string): Promise<void> {
      try {
        if (request.method !== 'POST') {
          sendJson(response, 405, { error: `${request.method} is not allowed on ${path}; use POST` });
        } else if (!isJson(request)) {
          sendJson(response, 415, { error: 'send the request as application/json' });
        } else {
          const answer = await sampleAlerts.answer(await readJson(request));
          if (answer.changed) options.page.changed();
          sendJson(response, answer.status, answer.body);
        }
      } catch (error) {
        const status = error instanceof SandboxRequestError ? error.status : 500;
        sendJson(response, status, { error: (error as Error).message });
      }
    },
  };
}
