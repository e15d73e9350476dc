import { SLACK_LIMITS } from '../../src/views/slack-limits.js';

/**
 * The Block Kit limits Slack enforces, checked the way Slack reports them: a list of `[ERROR] … [json-pointer:…]`
 * messages. A view that passes here is not guaranteed to render, but one that fails would be refused by Slack, so
 * tests against the stand-in catch it before a person does.
 */

export { SLACK_LIMITS };

const BLOCK_TYPES = new Set([
  'section',
  'header',
  'divider',
  'context',
  'actions',
  'input',
  'image',
  'rich_text',
  'markdown',
  'file',
  'video',
]);
const ELEMENT_TYPES = new Set([
  'button',
  'static_select',
  'users_select',
  'multi_users_select',
  'conversations_select',
  'channels_select',
  'external_select',
  'overflow',
  'datepicker',
  'timepicker',
  'datetimepicker',
  'plain_text_input',
  'number_input',
  'checkboxes',
  'radio_buttons',
  'image',
  'email_text_input',
  'url_text_input',
]);

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class Problems {
  readonly messages: string[] = [];
  add(pointer: string, message: string): void {
    this.messages.push(`[ERROR] ${message} [json-pointer:${pointer}]`);
  }
  maxLength(pointer: string, value: unknown, max: number): void {
    if (typeof value === 'string' && value.length > max) this.add(pointer, `must be less than ${max + 1} characters`);
  }
}

function checkText(p: Problems, pointer: string, text: unknown, max: number, required = true): void {
  if (text === undefined) {
    if (required) p.add(pointer, 'missing required field: text');
    return;
  }
  if (!isObject(text)) {
    p.add(pointer, 'must be a text object');
    return;
  }
  if (text['type'] !== 'plain_text' && text['type'] !== 'mrkdwn') {
    p.add(`${pointer}/type`, 'must be one of plain_text, mrkdwn');
  }
  if (typeof text['text'] !== 'string') p.add(`${pointer}/text`, 'must be a string');
  else if (text['text'].length === 0) p.add(`${pointer}/text`, 'must be more than 0 characters');
  p.maxLength(`${pointer}/text`, text['text'], max);
}

function checkOption(p: Problems, pointer: string, option: unknown): void {
  if (!isObject(option)) {
    p.add(pointer, 'must be an option object');
    return;
  }
  checkText(p, `${pointer}/text`, option['text'], SLACK_LIMITS.optionText);
  if (typeof option['value'] !== 'string') p.add(`${pointer}/value`, 'must be a string');
  p.maxLength(`${pointer}/value`, option['value'], SLACK_LIMITS.optionValue);
}

function checkElement(p: Problems, pointer: string, element: unknown): void {
  if (!isObject(element)) {
    p.add(pointer, 'must be an element object');
    return;
  }
  const type = element['type'];
  if (typeof type !== 'string' || !ELEMENT_TYPES.has(type)) {
    p.add(`${pointer}/type`, `unsupported element type ${JSON.stringify(type)}`);
    return;
  }
  p.maxLength(`${pointer}/action_id`, element['action_id'], SLACK_LIMITS.actionId);
  if (type === 'button') {
    checkText(p, `${pointer}/text`, element['text'], SLACK_LIMITS.buttonText);
    p.maxLength(`${pointer}/value`, element['value'], SLACK_LIMITS.buttonValue);
    const style = element['style'];
    if (style !== undefined && style !== 'primary' && style !== 'danger') {
      p.add(`${pointer}/style`, 'must be one of primary, danger');
    }
  }
  if (type === 'static_select') {
    const options = element['options'];
    if (!Array.isArray(options) || options.length === 0) p.add(`${pointer}/options`, 'must provide options');
    else {
      if (options.length > SLACK_LIMITS.staticSelectOptions) {
        p.add(`${pointer}/options`, `must provide no more than ${SLACK_LIMITS.staticSelectOptions} items`);
      }
      options.forEach((o, i) => {
        checkOption(p, `${pointer}/options/${i}`, o);
      });
    }
  }
  if (type === 'image') {
    p.maxLength(`${pointer}/alt_text`, element['alt_text'], SLACK_LIMITS.imageAltText);
  }
}

function checkBlock(p: Problems, pointer: string, block: unknown, surface: 'message' | 'modal' | 'home'): void {
  if (!isObject(block)) {
    p.add(pointer, 'must be a block object');
    return;
  }
  const type = block['type'];
  if (typeof type !== 'string' || !BLOCK_TYPES.has(type)) {
    p.add(`${pointer}/type`, `unsupported block type ${JSON.stringify(type)}`);
    return;
  }
  p.maxLength(`${pointer}/block_id`, block['block_id'], SLACK_LIMITS.blockId);
  switch (type) {
    case 'section': {
      const fields = block['fields'];
      if (block['text'] === undefined && fields === undefined) {
        p.add(pointer, 'must provide either text or fields');
      }
      checkText(p, `${pointer}/text`, block['text'], SLACK_LIMITS.sectionText, false);
      if (fields !== undefined) {
        if (!Array.isArray(fields)) p.add(`${pointer}/fields`, 'must be an array');
        else {
          if (fields.length > SLACK_LIMITS.sectionFields) {
            p.add(`${pointer}/fields`, `must provide no more than ${SLACK_LIMITS.sectionFields} items`);
          }
          fields.forEach((f, i) => {
            checkText(p, `${pointer}/fields/${i}`, f, SLACK_LIMITS.sectionFieldText);
          });
        }
      }
      if (block['accessory'] !== undefined) checkElement(p, `${pointer}/accessory`, block['accessory']);
      break;
    }
    case 'header':
      checkText(p, `${pointer}/text`, block['text'], SLACK_LIMITS.headerText);
      if (isObject(block['text']) && block['text']['type'] !== 'plain_text') {
        p.add(`${pointer}/text/type`, 'must be plain_text');
      }
      break;
    case 'context': {
      const elements = block['elements'];
      if (!Array.isArray(elements) || elements.length === 0) p.add(`${pointer}/elements`, 'must provide elements');
      else {
        if (elements.length > SLACK_LIMITS.contextElements) {
          p.add(`${pointer}/elements`, `must provide no more than ${SLACK_LIMITS.contextElements} items`);
        }
        elements.forEach((e, i) => {
          if (isObject(e) && e['type'] === 'image') checkElement(p, `${pointer}/elements/${i}`, e);
          else checkText(p, `${pointer}/elements/${i}`, e, SLACK_LIMITS.sectionText);
        });
      }
      break;
    }
    case 'actions': {
      const elements = block['elements'];
      if (!Array.isArray(elements) || elements.length === 0) p.add(`${pointer}/elements`, 'must provide elements');
      else {
        if (elements.length > SLACK_LIMITS.actionsElements) {
          p.add(`${pointer}/elements`, `must provide no more than ${SLACK_LIMITS.actionsElements} items`);
        }
        const ids = new Set<string>();
        elements.forEach((e, i) => {
          checkElement(p, `${pointer}/elements/${i}`, e);
          const id = isObject(e) ? e['action_id'] : undefined;
          if (typeof id === 'string') {
            if (ids.has(id)) p.add(`${pointer}/elements/${i}/action_id`, `duplicate action_id ${id}`);
            ids.add(id);
          }
        });
      }
      break;
    }
    case 'input':
      if (surface === 'message') p.add(`${pointer}/type`, 'input blocks are only allowed in modals and App Home');
      checkText(p, `${pointer}/label`, block['label'], SLACK_LIMITS.inputLabel);
      checkElement(p, `${pointer}/element`, block['element']);
      break;
    case 'image':
      if (typeof block['image_url'] !== 'string' && !isObject(block['slack_file'])) {
        p.add(pointer, 'must provide image_url or slack_file');
      }
      p.maxLength(`${pointer}/alt_text`, block['alt_text'], SLACK_LIMITS.imageAltText);
      break;
    default:
      break;
  }
}

/** Block ids must be unique within one message or view. */
function checkBlocks(p: Problems, blocks: unknown, max: number, surface: 'message' | 'modal' | 'home', at: string) {
  if (!Array.isArray(blocks)) {
    p.add(at, 'must be an array');
    return;
  }
  if (blocks.length > max) p.add(at, `must provide no more than ${max} items`);
  const ids = new Set<string>();
  blocks.forEach((block, i) => {
    checkBlock(p, `${at}/${i}`, block, surface);
    const id = isObject(block) ? block['block_id'] : undefined;
    if (typeof id === 'string') {
      if (ids.has(id)) p.add(`${at}/${i}/block_id`, `duplicate block_id ${id}`);
      ids.add(id);
    }
  });
}

/** Problems with the blocks of a message (chat.postMessage, chat.update, chat.postEphemeral, response_url). */
export function messageBlockProblems(blocks: unknown): string[] {
  const p = new Problems();
  checkBlocks(p, blocks, SLACK_LIMITS.messageBlocks, 'message', '/blocks');
  return p.messages;
}

/** Problems with a modal or App Home view (views.open, views.update, views.push, views.publish). */
export function viewProblems(view: unknown): string[] {
  const p = new Problems();
  if (!isObject(view)) {
    p.add('/view', 'must be a view object');
    return p.messages;
  }
  const type = view['type'];
  if (type !== 'modal' && type !== 'home') {
    p.add('/view/type', 'must be one of modal, home');
    return p.messages;
  }
  if (type === 'modal') {
    checkText(p, '/view/title', view['title'], SLACK_LIMITS.viewTitle);
    checkText(p, '/view/submit', view['submit'], SLACK_LIMITS.viewButton, false);
    checkText(p, '/view/close', view['close'], SLACK_LIMITS.viewButton, false);
    const blocks = Array.isArray(view['blocks']) ? view['blocks'] : [];
    if (view['submit'] === undefined && blocks.some((b) => isObject(b) && b['type'] === 'input')) {
      p.add('/view/submit', 'a modal with input blocks must provide submit');
    }
  }
  p.maxLength('/view/callback_id', view['callback_id'], SLACK_LIMITS.callbackId);
  p.maxLength('/view/private_metadata', view['private_metadata'], SLACK_LIMITS.privateMetadata);
  checkBlocks(p, view['blocks'], SLACK_LIMITS.viewBlocks, type === 'modal' ? 'modal' : 'home', '/view/blocks');
  return p.messages;
}
