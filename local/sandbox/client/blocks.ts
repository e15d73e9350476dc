import { escapeHtml, safeHref } from './html.js';
import { type MrkdwnContext, mrkdwnToHtml, plainToHtml } from './mrkdwn.js';

/**
 * Block Kit to HTML, for the blocks and elements calmops uses: header, section (text, fields, accessory),
 * context, divider, actions (buttons in their styles, selects, overflow), image, input (in modals), rich_text
 * and markdown. Interactive elements carry `data-*` attributes the page reads when a person uses them.
 */

type Json = Record<string, unknown>;

export interface BlockContext extends MrkdwnContext {
  /** People a users_select offers. */
  people: { id: string; name: string; realName: string }[];
  /** Validation errors returned by the app for a modal, keyed by block_id. */
  errors?: Record<string, string>;
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The block_id the page reports for a block that has none (Slack would assign one). */
function blockIdOf(block: Json, index: number): string {
  return str(block['block_id']) ?? `b${index}`;
}

function actionIdOf(element: Json, index: number): string {
  return str(element['action_id']) ?? `a${index}`;
}

function textObject(value: unknown, context: MrkdwnContext): string {
  if (!isObject(value)) return '';
  const text = str(value['text']) ?? '';
  return value['type'] === 'mrkdwn' ? mrkdwnToHtml(text, context) : plainToHtml(text, value['emoji'] !== false);
}

function plain(value: unknown): string {
  return isObject(value) ? (str(value['text']) ?? '') : '';
}

export function renderBlocks(blocks: unknown, context: BlockContext): string {
  if (!Array.isArray(blocks)) return '';
  return blocks
    .map((block, index) => (isObject(block) ? renderBlock(block, blockIdOf(block, index), context) : ''))
    .join('');
}

function renderBlock(block: Json, blockId: string, context: BlockContext): string {
  const attrs = `data-block-id="${escapeHtml(blockId)}"`;
  switch (block['type']) {
    case 'header':
      return `<div class="blk blk-header" ${attrs}>${textObject(block['text'], context)}</div>`;
    case 'divider':
      return `<hr class="blk blk-divider" ${attrs}>`;
    case 'section':
      return renderSection(block, blockId, attrs, context);
    case 'context':
      return `<div class="blk blk-context" ${attrs}>${(Array.isArray(block['elements']) ? block['elements'] : [])
        .map((element) => contextElement(element, context))
        .join('')}</div>`;
    case 'actions':
      return `<div class="blk blk-actions" ${attrs}>${(Array.isArray(block['elements']) ? block['elements'] : [])
        .map((element, index) => (isObject(element) ? interactive(element, blockId, index, context) : ''))
        .join('')}</div>`;
    case 'image':
      return renderImage(block, attrs, context);
    case 'input':
      return renderInput(block, blockId, attrs, context);
    case 'rich_text':
      return `<div class="blk blk-rich" ${attrs}>${richText(block['elements'], context)}</div>`;
    case 'markdown':
      return `<div class="blk blk-markdown" ${attrs}>${mrkdwnToHtml(str(block['text']) ?? '', context)}</div>`;
    default:
      return `<div class="blk blk-unknown" ${attrs}>[${escapeHtml(String(block['type']))} block]</div>`;
  }
}

function renderSection(block: Json, blockId: string, attrs: string, context: BlockContext): string {
  const text = block['text'] === undefined ? '' : `<div class="sec-text">${textObject(block['text'], context)}</div>`;
  const fields = Array.isArray(block['fields'])
    ? `<div class="sec-fields">${block['fields']
        .map((field) => `<div class="sec-field">${textObject(field, context)}</div>`)
        .join('')}</div>`
    : '';
  const accessory = isObject(block['accessory'])
    ? `<div class="sec-accessory">${
        block['accessory']['type'] === 'image'
          ? imageElement(block['accessory'], 'acc-image')
          : interactive(block['accessory'], blockId, 0, context)
      }</div>`
    : '';
  return `<div class="blk blk-section" ${attrs}><div class="sec-main">${text}${fields}</div>${accessory}</div>`;
}

function contextElement(element: unknown, context: BlockContext): string {
  if (!isObject(element)) return '';
  if (element['type'] === 'image') return imageElement(element, 'ctx-image');
  return `<span class="ctx-text">${textObject(element, context)}</span>`;
}

function imageElement(element: Json, className: string): string {
  const url = str(element['image_url']) ?? '';
  const alt = str(element['alt_text']) ?? '';
  const src = /^(https?:|data:image\/)/i.test(url) ? url : '';
  return `<img class="${className}" src="${escapeHtml(src)}" alt="${escapeHtml(alt)}" title="${escapeHtml(alt)}">`;
}

function renderImage(block: Json, attrs: string, context: BlockContext): string {
  const title =
    block['title'] === undefined ? '' : `<div class="img-title">${textObject(block['title'], context)}</div>`;
  return `<div class="blk blk-image" ${attrs}>${title}${imageElement(block, 'blk-img')}</div>`;
}

function optionAttrs(option: Json): string {
  return `value="${escapeHtml(str(option['value']) ?? '')}" data-label="${escapeHtml(plain(option['text']))}"`;
}

function selectOptions(element: Json, selectedValue: string | undefined): string {
  const render = (options: unknown) =>
    (Array.isArray(options) ? options : [])
      .filter(isObject)
      .map(
        (option) =>
          `<option ${optionAttrs(option)}${option['value'] === selectedValue ? ' selected' : ''}>${escapeHtml(plain(option['text']))}</option>`,
      )
      .join('');
  const groups = Array.isArray(element['option_groups'])
    ? element['option_groups']
        .filter(isObject)
        .map((g) => `<optgroup label="${escapeHtml(plain(g['label']))}">${render(g['options'])}</optgroup>`)
        .join('')
    : '';
  return `${render(element['options'])}${groups}`;
}

function elementAttrs(element: Json, blockId: string, index: number): string {
  return [
    `data-action-id="${escapeHtml(actionIdOf(element, index))}"`,
    `data-block-id="${escapeHtml(blockId)}"`,
    `data-type="${escapeHtml(str(element['type']) ?? '')}"`,
  ].join(' ');
}

/** An element a person can use in a message, App Home, or a modal outside an input block. */
function interactive(element: Json, blockId: string, index: number, context: BlockContext): string {
  const attrs = elementAttrs(element, blockId, index);
  switch (element['type']) {
    case 'button': {
      const style = str(element['style']);
      const value = str(element['value']);
      const url = str(element['url']);
      return `<button type="button" class="sk-button${style ? ` sk-${escapeHtml(style)}` : ''}" data-interactive ${attrs}${
        value === undefined ? '' : ` data-value="${escapeHtml(value)}"`
      }${style ? ` data-style="${escapeHtml(style)}"` : ''}${
        url && safeHref(url) ? ` data-url="${escapeHtml(url)}"` : ''
      } data-text="${escapeHtml(plain(element['text']))}">${textObject(element['text'], context)}</button>`;
    }
    case 'static_select':
    case 'overflow': {
      const initial = isObject(element['initial_option']) ? str(element['initial_option']['value']) : undefined;
      const placeholder = element['type'] === 'overflow' ? '⋯' : plain(element['placeholder']) || 'Select an item';
      return `<select class="sk-select" data-interactive ${attrs}><option value="" disabled${
        initial === undefined ? ' selected' : ''
      }>${escapeHtml(placeholder)}</option>${selectOptions(element, initial)}</select>`;
    }
    case 'users_select': {
      const initial = str(element['initial_user']);
      return `<select class="sk-select" data-interactive ${attrs}><option value="" disabled${
        initial === undefined ? ' selected' : ''
      }>${escapeHtml(plain(element['placeholder']) || 'Select a person')}</option>${peopleOptions(context, initial)}</select>`;
    }
    case 'image':
      return imageElement(element, 'acc-image');
    default:
      return inputElement(element, blockId, index, context);
  }
}

function peopleOptions(context: BlockContext, selected: string | undefined, multiple: string[] = []): string {
  return context.people
    .map(
      (p) =>
        `<option value="${escapeHtml(p.id)}" data-label="${escapeHtml(p.realName)}"${
          p.id === selected || multiple.includes(p.id) ? ' selected' : ''
        }>${escapeHtml(p.realName)} (@${escapeHtml(p.name)})</option>`,
    )
    .join('');
}

/** A form element of an input block; its value is read on submit. */
function inputElement(element: Json, blockId: string, index: number, context: BlockContext): string {
  const attrs = `data-input ${elementAttrs(element, blockId, index)}`;
  const placeholder = escapeHtml(plain(element['placeholder']));
  switch (element['type']) {
    case 'plain_text_input': {
      const initial = escapeHtml(str(element['initial_value']) ?? '');
      const limits = `${typeof element['max_length'] === 'number' ? ` maxlength="${element['max_length']}"` : ''}${
        typeof element['min_length'] === 'number' ? ` data-min-length="${element['min_length']}"` : ''
      }`;
      return element['multiline'] === true
        ? `<textarea class="sk-input" rows="3" placeholder="${placeholder}"${limits} ${attrs}>${initial}</textarea>`
        : `<input class="sk-input" type="text" placeholder="${placeholder}" value="${initial}"${limits} ${attrs}>`;
    }
    case 'number_input': {
      const min = element['min_value'] === undefined ? '' : ` min="${escapeHtml(String(element['min_value']))}"`;
      const max = element['max_value'] === undefined ? '' : ` max="${escapeHtml(String(element['max_value']))}"`;
      const step = element['is_decimal_allowed'] === true ? 'any' : '1';
      return `<input class="sk-input" type="number" step="${step}"${min}${max} placeholder="${placeholder}" value="${escapeHtml(
        str(element['initial_value']) ?? '',
      )}" ${attrs}>`;
    }
    case 'static_select': {
      const initial = isObject(element['initial_option']) ? str(element['initial_option']['value']) : undefined;
      return `<select class="sk-select" ${attrs}><option value=""${initial === undefined ? ' selected' : ''}>${
        placeholder || 'Select an item'
      }</option>${selectOptions(element, initial)}</select>`;
    }
    case 'users_select': {
      const initial = str(element['initial_user']);
      return `<select class="sk-select" ${attrs}><option value=""${initial === undefined ? ' selected' : ''}>${
        placeholder || 'Select a person'
      }</option>${peopleOptions(context, initial)}</select>`;
    }
    case 'multi_users_select': {
      const initial = Array.isArray(element['initial_users']) ? (element['initial_users'] as string[]) : [];
      return `<select class="sk-select" multiple ${attrs}>${peopleOptions(context, undefined, initial)}</select>`;
    }
    case 'radio_buttons':
    case 'checkboxes': {
      const kind = element['type'] === 'radio_buttons' ? 'radio' : 'checkbox';
      const initial = new Set<string>();
      if (isObject(element['initial_option'])) initial.add(str(element['initial_option']['value']) ?? '');
      if (Array.isArray(element['initial_options']))
        for (const o of element['initial_options']) if (isObject(o)) initial.add(str(o['value']) ?? '');
      const name = `${blockId}.${actionIdOf(element, index)}`;
      return `<div class="sk-choices" ${attrs}>${(Array.isArray(element['options']) ? element['options'] : [])
        .filter(isObject)
        .map(
          (o) =>
            `<label class="sk-choice"><input type="${kind}" name="${escapeHtml(name)}" ${optionAttrs(o)}${
              initial.has(str(o['value']) ?? '') ? ' checked' : ''
            }> ${textObject(o['text'], context)}</label>`,
        )
        .join('')}</div>`;
    }
    case 'datepicker':
      return `<input class="sk-input" type="date" value="${escapeHtml(str(element['initial_date']) ?? '')}" ${attrs}>`;
    default:
      return `<span class="blk-unknown">[${escapeHtml(String(element['type']))}]</span>`;
  }
}

function renderInput(block: Json, blockId: string, attrs: string, context: BlockContext): string {
  const element = isObject(block['element']) ? block['element'] : {};
  const optional = block['optional'] === true;
  const error = context.errors?.[blockId];
  const hint = block['hint'] === undefined ? '' : `<div class="inp-hint">${textObject(block['hint'], context)}</div>`;
  return `<div class="blk blk-input${error ? ' has-error' : ''}" ${attrs} data-optional="${optional}">
<label class="inp-label">${escapeHtml(plain(block['label']))}${optional ? ' <span class="inp-optional">(optional)</span>' : ''}</label>
${inputElement(element, blockId, 0, context)}${hint}${error ? `<div class="inp-error" role="alert">${escapeHtml(error)}</div>` : ''}</div>`;
}

function richText(elements: unknown, context: MrkdwnContext): string {
  if (!Array.isArray(elements)) return '';
  return elements
    .filter(isObject)
    .map((element) => {
      switch (element['type']) {
        case 'rich_text_section':
          return `<div>${richInline(element['elements'], context)}</div>`;
        case 'rich_text_preformatted':
          return `<pre class="md-pre">${richInline(element['elements'], context)}</pre>`;
        case 'rich_text_quote':
          return `<blockquote class="md-quote">${richInline(element['elements'], context)}</blockquote>`;
        case 'rich_text_list': {
          const tag = element['style'] === 'ordered' ? 'ol' : 'ul';
          return `<${tag}>${(Array.isArray(element['elements']) ? element['elements'] : [])
            .filter(isObject)
            .map((item) => `<li>${richInline(item['elements'], context)}</li>`)
            .join('')}</${tag}>`;
        }
        default:
          return '';
      }
    })
    .join('');
}

function richInline(elements: unknown, context: MrkdwnContext): string {
  if (!Array.isArray(elements)) return '';
  return elements
    .filter(isObject)
    .map((element) => {
      switch (element['type']) {
        case 'text': {
          let html = plainToHtml(str(element['text']) ?? '', false);
          const style = isObject(element['style']) ? element['style'] : {};
          if (style['code'] === true) html = `<code class="md-code">${html}</code>`;
          if (style['bold'] === true) html = `<b>${html}</b>`;
          if (style['italic'] === true) html = `<i>${html}</i>`;
          if (style['strike'] === true) html = `<s>${html}</s>`;
          return html;
        }
        case 'user': {
          const id = str(element['user_id']) ?? '';
          return `<span class="md-mention" data-user="${escapeHtml(id)}">@${escapeHtml(context.userName(id) ?? id)}</span>`;
        }
        case 'link': {
          const url = str(element['url']) ?? '';
          const href = safeHref(url);
          const label = escapeHtml(str(element['text']) ?? url);
          return href === undefined
            ? label
            : `<a class="md-link" href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">${label}</a>`;
        }
        case 'emoji':
          return plainToHtml(`:${str(element['name']) ?? ''}:`);
        case 'channel':
          return `<span class="md-channel">#${escapeHtml(context.channelName?.(str(element['channel_id']) ?? '') ?? '')}</span>`;
        default:
          return '';
      }
    })
    .join('');
}

/**
 * Reads the state of every input in a rendered view, in the shape Slack puts in `view.state.values`:
 * `{ [block_id]: { [action_id]: { type, value | selected_option | selected_user | … } } }`.
 */
export function collectState(root: ParentNode): Record<string, Record<string, Record<string, unknown>>> {
  const values: Record<string, Record<string, Record<string, unknown>>> = {};
  for (const node of Array.from(root.querySelectorAll<HTMLElement>('[data-input]'))) {
    const blockId = node.dataset['blockId'] ?? '';
    const actionId = node.dataset['actionId'] ?? '';
    const type = node.dataset['type'] ?? '';
    const entry = readInput(node, type);
    values[blockId] = { ...(values[blockId] ?? {}), [actionId]: { type, ...entry } };
  }
  return values;
}

function option(value: string, label: string): Json {
  return { text: { type: 'plain_text', text: label, emoji: true }, value };
}

function readInput(node: HTMLElement, type: string): Json {
  switch (type) {
    case 'plain_text_input':
    case 'number_input': {
      const value = (node as HTMLInputElement).value;
      return { value: value === '' ? null : value };
    }
    case 'datepicker': {
      const value = (node as HTMLInputElement).value;
      return { selected_date: value === '' ? null : value };
    }
    case 'static_select': {
      const select = node as HTMLSelectElement;
      const chosen = select.selectedOptions[0];
      return {
        selected_option:
          chosen === undefined || chosen.value === '' ? null : option(chosen.value, chosen.dataset['label'] ?? ''),
      };
    }
    case 'users_select': {
      const value = (node as HTMLSelectElement).value;
      return { selected_user: value === '' ? null : value };
    }
    case 'multi_users_select':
      return { selected_users: Array.from((node as HTMLSelectElement).selectedOptions).map((o) => o.value) };
    case 'radio_buttons': {
      const checked = node.querySelector<HTMLInputElement>('input:checked');
      return {
        selected_option: checked === null ? null : option(checked.value, checked.dataset['label'] ?? ''),
      };
    }
    case 'checkboxes':
      return {
        selected_options: Array.from(node.querySelectorAll<HTMLInputElement>('input:checked')).map((c) =>
          option(c.value, c.dataset['label'] ?? ''),
        ),
      };
    default:
      return {};
  }
}

/** Whether an input's state holds a value (Slack refuses to submit a required input that is empty). */
export function hasValue(entry: Record<string, unknown>): boolean {
  for (const key of ['value', 'selected_option', 'selected_user', 'selected_date']) {
    if (key in entry) return entry[key] !== null && entry[key] !== '';
  }
  for (const key of ['selected_users', 'selected_options']) {
    if (key in entry) return Array.isArray(entry[key]) && (entry[key] as unknown[]).length > 0;
  }
  return true;
}
