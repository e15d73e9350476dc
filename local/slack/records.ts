/**
 * What the stand-in holds and hands out: recorded calls, messages and views. Kept apart from the server so the
 * sandbox page's browser bundle can import the shapes without the server's Node modules.
 */

/** One Web API call (or response_url post) as the stand-in received and answered it. */
export interface RecordedCall {
  seq: number;
  at: string;
  /** Web API method such as `chat.postMessage`, or `response_url` for a post to a response URL. */
  method: string;
  args: Record<string, unknown>;
  /** Whether the request carried a bearer token; the token itself is never recorded. */
  authenticated: boolean;
  response: Record<string, unknown>;
}

/** A message as a person in the channel would see it. */
export interface StandInMessage {
  channel: string;
  ts: string;
  thread_ts?: string;
  text: string;
  blocks?: unknown[];
  /** Who posted it (the bot user for bot messages). */
  user: string;
  bot_id?: string;
  /** Set on an ephemeral message: only this user sees it. */
  ephemeral_to?: string;
  edited?: { ts: string };
  deleted?: boolean;
  /** Files shared with the message (files.completeUploadExternal). */
  files?: StandInFile[];
}

/** A file shared into a conversation, with its text (the stand-in keeps snippets whole). */
export interface StandInFile {
  id: string;
  name: string;
  title: string;
  size: number;
  content: string;
}

/** A modal or App Home view as the stand-in holds it. */
export interface StandInView {
  id: string;
  hash: string;
  type: 'modal' | 'home';
  /** The user the view is shown to, when known (App Home, or a trigger id minted by `triggerId(user)`). */
  user?: string;
  callback_id?: string;
  private_metadata?: string;
  external_id?: string;
  closed?: boolean;
  [key: string]: unknown;
}

export interface ResponseUrlContext {
  channel: string;
  user: string;
  /** The message the interaction came from, for replace_original / delete_original. */
  messageTs?: string;
}
