/**
 * A request as API Gateway (HTTP API), a Function URL or the local HTTP server hands it to the Slack function, and
 * the answer it gets back. Slack's handler and the alert route in front of it both speak it.
 */
export interface FunctionHttpRequest {
  headers: Readonly<Record<string, string | undefined>>;
  body?: string | null;
  isBase64Encoded?: boolean;
}

export interface FunctionHttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}
