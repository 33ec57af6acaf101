import type { Passage } from '../../../providers/llm/types.js';
import { ToolError, type Tool } from './types.js';

/** A knowledge-base search as the turn runs it (through the chat's search gate). */
export type Retrieve = (query: string, limit: number) => Promise<Passage[]>;

const MAX_QUERY_CHARS = 500;
const MAX_RESULTS = 10;
const TEXT_CHARS = 1200;

/**
 * `search_knowledge_base` for one turn: what it finds joins the turn's passages (numbered after
 * them; a chunk already among them keeps its number), so the model can cite it as `[n]`.
 */
export function knowledgeSearchTool(retrieve: Retrieve, passages: Passage[]): Tool {
  return {
    definition: {
      name: 'search_knowledge_base',
      description:
        'Searches the clinical knowledge base (guidelines and protocols uploaded by administrators). ' +
        'Returns numbered passages; cite a passage you use as [n].',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string', minLength: 1, maxLength: MAX_QUERY_CHARS },
          limit: { type: 'integer', minimum: 1, maximum: MAX_RESULTS },
        },
        required: ['query'],
        additionalProperties: false,
      },
    },
    async run(args) {
      const { query, limit } = checkArguments(args);
      const found = await retrieve(query, limit);
      const results = found.map((p) => {
        const known = passages.find((q) => q.chunkId === p.chunkId);
        if (known !== undefined) return known;
        const added = { ...p, n: passages.length + 1 };
        passages.push(added);
        return added;
      });
      return {
        results: results.map((p) => ({
          n: p.n,
          title: p.title,
          page: p.page,
          heading: p.heading,
          text: p.text.slice(0, TEXT_CHARS),
        })),
      };
    },
  };
}

function checkArguments(args: Record<string, unknown>): { query: string; limit: number } {
  const { query, limit, ...extra } = args;
  if (Object.keys(extra).length > 0) throw new ToolError('Unknown arguments for the search');
  if (typeof query !== 'string' || query.trim() === '' || query.length > MAX_QUERY_CHARS) {
    throw new ToolError(
      `query must be a non-empty string of at most ${String(MAX_QUERY_CHARS)} characters`,
    );
  }
  if (limit === undefined) return { query, limit: 5 };
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_RESULTS) {
    throw new ToolError(`limit must be an integer from 1 to ${String(MAX_RESULTS)}`);
  }
  return { query, limit };
}
