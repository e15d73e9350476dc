import * as z from 'zod';
import { ID_MAX, KUBE_NAME_MAX, SummaryText } from '../limits.js';

/**
 * A targeted read, as the cluster reader runs it. Kept apart from the workflow's records in the store, which the
 * cluster reader does not need: importing them would bring the DynamoDB client into its bundle.
 */
export const ReadSpecSchema = z.object({
  /** What the user sees: `get pods`, `logs web-1`, … */
  title: z.string().max(300),
  verb: z.enum(['get', 'list', 'logs', 'events']),
  kind: z.string().max(ID_MAX),
  name: z.string().max(KUBE_NAME_MAX).optional(),
  namespace: z.string().max(KUBE_NAME_MAX).optional(),
  container: z.string().max(63).optional(),
  previous: z.boolean().optional(),
  tailLines: z.number().int().min(1).max(1000).optional(),
  labelSelector: z.string().max(500).optional(),
  fieldSelector: z.string().max(500).optional(),
  /**
   * The kubectl read as typed (`kubectl get pods -o wide | grep Pending`): the cluster reader parses it again and
   * answers it as kubectl would. The fields above then only describe it for the evidence and the scope.
   */
  command: SummaryText.optional(),
  /** A question calmops answers by computation (src/diagnosis/question-bindings.ts): its id, and the span it asks about. */
  question: z.string().max(ID_MAX).optional(),
  windowMinutes: z.number().int().min(1).max(43_200).optional(),
});
export type ReadSpec = z.infer<typeof ReadSpecSchema>;
