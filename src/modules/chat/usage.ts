import type { Metrics } from '../../platform/metrics.js';
import type { LlmEvent, LlmProvider } from '../../providers/llm/types.js';
import type { UsageDto } from '../conversations/schema.js';

/**
 * A turn's token usage (issue 22 item 6): the model reports it per call, a turn with tools makes
 * several calls, and the answer is stored with their sum. Only what the model reported is counted:
 * a call cut short reports nothing, and the offline extractive model reports nothing at all.
 */

/** `total` with one model call's reported tokens added. */
export function addUsage(
  total: UsageDto | null,
  llm: Pick<LlmProvider, 'name' | 'model'>,
  call: Extract<LlmEvent, { type: 'usage' }>,
): UsageDto {
  return {
    provider: llm.name,
    model: llm.model,
    inputTokens: (total?.inputTokens ?? 0) + call.inputTokens,
    outputTokens: (total?.outputTokens ?? 0) + call.outputTokens,
  };
}

/** Adds a turn's usage to `llm_tokens_total{provider,direction}`. */
export function countTokens(metrics: Pick<Metrics, 'llmTokens'>, usage: UsageDto | null): void {
  if (usage === null) return;
  metrics.llmTokens.inc({ provider: usage.provider, direction: 'input' }, usage.inputTokens);
  metrics.llmTokens.inc({ provider: usage.provider, direction: 'output' }, usage.outputTokens);
}
