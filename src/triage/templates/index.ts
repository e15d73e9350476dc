/** Templates: the shipped intents (`templates/*.yaml`), their schema, and the slots plans and findings name. */
export { loadTemplates, type TemplateRegistry, TemplateValidationError } from './template-registry.js';
export type { TriageTemplate } from './template-schema.js';
export {
  DETAIL_SLOTS,
  type DetailSlot,
  type NameSlot,
  OBJECT_SLOTS,
  type ObjectSlot,
  PLAN_TEMPLATE_VARS,
  REF_SLOTS,
  type RefSlot,
} from './template-slots.js';
