import { describe, expect, it } from 'vitest';
import type { SearchService } from '../knowledge/search.js';
import { createLogger } from '../../platform/logger.js';
import { loadConfig } from '../../config.js';
import { SearchGate } from './search-gate.js';
import { TurnRetrieval } from './turn-inputs.js';
import { ToolError } from './tools/types.js';

const log = createLogger(loadConfig({ LOG_LEVEL: 'silent' }));

/** A search that holds its slot until released. */
function heldSearch() {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const search = { search: () => held.then(() => []) } as unknown as SearchService;
  return { search, release };
}

describe('TurnRetrieval', () => {
  it("the model's own searches queue behind the turns' in one gate, and fail as a tool error past the deadline", async () => {
    const { search, release } = heldSearch();
    const retrieval = new TurnRetrieval(
      search,
      new SearchGate(1),
      { passages: 8, retrievalTimeoutMs: 50 },
      log,
    );
    const frames: unknown[] = [];
    const question = { id: 'q', content: 'metformin' } as Parameters<
      TurnRetrieval['forQuestion']
    >[0];
    const first = retrieval.forQuestion(question, (f) => frames.push(f));
    await expect(retrieval.forTool('metformin dose', 5)).rejects.toThrow(ToolError);
    expect(await first).toEqual([]);
    expect(frames).toEqual([expect.objectContaining({ type: 'error', code: 'KB_TIMEOUT' })]);
    release();
  });
});
