import type { DemoClusterChange } from '../../demo/control.js';
import type { StandInMessage, StandInView } from '../../slack/records.js';
import type { McpCallAnswer, McpPanelView } from '../mcp-panel.js';
import type { SampleAlertResult } from '../sample-alerts.js';
import type { SandboxNotice, SandboxState } from '../server.js';
import type { SandboxChannel, SandboxWorkspace } from '../workspace.js';
import { chosenSample, renderAlertPanel, sampleAlertMessage } from './alert-panel.js';
import { type BlockContext, collectState, hasValue, renderBlocks } from './blocks.js';
import { demoChangeMessage, renderDemoPanel } from './demo-panel.js';
import { escapeHtml } from './html.js';
import { exampleArguments, type McpPaneState, renderMcpPane } from './mcp-pane.js';
import { mrkdwnToHtml, plainToHtml } from './mrkdwn.js';

/**
 * The sandbox page: a small Slack client for one workspace. It shows what the stand-in recorded (messages,
 * ephemeral messages, modals, App Home) and reports what the person does to the sandbox server, which turns it
 * into the signed request Slack would send to the app.
 */

type Pane = { kind: 'channel'; channel: string } | { kind: 'home' } | { kind: 'mcp' };
type Json = Record<string, unknown>;

interface Ui {
  workspace: SandboxWorkspace;
  state: SandboxState;
  me: string;
  pane: Pane;
  thread?: { channel: string; ts: string };
  modalErrors: Record<string, string>;
  modalFailure?: string;
  modalKey: string;
  busy: number;
  /** Demo namespaces whose fix or restore is on its way. */
  demoBusy: Set<string>;
  /** The namespace chosen in the "Alerts" panel, and whether its alert is on its way. */
  alertNamespace: string;
  alertBusy: boolean;
  /** The "MCP tools" pane, and what it last drew (typing arguments does not redraw it). */
  mcp: McpPaneState;
  mcpDrawn: string;
}

const $ = <T extends HTMLElement>(selector: string): T => {
  const node = document.querySelector<T>(selector);
  if (node === null) throw new Error(`the page has no ${selector}`);
  return node;
};

async function api<T>(path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const data = (await response.json()) as T & { error?: string };
  if (!response.ok) throw new Error(data.error ?? `HTTP ${response.status}`);
  return data;
}

const ui: Ui = {
  workspace: undefined as unknown as SandboxWorkspace,
  state: {
    version: '',
    messages: [],
    notices: [],
    modals: {},
    homes: {},
    demoCluster: { available: false, reason: 'Reading the demo cluster…' },
    alerts: { available: false, reason: 'Reading the sample alerts…' },
  },
  me: '',
  pane: { kind: 'channel', channel: '' },
  modalErrors: {},
  modalKey: '',
  busy: 0,
  demoBusy: new Set(),
  alertNamespace: '',
  alertBusy: false,
  mcp: { tool: 'triage', args: exampleArguments('triage'), busy: false },
  mcpDrawn: '',
};

function userName(id: string): string | undefined {
  return ui.workspace.users.find((u) => u.id === id)?.name;
}

function context(errors?: Record<string, string>): BlockContext {
  return {
    userName,
    channelName: (id) => ui.workspace.channels.find((c) => c.id === id)?.name,
    people: ui.workspace.users.filter((u) => !u.isBot),
    ...(errors === undefined ? {} : { errors }),
  };
}

function visibleChannels(): SandboxChannel[] {
  return ui.workspace.channels.filter((c) => !c.isIm || c.dmUser === ui.me);
}

function visibleTo(message: StandInMessage): boolean {
  return message.ephemeral_to === undefined || message.ephemeral_to === ui.me;
}

function isTopLevel(message: StandInMessage): boolean {
  return message.thread_ts === undefined || message.thread_ts === message.ts;
}

function time(ts: string): string {
  const date = new Date(Number(ts) * 1000);
  return date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

function avatar(id: string, isBot: boolean): string {
  const name = userName(id) ?? '?';
  const hue = [...id].reduce((sum, c) => sum + c.charCodeAt(0), 0) % 360;
  return isBot
    ? '<div class="avatar avatar-bot" aria-hidden="true">◎</div>'
    : `<div class="avatar" style="background:hsl(${hue} 45% 45%)" aria-hidden="true">${escapeHtml(name.slice(0, 1).toUpperCase())}</div>`;
}

type Entry = { kind: 'message'; message: StandInMessage } | { kind: 'notice'; notice: SandboxNotice };

function renderMessage(message: StandInMessage, inThread: boolean): string {
  const isBot = message.bot_id !== undefined || message.user === ui.workspace.botUserId;
  const name = isBot ? ui.workspace.botName : (userName(message.user) ?? message.user);
  const body =
    Array.isArray(message.blocks) && message.blocks.length > 0
      ? renderBlocks(message.blocks, context())
      : `<div class="msg-text">${mrkdwnToHtml(message.text, context())}</div>`;
  const files = (message.files ?? [])
    .map(
      (file) =>
        `<details class="msg-file" data-file-id="${escapeHtml(file.id)}" open><summary class="file-title">📄 ${escapeHtml(
          file.title,
        )} <span class="file-meta">${escapeHtml(file.name)} · ${file.content.split('\n').length} lines</span></summary><pre class="file-snippet">${escapeHtml(
          file.content,
        )}</pre></details>`,
    )
    .join('');
  const replies = inThread
    ? []
    : ui.state.messages.filter((m) => m.thread_ts === message.ts && m.ts !== message.ts && visibleTo(m));
  const thread =
    replies.length > 0
      ? `<button type="button" class="thread-link" data-open-thread="${escapeHtml(message.ts)}" data-channel="${escapeHtml(
          message.channel,
        )}">${replies.length} ${replies.length === 1 ? 'reply' : 'replies'}</button>`
      : '';
  const ephemeral = message.ephemeral_to !== undefined;
  return `<div class="msg${ephemeral ? ' msg-ephemeral' : ''}" data-container-type="message" data-channel="${escapeHtml(
    message.channel,
  )}" data-ts="${escapeHtml(message.ts)}">
${avatar(message.user, isBot)}
<div class="msg-body">
${ephemeral ? '<div class="msg-only-you">👁 Only visible to you</div>' : ''}
<div class="msg-meta"><span class="msg-name">${escapeHtml(name)}</span>${isBot ? '<span class="app-badge">APP</span>' : ''}<span class="msg-time">${time(
    message.ts,
  )}</span>${message.edited ? '<span class="msg-edited">(edited)</span>' : ''}</div>
${body}${files}
${thread}
</div>
${inThread || ephemeral ? '' : `<button type="button" class="msg-reply" title="Reply in thread" data-open-thread="${escapeHtml(message.ts)}" data-channel="${escapeHtml(message.channel)}">💬</button>`}
</div>`;
}

function renderNotice(notice: SandboxNotice): string {
  return `<div class="msg msg-ephemeral msg-notice">
<div class="avatar avatar-slackbot" aria-hidden="true">S</div>
<div class="msg-body"><div class="msg-only-you">👁 Only visible to you</div>
<div class="msg-meta"><span class="msg-name">Slackbot</span><span class="msg-time">${time(notice.ts)}</span></div>
<div class="msg-text">${plainToHtml(notice.text, false)}</div></div></div>`;
}

function renderEntries(entries: Entry[], inThread: boolean): string {
  return entries
    .sort(
      (a, b) =>
        Number(a.kind === 'message' ? a.message.ts : a.notice.ts) -
        Number(b.kind === 'message' ? b.message.ts : b.notice.ts),
    )
    .map((e) => (e.kind === 'message' ? renderMessage(e.message, inThread) : renderNotice(e.notice)))
    .join('');
}

function renderSidebar(): void {
  const channels = visibleChannels();
  const item = (channel: SandboxChannel) => {
    const active = ui.pane.kind === 'channel' && ui.pane.channel === channel.id;
    const label = channel.isIm
      ? `<span class="presence"></span>${escapeHtml(channel.name)}`
      : `# ${escapeHtml(channel.name)}`;
    return `<button type="button" class="side-item${active ? ' active' : ''}" data-channel-id="${escapeHtml(channel.id)}">${label}</button>`;
  };
  $('#sidebar-channels').innerHTML = channels
    .filter((c) => !c.isIm)
    .map(item)
    .join('');
  $('#sidebar-dms').innerHTML = channels
    .filter((c) => c.isIm)
    .map(item)
    .join('');
  const homeActive = ui.pane.kind === 'home';
  const mcpActive = ui.pane.kind === 'mcp';
  $('#sidebar-apps').innerHTML =
    `<button type="button" class="side-item${homeActive ? ' active' : ''}" data-home>◎ ${escapeHtml(
      ui.workspace.botName,
    )} <span class="side-hint">Home</span></button>` +
    `<button type="button" class="side-item${mcpActive ? ' active' : ''}" data-mcp>⚙ MCP tools <span class="side-hint">calmops mcp</span></button>`;
  $('#sidebar-demo').innerHTML = renderDemoPanel(ui.state.demoCluster, ui.demoBusy);
  const alerts = renderAlertPanel(ui.state.alerts, ui.alertNamespace, ui.alertBusy);
  // Redrawn only when it changed, so a choice being made in its list is not interrupted by a poll.
  const panel = $('#sidebar-alerts');
  if (panel.dataset['html'] !== alerts) {
    panel.innerHTML = alerts;
    panel.dataset['html'] = alerts;
  }
}

function stickToBottom(node: HTMLElement, render: () => void): void {
  const atBottom = node.scrollHeight - node.scrollTop - node.clientHeight < 40;
  render();
  if (atBottom) node.scrollTop = node.scrollHeight;
}

function renderMain(): void {
  const header = $('#pane-header');
  const list = $('#messages');
  const composer = $('#composer');
  if (ui.pane.kind === 'mcp') {
    header.innerHTML =
      '<div class="pane-title">⚙ MCP tools</div><span class="pane-note">calmops for assistants, over the Model Context Protocol</span>';
    delete list.dataset['containerType'];
    list.className = 'messages mcp';
    composer.hidden = true;
    const { args: _, ...drawn } = ui.mcp;
    const key = JSON.stringify(drawn);
    if (key !== ui.mcpDrawn || list.querySelector('.mcp-pane, .empty') === null) {
      ui.mcpDrawn = key;
      list.innerHTML = renderMcpPane(ui.mcp);
    }
    return;
  }
  ui.mcpDrawn = '';
  if (ui.pane.kind === 'home') {
    header.innerHTML = `<div class="pane-title">◎ ${escapeHtml(ui.workspace.botName)}</div><div class="pane-tabs"><span class="tab active">Home</span></div>`;
    const home = ui.state.homes[ui.me];
    list.dataset['containerType'] = 'view';
    list.dataset['viewId'] = home?.id ?? '';
    list.className = 'messages home';
    list.innerHTML = home
      ? `<div class="home-view" data-container-type="view" data-view-id="${escapeHtml(home.id)}">${renderBlocks(home['blocks'], context())}</div>`
      : '<div class="empty">Opening the App Home…</div>';
    composer.hidden = true;
    return;
  }
  const channelId = ui.pane.channel;
  const channel = ui.workspace.channels.find((c) => c.id === channelId);
  const title = channel?.isIm ? escapeHtml(channel.name) : `# ${escapeHtml(channel?.name ?? channelId)}`;
  const note =
    channel && !channel.isIm && !channel.botIsMember
      ? `<span class="pane-note">${escapeHtml(ui.workspace.botName)} is not in this channel</span>`
      : '';
  header.innerHTML = `<div class="pane-title">${title}</div>${note}`;
  composer.hidden = false;
  list.className = 'messages';
  delete list.dataset['containerType'];
  const entries: Entry[] = [
    ...ui.state.messages
      .filter((m) => m.channel === channelId && isTopLevel(m) && visibleTo(m))
      .map((message) => ({ kind: 'message' as const, message })),
    ...ui.state.notices
      .filter((n) => n.channel === channelId && n.user === ui.me)
      .map((notice) => ({ kind: 'notice' as const, notice })),
  ];
  stickToBottom(list, () => {
    list.innerHTML =
      entries.length === 0
        ? `<div class="empty">This is the start of ${title}. Try <code>/triage pods stuck pending in payments</code> or <code>@${escapeHtml(
            ui.workspace.botName,
          )} help</code>.</div>`
        : renderEntries(entries, false);
  });
  const input = $<HTMLTextAreaElement>('#composer-input');
  input.placeholder = `Message ${channel?.isIm ? escapeHtml(channel.name) : `#${channel?.name ?? ''}`} — /triage … or @${ui.workspace.botName} …`;
}

function renderThread(): void {
  const pane = $('#thread');
  if (ui.thread === undefined || ui.pane.kind !== 'channel') {
    pane.hidden = true;
    return;
  }
  const { channel, ts } = ui.thread;
  const root = ui.state.messages.find((m) => m.channel === channel && m.ts === ts);
  pane.hidden = false;
  const channelName = ui.workspace.channels.find((c) => c.id === channel)?.name ?? channel;
  $('#thread-title').innerHTML = `Thread <span class="thread-channel"># ${escapeHtml(channelName)}</span>`;
  const replies = ui.state.messages.filter(
    (m) => m.channel === channel && m.thread_ts === ts && m.ts !== ts && visibleTo(m),
  );
  const list = $('#thread-messages');
  stickToBottom(list, () => {
    list.innerHTML = `${root ? renderMessage(root, true) : ''}<div class="thread-divider">${replies.length} ${
      replies.length === 1 ? 'reply' : 'replies'
    }</div>${renderEntries(
      replies.map((message) => ({ kind: 'message' as const, message })),
      true,
    )}`;
  });
}

function currentModal(): StandInView | undefined {
  const stack = ui.state.modals[ui.me] ?? [];
  return stack[stack.length - 1];
}

function renderModal(): void {
  const backdrop = $('#modal-backdrop');
  const view = currentModal();
  if (view === undefined) {
    backdrop.hidden = true;
    ui.modalKey = '';
    return;
  }
  const key = `${view.id}|${view.hash}|${JSON.stringify(ui.modalErrors)}|${ui.modalFailure ?? ''}`;
  backdrop.hidden = false;
  if (key === ui.modalKey) return;
  // Keep what the person typed across a re-render caused by validation errors.
  const typed = ui.modalKey.startsWith(`${view.id}|`) ? snapshotInputs($('#modal-body')) : undefined;
  ui.modalKey = key;
  const title = (view['title'] as Json | undefined)?.['text'];
  const submit = (view['submit'] as Json | undefined)?.['text'];
  const close = (view['close'] as Json | undefined)?.['text'] ?? 'Cancel';
  $('#modal').dataset['viewId'] = view.id;
  $('#modal-title').textContent = typeof title === 'string' ? title : '';
  $('#modal-body').innerHTML = `${
    ui.modalFailure ? `<div class="modal-failure" role="alert">${escapeHtml(ui.modalFailure)}</div>` : ''
  }${renderBlocks(view['blocks'], context(ui.modalErrors))}`;
  const submitButton = $<HTMLButtonElement>('#modal-submit');
  submitButton.hidden = typeof submit !== 'string';
  submitButton.textContent = typeof submit === 'string' ? submit : '';
  $('#modal-cancel').textContent = typeof close === 'string' ? close : 'Cancel';
  if (typed !== undefined) restoreInputs($('#modal-body'), typed);
}

function snapshotInputs(root: HTMLElement): Map<string, string[]> {
  const values = new Map<string, string[]>();
  for (const node of Array.from(root.querySelectorAll<HTMLElement>('[data-input]'))) {
    const key = `${node.dataset['blockId']}/${node.dataset['actionId']}`;
    if (node instanceof HTMLSelectElement)
      values.set(
        key,
        Array.from(node.selectedOptions).map((o) => o.value),
      );
    else if (node instanceof HTMLInputElement || node instanceof HTMLTextAreaElement) values.set(key, [node.value]);
    else values.set(key, checkedValues(node));
  }
  return values;
}

function checkedValues(node: HTMLElement): string[] {
  return Array.from(node.querySelectorAll<HTMLInputElement>('input:checked')).map((i) => i.value);
}

function restoreInputs(root: HTMLElement, values: Map<string, string[]>): void {
  for (const node of Array.from(root.querySelectorAll<HTMLElement>('[data-input]'))) {
    const saved = values.get(`${node.dataset['blockId']}/${node.dataset['actionId']}`);
    if (saved === undefined) continue;
    if (node instanceof HTMLSelectElement)
      for (const o of Array.from(node.options)) o.selected = saved.includes(o.value);
    else if (node instanceof HTMLInputElement || node instanceof HTMLTextAreaElement) node.value = saved[0] ?? '';
    else setChecked(node, saved);
  }
}

function setChecked(node: HTMLElement, saved: string[]): void {
  for (const input of Array.from(node.querySelectorAll<HTMLInputElement>('input')))
    input.checked = saved.includes(input.value);
}

function renderPersona(): void {
  const select = $<HTMLSelectElement>('#persona');
  if (select.options.length === 0) {
    select.innerHTML = ui.workspace.personas
      .map((p) => `<option value="${escapeHtml(p.id)}">${escapeHtml(p.realName)} — ${escapeHtml(p.role)}</option>`)
      .join('');
  }
  select.value = ui.me;
}

function render(): void {
  renderPersona();
  renderSidebar();
  renderMain();
  renderThread();
  renderModal();
  document.body.dataset['version'] = ui.state.version;
  document.body.classList.toggle('busy', ui.busy > 0);
}

function toast(text: string): void {
  const node = $('#toast');
  node.textContent = text;
  node.hidden = false;
  window.setTimeout(() => {
    node.hidden = true;
  }, 6000);
}

async function busy<T>(work: () => Promise<T>): Promise<T | undefined> {
  ui.busy += 1;
  document.body.classList.add('busy');
  try {
    return await work();
  } catch (error) {
    toast((error as Error).message);
    return undefined;
  } finally {
    ui.busy -= 1;
    document.body.classList.toggle('busy', ui.busy > 0);
  }
}

async function poll(): Promise<void> {
  for (;;) {
    try {
      const next = await api<SandboxState>(`/sandbox/api/state?since=${encodeURIComponent(ui.state.version)}`);
      if (next.version !== ui.state.version) {
        ui.state = next;
        render();
      }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

async function refreshNow(): Promise<void> {
  ui.state = await api<SandboxState>('/sandbox/api/state');
  render();
}

async function send(text: string, threadTs?: string): Promise<void> {
  if (ui.pane.kind !== 'channel') return;
  const channel = ui.pane.channel;
  await busy(async () => {
    await api('/sandbox/api/compose', { user: ui.me, channel, text, ...(threadTs === undefined ? {} : { threadTs }) });
    await refreshNow();
  });
}

function actionFromElement(node: HTMLElement): Json {
  const base: Json = {
    action_id: node.dataset['actionId'],
    block_id: node.dataset['blockId'],
    type: node.dataset['type'],
  };
  if (node instanceof HTMLSelectElement) {
    const chosen = node.selectedOptions[0];
    if (node.dataset['type'] === 'users_select') base['selected_user'] = chosen?.value;
    else if (chosen !== undefined)
      base['selected_option'] = {
        text: { type: 'plain_text', text: chosen.dataset['label'] ?? chosen.text, emoji: true },
        value: chosen.value,
      };
    return base;
  }
  if (node.dataset['value'] !== undefined) base['value'] = node.dataset['value'];
  if (node.dataset['style'] !== undefined) base['style'] = node.dataset['style'];
  base['text'] = node.dataset['text'] ?? '';
  return base;
}

async function interact(node: HTMLElement): Promise<void> {
  const url = node.dataset['url'];
  if (url !== undefined) window.open(url, '_blank', 'noopener');
  const container = node.closest<HTMLElement>('[data-container-type]');
  if (container === null) return;
  const inModal = container.id === 'modal';
  const body: Json = {
    user: ui.me,
    action: actionFromElement(node),
    container:
      container.dataset['containerType'] === 'message'
        ? { type: 'message', channel: container.dataset['channel'], ts: container.dataset['ts'] }
        : { type: 'view', viewId: container.dataset['viewId'] },
    state: inModal ? collectState($('#modal-body')) : {},
  };
  if (node instanceof HTMLButtonElement) node.disabled = true;
  await busy(async () => {
    const answer = await api<{ status: number; failure?: string }>('/sandbox/api/action', body);
    if (answer.failure !== undefined || answer.status !== 200) {
      toast(`${ui.workspace.botName} did not answer the click (${answer.failure ?? `HTTP ${answer.status}`})`);
    }
  });
  if (node instanceof HTMLButtonElement && node.isConnected) node.disabled = false;
}

async function submitModal(): Promise<void> {
  const view = currentModal();
  if (view === undefined) return;
  const body = $('#modal-body');
  const state = collectState(body);
  // Slack's client checks required inputs itself and never sends an incomplete form.
  const missing: Record<string, string> = {};
  for (const block of Array.from(body.querySelectorAll<HTMLElement>('.blk-input'))) {
    if (block.dataset['optional'] === 'true') continue;
    const blockId = block.dataset['blockId'] ?? '';
    const entries = Object.values(state[blockId] ?? {});
    if (entries.length > 0 && entries.some((entry) => !hasValue(entry)))
      missing[blockId] = 'Please complete this required field.';
  }
  for (const input of Array.from(body.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('[data-min-length]'))) {
    const min = Number(input.dataset['minLength']);
    const blockId = input.dataset['blockId'] ?? '';
    if (input.value !== '' && input.value.length < min && missing[blockId] === undefined) {
      missing[blockId] = `Must be at least ${min} characters.`;
    }
  }
  if (Object.keys(missing).length > 0) {
    ui.modalErrors = missing;
    renderModal();
    return;
  }
  await busy(async () => {
    const answer = await api<{ closed: boolean; errors?: Record<string, string>; failure?: string }>(
      '/sandbox/api/view/submit',
      { user: ui.me, viewId: view.id, state },
    );
    ui.modalErrors = answer.errors ?? {};
    if (answer.failure !== undefined) ui.modalFailure = 'We had some trouble connecting. Try again?';
    else delete ui.modalFailure;
    if (answer.closed) ui.modalKey = '';
    await refreshNow();
  });
}

async function closeModal(): Promise<void> {
  const view = currentModal();
  if (view === undefined) return;
  ui.modalErrors = {};
  delete ui.modalFailure;
  await busy(async () => {
    await api('/sandbox/api/view/close', { user: ui.me, viewId: view.id, state: collectState($('#modal-body')) });
    await refreshNow();
  });
}

/** Plays the engineer who runs the approved plan (or undoes it) on one demo namespace. */
async function changeDemo(action: 'fix' | 'restore', namespace: string): Promise<void> {
  if (ui.demoBusy.has(namespace)) return;
  ui.demoBusy.add(namespace);
  renderSidebar();
  try {
    await busy(async () => {
      const answer = await api<DemoClusterChange>(`/_sandbox/demo/${encodeURIComponent(namespace)}/${action}`, {});
      toast(demoChangeMessage(action, answer.namespace, answer.changed));
      await refreshNow();
    });
  } finally {
    ui.demoBusy.delete(namespace);
    renderSidebar();
  }
}

/** Plays Alertmanager: the server sends the sample notification with the token only it holds. */
async function sendSampleAlert(status: 'firing' | 'resolved'): Promise<void> {
  const namespace = chosenSample(ui.state.alerts, ui.alertNamespace);
  if (namespace === undefined || ui.alertBusy) return;
  ui.alertBusy = true;
  renderSidebar();
  try {
    await busy(async () => {
      const result = await api<SampleAlertResult>('/_sandbox/alerts/sample', { namespace, status });
      toast(sampleAlertMessage(result, (id) => ui.workspace.channels.find((c) => c.id === id)?.name));
      const { channelId, threadTs } = result.answer;
      if (channelId !== undefined && threadTs !== undefined && ui.workspace.channels.some((c) => c.id === channelId)) {
        ui.pane = { kind: 'channel', channel: channelId };
        ui.thread = { channel: channelId, ts: threadTs };
      }
      await refreshNow();
    });
  } finally {
    ui.alertBusy = false;
    renderSidebar();
  }
}

function openMcp(): void {
  ui.pane = { kind: 'mcp' };
  delete ui.thread;
  render();
  if (ui.mcp.view !== undefined && ui.mcp.failure === undefined) return;
  delete ui.mcp.failure;
  void api<McpPanelView>('/sandbox/api/mcp')
    .then((view) => {
      ui.mcp.view = view;
    })
    .catch((error: Error) => {
      ui.mcp.failure = error.message;
    })
    .finally(render);
}

/** Calls one tool as an assistant would, and shows the answer with the JSON-RPC messages of the call. */
async function callMcpTool(): Promise<void> {
  if (ui.mcp.busy) return;
  const tool = ui.mcp.tool;
  let args: unknown;
  try {
    args = JSON.parse(ui.mcp.args.trim() === '' ? '{}' : ui.mcp.args);
  } catch (error) {
    ui.mcp.last = { tool, error: `The arguments are not JSON: ${(error as Error).message}` };
    render();
    return;
  }
  ui.mcp.busy = true;
  render();
  try {
    const answer = await api<McpCallAnswer>('/sandbox/api/mcp/call', { tool, arguments: args });
    ui.mcp.last = { tool, answer };
  } catch (error) {
    ui.mcp.last = { tool, error: (error as Error).message };
  } finally {
    ui.mcp.busy = false;
    render();
  }
}

function openHome(): void {
  ui.pane = { kind: 'home' };
  delete ui.thread;
  render();
  void busy(async () => {
    await api('/sandbox/api/home', { user: ui.me });
  });
}

function openChannel(channel: string): void {
  ui.pane = { kind: 'channel', channel };
  delete ui.thread;
  render();
  $<HTMLTextAreaElement>('#composer-input').focus();
}

function wire(): void {
  document.addEventListener('click', (event) => {
    const target = event.target as HTMLElement;
    const interactive = target.closest<HTMLElement>('button[data-interactive]');
    if (interactive !== null) {
      void interact(interactive);
      return;
    }
    const demo = target.closest<HTMLElement>('button[data-demo-action]');
    if (demo !== null) {
      const action = demo.dataset['demoAction'] === 'restore' ? 'restore' : 'fix';
      void changeDemo(action, demo.dataset['namespace'] ?? '');
      return;
    }
    const alert = target.closest<HTMLElement>('button[data-alert-action]');
    if (alert !== null) {
      void sendSampleAlert(alert.dataset['alertAction'] === 'resolved' ? 'resolved' : 'firing');
      return;
    }
    const thread = target.closest<HTMLElement>('[data-open-thread]');
    if (thread !== null) {
      ui.thread = { channel: thread.dataset['channel'] ?? '', ts: thread.dataset['openThread'] ?? '' };
      render();
      $<HTMLTextAreaElement>('#thread-input').focus();
      return;
    }
    const channel = target.closest<HTMLElement>('[data-channel-id]');
    if (channel !== null) {
      openChannel(channel.dataset['channelId'] ?? '');
      return;
    }
    if (target.closest('[data-home]') !== null) openHome();
    if (target.closest('[data-mcp]') !== null) openMcp();
  });
  document.addEventListener('submit', (event) => {
    if ((event.target as HTMLElement).id !== 'mcp-form') return;
    event.preventDefault();
    void callMcpTool();
  });
  document.addEventListener('input', (event) => {
    const target = event.target as HTMLElement;
    if (target instanceof HTMLTextAreaElement && target.id === 'mcp-args') ui.mcp.args = target.value;
  });
  document.addEventListener('change', (event) => {
    const target = event.target as HTMLElement;
    if (target instanceof HTMLSelectElement && target.dataset['interactive'] !== undefined) void interact(target);
    if (target instanceof HTMLSelectElement && target.id === 'mcp-tool') {
      ui.mcp.tool = target.value;
      ui.mcp.args = exampleArguments(target.value);
      delete ui.mcp.last;
      render();
    }
    if (target instanceof HTMLSelectElement && target.id === 'alert-namespace') {
      ui.alertNamespace = target.value;
      renderSidebar();
    }
  });
  $('#thread-close').addEventListener('click', () => {
    delete ui.thread;
    render();
  });
  $<HTMLSelectElement>('#persona').addEventListener('change', (event) => {
    ui.me = (event.target as HTMLSelectElement).value;
    localStorage.setItem('calmops-sandbox-user', ui.me);
    ui.modalErrors = {};
    ui.modalKey = '';
    const pane = ui.pane;
    const channel = pane.kind === 'channel' ? ui.workspace.channels.find((c) => c.id === pane.channel) : undefined;
    if (channel?.dmUser !== undefined && channel.dmUser !== ui.me) openChannel(firstChannel());
    if (ui.pane.kind === 'home') openHome();
    else render();
  });
  const composer = (formId: string, inputId: string, threadTs: () => string | undefined) => {
    const form = $<HTMLFormElement>(formId);
    const input = $<HTMLTextAreaElement>(inputId);
    const submit = () => {
      const text = input.value.trim();
      if (text === '') return;
      input.value = '';
      void send(text, threadTs());
    };
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      submit();
    });
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey) {
        event.preventDefault();
        submit();
      }
    });
  };
  composer('#composer', '#composer-input', () => undefined);
  composer('#thread-composer', '#thread-input', () => ui.thread?.ts);
  $('#modal-submit').addEventListener('click', () => void submitModal());
  $('#modal-cancel').addEventListener('click', () => void closeModal());
  $('#modal-x').addEventListener('click', () => void closeModal());
}

function firstChannel(): string {
  return visibleChannels()[0]?.id ?? '';
}

async function boot(): Promise<void> {
  ui.workspace = await api<SandboxWorkspace>('/sandbox/api/workspace');
  const params = new URLSearchParams(location.search);
  const wanted = params.get('user') ?? localStorage.getItem('calmops-sandbox-user');
  ui.me = ui.workspace.personas.find((p) => p.id === wanted)?.id ?? ui.workspace.personas[0]?.id ?? '';
  const channel = params.get('channel');
  ui.pane = {
    kind: 'channel',
    channel: visibleChannels().find((c) => c.id === channel || c.name === channel)?.id ?? firstChannel(),
  };
  $('#workspace-name').textContent = ui.workspace.teamDomain;
  wire();
  render();
  await refreshNow();
  document.body.dataset['ready'] = 'true';
  void poll();
}

void boot();
