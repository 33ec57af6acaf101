import { inArray, sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.js';
import { llmUsageHourly, llmUsageTotals, users } from '../../db/schema/index.js';

/** Stored answers' token counts for one provider and model: in all, and since a moment. */
export interface TokenTotalsRow {
  provider: string;
  model: string;
  answers: number;
  inputTokens: number;
  outputTokens: number;
  recentAnswers: number;
  recentInputTokens: number;
  recentOutputTokens: number;
}

export const statusRepo = {
  /** The current email of each of `ids` that still exists. */
  async emailsOf(db: Db, ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await db
      .select({ id: users.id, email: users.email })
      .from(users)
      .where(inArray(users.id, ids));
    return new Map(rows.map((r) => [r.id, r.email]));
  },

  /**
   * Token counts of stored answers per provider and model, in all and from the hour `since` on,
   * from the totals the `messages` trigger keeps (a few hundred rows, never every answer).
   */
  async tokenTotals(db: Db, since: Date): Promise<TokenTotalsRow[]> {
    const [h, t] = [llmUsageHourly, llmUsageTotals];
    return queryRows<TokenTotalsRow>(
      db,
      sql`with recent as (
          select ${h.provider} as provider, ${h.model} as model, sum(${h.answers}) as answers,
            sum(${h.inputTokens}) as input, sum(${h.outputTokens}) as output
          from ${h} where ${h.hour} >= ${since.toISOString()}::timestamptz
          group by 1, 2)
        select t.provider, t.model, sum(t.answers)::float8 as answers,
          sum(t.input_tokens)::float8 as "inputTokens",
          sum(t.output_tokens)::float8 as "outputTokens",
          coalesce(max(r.answers), 0)::float8 as "recentAnswers",
          coalesce(max(r.input), 0)::float8 as "recentInputTokens",
          coalesce(max(r.output), 0)::float8 as "recentOutputTokens"
        from ${t} t left join recent r on r.provider = t.provider and r.model = t.model
        group by 1, 2
        order by 1, 2`,
    );
  },
};
