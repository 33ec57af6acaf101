import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { openDatabase, queryRows, type Db } from '../src/db/client.js';
import { runMigrations } from '../src/db/migrate.js';
import { statusRepo } from '../src/modules/admin/status-repo.js';
import { tokenWindowStart } from '../src/modules/admin/status-service.js';
import { AuditService } from '../src/modules/audit/service.js';
import { MessageService } from '../src/modules/conversations/messages.js';
import type { UsageDto } from '../src/modules/conversations/schema.js';
import { ConversationsService } from '../src/modules/conversations/service.js';
import { usersRepo } from '../src/modules/users/repo.js';
import { ADMIN_DATABASE_URL, createDatabase } from './lib/fixtures.js';
import { num, percentile, runBenchmark, table, writeSection } from './lib/sections.js';

/**
 * `make bench-llm-usage` (issue 22 item 6), on PostgreSQL:
 *
 * 1. What the `messages` trigger that keeps the token totals costs: answers stored through
 *    `MessageService.append` by 16 writers at once, each in its own conversation, for a few
 *    seconds with `usage` (the trigger runs) and without (it does not), alternated, in one run.
 * 2. What the admin panel's token totals cost to read after a year of answers (every hour, every
 *    shard, two models): `statusRepo.tokenTotals` against a bare `SELECT 1` on the same pool.
 *
 * Knobs: BENCH_WRITERS (16), BENCH_SECONDS (each phase, 8), BENCH_ROUNDS (3), BENCH_WRITE=0 (do not
 * touch BENCHMARKS.md).
 */

const settings = {
  writers: num('BENCH_WRITERS', 16),
  seconds: num('BENCH_SECONDS', 8),
  rounds: num('BENCH_ROUNDS', 3),
  reads: 200,
  write: process.env.BENCH_WRITE !== '0',
};
const USAGE: UsageDto = {
  provider: 'openai',
  model: 'gpt-4o-mini',
  inputTokens: 612,
  outputTokens: 41,
};
const ANSWER = 'Start metformin at 500 mg once daily with the evening meal [1].';

const cleanups: (() => Promise<void>)[] = [];
async function cleanUp(): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
}

/** Answers stored per second by `writers` loops, each appending to its own conversation. */
async function appendRate(
  messages: MessageService,
  userId: string,
  conversations: string[],
  usage: UsageDto | null,
  seconds = settings.seconds,
): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let stored = 0;
  await Promise.all(
    conversations.map(async (conversationId) => {
      while (performance.now() < until) {
        await messages.append(userId, conversationId, {
          role: 'assistant',
          content: ANSWER,
          usage,
        });
        stored += 1;
      }
    }),
  );
  return stored / seconds;
}

/** A year of hourly totals: every hour, all 16 shards, two models. */
async function seedYear(db: Db): Promise<number> {
  await db.execute(sql`
    insert into llm_usage_hourly (hour, provider, model, shard, answers, input_tokens, output_tokens)
    select date_trunc('hour', now()) - h * interval '1 hour', 'openai', m, s, 10, 6000, 500
    from generate_series(1, 8760) h, unnest(array['gpt-4o', 'gpt-4o-mini']) m,
      generate_series(0, 15) s
    on conflict do nothing`);
  await db.execute(sql`
    insert into llm_usage_totals (provider, model, shard, answers, input_tokens, output_tokens)
    select provider, model, shard, sum(answers), sum(input_tokens), sum(output_tokens)
    from llm_usage_hourly group by 1, 2, 3
    on conflict (provider, model, shard) do update set answers = excluded.answers,
      input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens`);
  await db.execute(sql`vacuum analyze llm_usage_hourly`);
  await db.execute(sql`vacuum analyze llm_usage_totals`);
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from llm_usage_hourly`,
  );
  return row?.n ?? 0;
}

async function timings(work: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 20; i++) await work();
  const samples = new Float64Array(settings.reads);
  for (let i = 0; i < settings.reads; i++) {
    const started = performance.now();
    await work();
    samples[i] = performance.now() - started;
  }
  samples.sort();
  return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) };
}

const fixed = (n: number, digits = 1) => n.toFixed(digits);

async function main(): Promise<void> {
  const date = new Date();
  const load = loadavg()[0] ?? 0;
  const created = await createDatabase();
  cleanups.push(() => created.drop());
  const database = await openDatabase({ url: created.url, poolSize: settings.writers + 2 });
  cleanups.push(() => database.close());
  await runMigrations(database);
  const { db } = database;
  const userId = randomUUID();
  await usersRepo.insert(db, {
    id: userId,
    email: `bench.${userId.slice(0, 8)}@example.org`,
    fullName: 'Bench',
    passwordHash: '!benchmark-no-login',
    adminRole: 'user',
  });
  const list = new ConversationsService(db, new AuditService(db, () => new Date()));
  const conversations: string[] = [];
  for (let i = 0; i < settings.writers; i++) {
    conversations.push((await list.create(userId, { title: `c${String(i)}` })).id);
  }
  const messages = new MessageService(db);

  // Warm-up: connections opened, statements planned, both paths run once.
  await appendRate(messages, userId, conversations, USAGE, 2);
  const rates = { plain: [] as number[], usage: [] as number[] };
  for (let round = 0; round < settings.rounds; round++) {
    rates.plain.push(await appendRate(messages, userId, conversations, null));
    rates.usage.push(await appendRate(messages, userId, conversations, USAGE));
    console.log(
      `round ${String(round + 1)}: without usage ${fixed(rates.plain.at(-1) ?? 0)}/s, ` +
        `with usage ${fixed(rates.usage.at(-1) ?? 0)}/s`,
    );
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const plain = mean(rates.plain);
  const withUsage = mean(rates.usage);

  const rows = await seedYear(db);
  const since = tokenWindowStart(new Date());
  const totals = await timings(() => statusRepo.tokenTotals(db, since));
  const bare = await timings(() => db.execute(sql`select 1`));
  console.log(`token totals over ${String(rows)} hourly rows: p50 ${fixed(totals.p50, 2)} ms`);

  const [version] = await queryRows<{ v: string }>(
    db,
    sql`select current_setting('server_version') as v`,
  );
  await writeSection(
    'llm-usage',
    [
      '## LLM token totals (issue 22 item 6)',
      '',
      `\`make bench-llm-usage\`, ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC, PostgreSQL ${version?.v ?? '?'}, ${String(cpus().length)} cores, load average ${fixed(load)} at the start (the machine is shared: compare the ratios, not the rates).`,
      '',
      `### Storing answers: the trigger that keeps the totals`,
      '',
      `${String(settings.writers)} writers at once, each storing answers in its own conversation through \`MessageService.append\`, ${String(settings.seconds)} s per phase, the phases alternated ${String(settings.rounds)} times.`,
      '',
      table(
        ['answers', 'stored per second', 'against without usage'],
        [
          ['without usage (no trigger work)', fixed(plain), 'x1.00'],
          [
            'with usage (two upserts, 16 shards)',
            fixed(withUsage),
            `x${fixed(withUsage / plain, 2)}`,
          ],
        ],
      ),
      '',
      `Each round, stored per second without usage: ${rates.plain.map((r) => fixed(r)).join(', ')}; with usage: ${rates.usage.map((r) => fixed(r)).join(', ')}. A ratio within the spread of the rounds is no measurable cost.`,
      '',
      `### Reading the panel's totals after a year`,
      '',
      `\`statusRepo.tokenTotals\` over ${String(rows)} hourly rows (8,760 hours, 16 shards, two models), ${String(settings.reads)} reads, against \`SELECT 1\` on the same pool.`,
      '',
      table(
        ['query', 'p50 ms', 'p99 ms', 'p50 against SELECT 1'],
        [
          [
            'token totals',
            fixed(totals.p50, 2),
            fixed(totals.p99, 2),
            `x${fixed(totals.p50 / bare.p50)}`,
          ],
          ['SELECT 1', fixed(bare.p50, 2), fixed(bare.p99, 2), 'x1.0'],
        ],
      ),
    ].join('\n'),
    settings.write,
  );
}

await runBenchmark(ADMIN_DATABASE_URL, main, cleanUp);
