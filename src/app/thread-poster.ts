import type { WebClient } from '@slack/web-api';
import type { ThreadPoster } from '../workflow/deps.js';

/** The workflow's thread poster over Slack's Web API. */
export function webClientPoster(client: WebClient): ThreadPoster {
  return {
    async post(channelId, threadTs, message) {
      const out = await client.chat.postMessage({
        channel: channelId,
        ...(threadTs === undefined ? {} : { thread_ts: threadTs }),
        text: message.text,
        blocks: message.blocks,
        unfurl_links: false,
      });
      return { ts: String(out.ts ?? '') };
    },
    async update(channelId, ts, message) {
      await client.chat.update({ channel: channelId, ts, text: message.text, blocks: message.blocks });
    },
    async upload(channelId, threadTs, file) {
      // Slack's upload: ask for a URL, send the bytes there, then share the file into the thread.
      const bytes = Buffer.from(file.content, 'utf8');
      const target = await client.files.getUploadURLExternal({ filename: file.filename, length: bytes.length });
      if (!target.upload_url || !target.file_id) throw new Error('Slack gave no upload URL for the file');
      const sent = await fetch(target.upload_url, {
        method: 'POST',
        body: bytes,
        headers: { 'Content-Type': 'text/plain; charset=utf-8' },
        signal: AbortSignal.timeout(10_000),
      });
      if (!sent.ok) throw new Error(`Slack refused the file's bytes (HTTP ${sent.status})`);
      await client.files.completeUploadExternal({
        files: [{ id: target.file_id, title: file.title }],
        channel_id: channelId,
        thread_ts: threadTs,
      });
    },
  };
}
