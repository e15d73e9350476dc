import type { IncomingMessage, ServerResponse } from 'node:http';
import { addBotMessage, channelFor } from './chat.js';
import type { StandInFile } from './records.js';
import { newId, type StandInState } from './state.js';
import { type Answer, type Args, fail, readText, sendJson, str } from './wire.js';

/**
 * Slack's file upload, as `files.getUploadURLExternal` → POST the bytes to the URL it returned →
 * `files.completeUploadExternal` (the only upload path Slack keeps): the file is shared into the channel or thread
 * named at completion, as a message carrying it, where the sandbox page shows it.
 */

export const UPLOAD_PATH = '/_upload/';
/** Slack's own limit is 1 GB; a stand-in has no use for more than this. */
const MAX_UPLOAD = 8 * 1024 * 1024;

export function fileMethods(state: StandInState): Record<string, (args: Args) => Answer> {
  return {
    'files.getUploadURLExternal': (args) => {
      const filename = str(args['filename']);
      const length = Number(args['length']);
      if (filename === undefined) fail('invalid_arguments', ['[ERROR] missing required field: filename']);
      if (!Number.isInteger(length) || length < 1)
        fail('invalid_arguments', ['[ERROR] missing required field: length']);
      if (length > MAX_UPLOAD) fail('file_too_large');
      const id = newId('F');
      state.uploads.set(id, { filename, length, ...(str(args['alt_txt']) ? { alt: str(args['alt_txt']) } : {}) });
      return { upload_url: `${state.origin ?? ''}${UPLOAD_PATH}${id}`, file_id: id };
    },
    'files.completeUploadExternal': (args) => {
      let files: unknown = args['files'];
      if (typeof files === 'string') {
        try {
          files = JSON.parse(files);
        } catch {
          fail('invalid_arguments', ['[ERROR] files must be a JSON array']);
        }
      }
      if (!Array.isArray(files) || files.length === 0)
        fail('invalid_arguments', ['[ERROR] missing required field: files']);
      const shared: StandInFile[] = [];
      for (const entry of files as Array<{ id?: unknown; title?: unknown }>) {
        const id = str(entry.id);
        const upload = id === undefined ? undefined : state.uploads.get(id);
        if (id === undefined || upload === undefined) fail('file_not_found');
        if (upload.content === undefined) fail('file_upload_incomplete');
        shared.push({
          id,
          name: upload.filename,
          title: str(entry.title) ?? upload.filename,
          size: Buffer.byteLength(upload.content),
          content: upload.content,
        });
        state.uploads.delete(id);
      }
      const channelId = str(args['channel_id']);
      if (channelId !== undefined) {
        const channel = channelFor(state, { channel: channelId });
        if (!channel.is_member && !channel.is_im) fail('not_in_channel');
        const message = addBotMessage(state, channel.id, {
          text: str(args['initial_comment']) ?? '',
          ...(str(args['thread_ts']) ? { thread_ts: str(args['thread_ts']) } : {}),
        });
        message.files = shared;
      }
      return { files: shared.map(({ content: _content, ...rest }) => rest) };
    },
  };
}

/** `POST /_upload/<id>`: the bytes of a file whose upload URL was handed out. */
export function uploadRoute(state: StandInState) {
  return async (request: IncomingMessage, response: ServerResponse, id: string): Promise<void> => {
    const upload = state.uploads.get(id);
    if (upload === undefined) {
      sendJson(response, 404, { ok: false, error: 'file_not_found' });
      return;
    }
    const body = await readText(request);
    if (Buffer.byteLength(body) > MAX_UPLOAD) {
      sendJson(response, 413, { ok: false, error: 'file_too_large' });
      return;
    }
    upload.content = body;
    response.writeHead(200, { 'Content-Type': 'text/plain' });
    response.end(`OK - ${Buffer.byteLength(body)}`);
  };
}
