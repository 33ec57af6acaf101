import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.js';
import type { GlossaryEntry } from '../../providers/llm/types.js';
import { writtenWords } from './abbreviations.js';

const wordsOf = (text: string) => writtenWords(text.toLowerCase());

/** A question's distinct words looked up, at most (a question is at most a few dozen). */
const MAX_WORDS = 100;
/** Rows read for one question, at most, before the entries it writes are picked. */
const MAX_ROWS = 200;

/**
 * The knowledge base's glossary: the abbreviations and pairs of names its live documents define
 * (kb_definitions, written by each indexing job: definitions.ts), and the entries a question
 * writes: its term ("LTBI", "Zestril"), its long form spelled out ("latent TB infection"), or, of a
 * pair of names, the other name ("lisinopril"). A chat turn gives them to the model, so that a
 * question in one document's shorthand reads the passages of another that spells it out, and a
 * search adds them to its query.
 *
 * Read for each question from the database (one indexed statement, by the first word of a term or
 * of its meaning), nothing held in memory: the glossary of 200,000 chunks' documents is as cheap
 * to ask as that of two, and a document indexed, superseded or deleted on any instance counts at
 * once.
 */
export class Glossary {
  constructor(
    private readonly db: Db,
    private readonly maxEntries = 20,
  ) {}

  /** The entries the question writes, at most `maxEntries`, each once. */
  async for(question: string): Promise<GlossaryEntry[]> {
    const words = [...new Set(wordsOf(question))].slice(0, MAX_WORDS);
    if (words.length === 0) return [];
    const list = sql.join(
      words.map((w) => sql`${w}`),
      sql`, `,
    );
    const rows = await queryRows<GlossaryEntry>(
      this.db,
      sql`select d.term, d.means, d.kind
            from kb_definitions d join kb_documents doc on doc.id = d.document_id
           where doc.superseded_by is null and doc.status = 'indexed'
             and (lower(split_part(d.term, ' ', 1)) in (${list})
                  or lower(split_part(d.means, ' ', 1)) in (${list}))
           order by doc.created_at, d.term
           limit ${MAX_ROWS}`,
    );
    const text = ` ${words.join(' ')} `;
    const seen = new Set<string>();
    const found: GlossaryEntry[] = [];
    for (const entry of rows) {
      const key = `${entry.term.toLowerCase()}\n${entry.means.toLowerCase()}`;
      if (seen.has(key) || !writes(text, entry)) continue;
      seen.add(key);
      found.push({ term: entry.term, means: entry.means, kind: entry.kind });
      if (found.length >= this.maxEntries) break;
    }
    return found;
  }
}

/**
 * Whether the question (its words, space-separated, padded) writes the entry: its term, or its
 * meaning whole ("latent TB infection"), or for a pair of names the other's first word (a generic
 * name without its salt: "lisdexamfetamine").
 */
function writes(text: string, entry: GlossaryEntry): boolean {
  const has = (words: readonly string[]) =>
    words.length > 0 && text.includes(` ${words.join(' ')} `);
  const means = wordsOf(entry.means);
  return (
    has(wordsOf(entry.term)) || has(means) || (entry.kind === 'name' && has(means.slice(0, 1)))
  );
}
