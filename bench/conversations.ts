import { randomUUID } from 'node:crypto';
import { cpus, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { and, desc, eq, sql } from 'drizzle-orm';
import { openDatabase, queryRows, type Database, type Db } from '../src/db/client.js';
import { runMigrations } from '../src/db/migrate.js';
import { branches, conversations, messages } from '../src/db/schema/index.js';
import { AuditService } from '../src/modules/audit/service.js';
import { MessageService } from '../src/modules/conversations/messages.js';
import type { CitationDto } from '../src/modules/conversations/schema.js';
import { ConversationsService } from '../src/modules/conversations/service.js';
import { usersRepo } from '../src/modules/users/repo.js';
import { ADMIN_DATABASE_URL, createDatabase } from './lib/fixtures.js';
import { num, percentile, prng, runBenchmark, table, writeSection } from './lib/sections.js';

/**
 * `make bench-conversations` (issue 3): listing one user's conversations (a page of 20 out of
 * 10,000) and reading a 500-message thread three branches deep, p50 and p99, against a bare
 * `SELECT 1` round trip on the same database and pool, in one run; on PostgreSQL (the goals) and
 * on the embedded PGlite (reported only). Writes the conversations section of BENCHMARKS.md.
 * Knobs for quick trials: BENCH_CONVERSATIONS, BENCH_SCALE (multiplies every iteration count),
 * BENCH_PGLITE=0 (skip PGlite), BENCH_VACUUM=0 (ANALYZE only after seeding), BENCH_WRITE=0 (do
 * not touch BENCHMARKS.md).
 */

const settings = {
  conversations: num('BENCH_CONVERSATIONS', 10_000),
  otherUsers: 4,
  otherConversations: 500,
  scale: num('BENCH_SCALE', 1),
  pglite: process.env.BENCH_PGLITE !== '0',
  vacuum: process.env.BENCH_VACUUM !== '0',
  write: process.env.BENCH_WRITE !== '0',
};
const PAGE_SIZE = 20;
const DEEP_PAGE = 100;
const FOLDERS = ['Cardiology', 'Nephrology', 'Paediatrics', 'On call', 'Teaching', 'Research'];
/** The thread: main, then three forks, each from the middle of its parent's thread. */
const THREAD_PLAN = { main: 200, forks: [240, 230, 300] } as const;
const THREAD_LENGTH = 500;

// ---------------------------------------------------------------------------------------------
// Deterministic text, so every run seeds the same shape of data.

const SEED = 20_261_122;
/** Reset at the start of each backend's seeding, so both get the same data. */
let random = prng(SEED);
const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

const TOPICS = [
  'hypertension in chronic kidney disease',
  'community-acquired pneumonia',
  'atrial fibrillation and anticoagulation',
  'type 2 diabetes with heart failure',
  'acute otitis media in children',
  'asthma exacerbation',
  'sepsis in the emergency department',
  'hyperkalaemia',
  'lithium monitoring',
  'iron deficiency anaemia in pregnancy',
  'COPD inhaler step-up',
  'DVT prophylaxis after hip surgery',
  'migraine prophylaxis',
  'urinary tract infection in older adults',
  'statin intolerance',
  'hypothyroidism dose adjustment',
  'paediatric fever without a source',
  'opioid conversion for palliative care',
  'gout flare with reduced eGFR',
  'hyponatraemia workup',
];
const ASKS = [
  'Dosing question:',
  'Guideline check:',
  'Differential for',
  'Follow-up on',
  'Second-line options for',
  'Monitoring plan for',
  'Patient handout on',
  'Drug interactions in',
];
const SENTENCES = [
  'Current guidance recommends confirming the diagnosis with repeated measurements before starting treatment.',
  'In patients with an eGFR below 30 mL/min/1.73 m², the dose should be reduced and levels checked within a week.',
  'The evidence for this comes mainly from two randomised trials with follow-up of about three years.',
  'Watch for hyperkalaemia, especially when an ACE inhibitor is combined with a mineralocorticoid antagonist.',
  'For children under two, a watchful-waiting approach is not recommended when the presentation is bilateral.',
  'A CHA₂DS₂-VASc score of 2 or more in men, or 3 or more in women, supports oral anticoagulation.',
  'If symptoms persist after 48 to 72 hours, reassess and consider imaging or a change of agent.',
  'The local formulary lists a first-line choice and an alternative for penicillin allergy.',
  'Renal function, electrolytes and a full blood count should be repeated at the next review.',
  'Shared decision-making matters here: explain the expected benefit and the bleeding risk in absolute terms.',
  'Check adherence and inhaler technique before escalating therapy.',
  'There is no strong evidence that a higher dose improves outcomes, and adverse effects increase.',
  'Document the indication, the planned duration and the criteria for stopping.',
  'What would you change if the patient were also taking amiodarone?',
  'She is 74, on ramipril 5 mg and furosemide 40 mg, with a potassium of 5.6 this morning.',
  'He has had three episodes this month and the last one needed a visit to the emergency department.',
];
const text = (minChars: number, maxChars: number) => {
  const target = int(minChars, maxChars);
  let out = '';
  while (out.length < target) out += (out === '' ? '' : ' ') + pick(SENTENCES);
  return out.length > maxChars ? out.slice(0, maxChars).trimEnd() : out;
};
const title = () => `${pick(ASKS)} ${pick(TOPICS)}`;
const citations = (): CitationDto[] =>
  Array.from({ length: int(1, 3) }, (_, i) => {
    const doc = int(1, 400);
    return {
      index: i + 1,
      documentId: `doc-${doc}`,
      docKey: `guidelines/${pick(TOPICS).replaceAll(' ', '-')}-${doc}.pdf`,
      title: `Clinical guideline: ${pick(TOPICS)}`,
      version: int(1, 4),
      chunkId: `doc-${doc}:chunk-${int(0, 300)}`,
      page: random() < 0.8 ? int(1, 120) : null,
      snippet: text(120, 300),
      score: Math.round((0.55 + random() * 0.44) * 1000) / 1000,
    };
  });

// ---------------------------------------------------------------------------------------------
// Seeding.

interface Fixture {
  userId: string;
  threadConversationId: string;
  deepBranchId: string;
  /** Ids of the deep branch's whole thread, oldest first. */
  threadIds: string[];
  totals: { all: number; unarchived: number; folder: number };
  seeded: { conversations: number; messages: number; seconds: number; threadSeconds: number };
}

const DAY = 86_400_000;

/** Conversations (with main branches and main-branch messages) inserted in bulk, as the services would store them. */
async function seedConversations(
  db: Db,
  userId: string,
  count: number,
  now: number,
): Promise<{ archived: number; inFolder: Record<string, number>; messages: number }> {
  const stats = { archived: 0, inFolder: {} as Record<string, number>, messages: 0 };
  const BATCH = 500;
  for (let done = 0; done < count; done += BATCH) {
    const convRows: (typeof conversations.$inferInsert)[] = [];
    const messageRows: (typeof messages.$inferInsert)[] = [];
    for (let i = done; i < Math.min(count, done + BATCH); i++) {
      const id = randomUUID();
      const createdAt = now - int(1, 730) * DAY - int(0, DAY);
      const n = 2 * int(0, 6);
      let at = createdAt;
      let parent: string | null = null;
      for (let seq = 1; seq <= n; seq++) {
        at += int(5_000, 180_000);
        const mid = randomUUID();
        const assistant = seq % 2 === 0;
        messageRows.push({
          id: mid,
          conversationId: id,
          branchId: 'main',
          seq,
          parentMessageId: parent,
          role: assistant ? 'assistant' : 'user',
          content: assistant ? text(400, 800) : text(200, 450),
          citations: assistant ? citations() : [],
          toolCalls: [],
          clientMessageId: assistant ? null : randomUUID(),
          interrupted: false,
          createdAt: new Date(at),
        });
        parent = mid;
      }
      const archived = random() < 0.15;
      const folderId = random() < 0.3 ? pick(FOLDERS) : null;
      if (archived) stats.archived++;
      if (folderId !== null) stats.inFolder[folderId] = (stats.inFolder[folderId] ?? 0) + 1;
      stats.messages += n;
      convRows.push({
        id,
        userId,
        title: title(),
        archived,
        folderId,
        messageCount: n,
        lastSeq: n,
        createdAt: new Date(createdAt),
        updatedAt: new Date(at),
      });
    }
    await db.insert(conversations).values(convRows);
    await db
      .insert(branches)
      .values(convRows.map((c) => ({ conversationId: c.id, id: 'main', createdAt: c.createdAt })));
    for (let m = 0; m < messageRows.length; m += BATCH) {
      await db.insert(messages).values(messageRows.slice(m, m + BATCH));
    }
  }
  return stats;
}

async function createUser(db: Db, name: string): Promise<string> {
  const id = randomUUID();
  await usersRepo.insert(db, {
    id,
    email: `${name.toLowerCase().replaceAll(' ', '.')}.${id.slice(0, 8)}@example.org`,
    fullName: name,
    passwordHash: '!benchmark-no-login',
    adminRole: 'user',
  });
  return id;
}

/**
 * The deep thread, through the services' real write path: main, then B1 forked from the middle
 * of main's thread, B2 from the middle of B1's thread, B3 from the middle of B2's: B3's thread
 * is 500 messages long.
 */
async function seedThread(
  conversationsService: ConversationsService,
  messageService: MessageService,
  userId: string,
): Promise<{ conversationId: string; branchId: string; threadIds: string[]; messages: number }> {
  const conversation = await conversationsService.create(userId, {
    title: 'Differential for hyponatraemia workup (ward round, bed 12)',
    folderId: 'On call',
  });
  const cid = conversation.id;
  let stored = 0;
  const say = async (branchId: string, position: number): Promise<string> => {
    const assistant = position % 2 === 0;
    const { message } = await messageService.append(userId, cid, {
      branchId,
      role: assistant ? 'assistant' : 'user',
      content: assistant ? text(400, 800) : text(200, 450),
      citations: assistant ? citations() : [],
      clientMessageId: assistant ? null : randomUUID(),
    });
    stored++;
    return message.id;
  };
  // The thread of the branch being written, oldest first.
  let thread: string[] = [];
  for (let p = 1; p <= THREAD_PLAN.main; p++) thread.push(await say('main', p));
  let branchId = 'main';
  for (const own of THREAD_PLAN.forks) {
    const middle = Math.floor(thread.length / 2);
    const forkAfter = thread[middle - 1]!;
    const { branch, message } = await messageService.fork(userId, cid, forkAfter, text(200, 450));
    if (message === null) throw new Error('fork stored no initial message');
    stored++;
    branchId = branch.id;
    thread = [...thread.slice(0, middle), message.id];
    for (let p = middle + 2; p <= middle + own; p++) thread.push(await say(branchId, p));
  }
  if (thread.length !== THREAD_LENGTH) throw new Error(`thread of ${thread.length} messages`);
  return { conversationId: cid, branchId, threadIds: thread, messages: stored };
}

async function seed(database: Database): Promise<Fixture> {
  const { db } = database;
  const started = performance.now();
  const now = Date.now();
  random = prng(SEED);
  const userId = await createUser(db, 'Dr Bench Mark');
  // The thread's conversation is one of the user's conversations, created last (newest).
  const mine = await seedConversations(db, userId, settings.conversations - 1, now);
  let messageCount = mine.messages;
  for (let u = 0; u < settings.otherUsers; u++) {
    const other = await createUser(db, `Dr Other ${u + 1}`);
    messageCount += (await seedConversations(db, other, settings.otherConversations, now)).messages;
  }
  const threadStarted = performance.now();
  const audit = new AuditService(db, () => new Date());
  const thread = await seedThread(
    new ConversationsService(db, audit),
    new MessageService(db),
    userId,
  );
  const threadSeconds = (performance.now() - threadStarted) / 1000;
  messageCount += thread.messages;
  // What autovacuum does after bulk inserts, done now so that every run reads the same state:
  // statistics, and the visibility map that lets counts come from the indexes alone.
  await db.execute(settings.vacuum ? sql`vacuum (analyze)` : sql`analyze`);
  return {
    userId,
    threadConversationId: thread.conversationId,
    deepBranchId: thread.branchId,
    threadIds: thread.threadIds,
    totals: {
      all: settings.conversations,
      unarchived: settings.conversations - mine.archived,
      folder: mine.inFolder.Cardiology ?? 0,
    },
    seeded: {
      conversations: settings.conversations + settings.otherUsers * settings.otherConversations,
      messages: messageCount,
      seconds: (performance.now() - started) / 1000,
      threadSeconds,
    },
  };
}

/** The seeded data as the services and the trigger see it: fails the run when anything is off. */
async function check(database: Database, f: Fixture): Promise<void> {
  const { db } = database;
  const audit = new AuditService(db, () => new Date());
  const list = new ConversationsService(db, audit);
  const svc = new MessageService(db);
  const expectEqual = (what: string, actual: unknown, expected: unknown) => {
    if (JSON.stringify(actual) !== JSON.stringify(expected)) {
      throw new Error(`${what}: ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
    }
  };
  const first = await list.page(f.userId, {}, 1, PAGE_SIZE);
  expectEqual('list total', first.total, f.totals.all);
  expectEqual('list page size', first.rows.length, PAGE_SIZE);
  expectEqual('newest conversation', first.rows[0]?.id, f.threadConversationId);
  const [direct] = await queryRows<{ ids: string[] }>(
    db,
    sql`select array_agg(id order by updated_at desc, id desc) as ids from (
          select id, updated_at from conversations where user_id = ${f.userId}
          order by updated_at desc, id desc offset ${(DEEP_PAGE - 1) * PAGE_SIZE} limit ${PAGE_SIZE}) p`,
  );
  const deep = await list.page(f.userId, {}, DEEP_PAGE, PAGE_SIZE);
  expectEqual(
    'deep page',
    deep.rows.map((r) => r.id),
    direct?.ids ?? [],
  );
  const unarchived = await list.page(f.userId, { archived: false }, 1, PAGE_SIZE);
  expectEqual('unarchived total', unarchived.total, f.totals.unarchived);
  const folder = await list.page(f.userId, { folderId: 'Cardiology' }, 1, PAGE_SIZE);
  expectEqual('folder total', folder.total, f.totals.folder);
  const [counts] = await queryRows<{ stored: number; counted: number; lastSeq: number }>(
    db,
    sql`select (select sum(n) from conversation_counts)::int as stored,
               (select count(*) from conversations)::int as counted,
               (select last_seq from conversations where id = ${f.threadConversationId}) as "lastSeq"`,
  );
  expectEqual('conversation_counts', counts?.stored, counts?.counted);
  for (const limit of [50, 200, 500]) {
    const page = await svc.thread(f.userId, f.threadConversationId, f.deepBranchId, { limit });
    expectEqual(`thread total (limit ${limit})`, page.total, THREAD_LENGTH);
    expectEqual(
      `thread page (limit ${limit})`,
      page.messages.map((m) => m.id),
      f.threadIds.slice(-limit),
    );
  }
  const before = f.threadIds[THREAD_LENGTH - 150]!;
  const older = await svc.thread(f.userId, f.threadConversationId, f.deepBranchId, {
    limit: 50,
    before,
  });
  expectEqual(
    'thread page before',
    older.messages.map((m) => m.id),
    f.threadIds.slice(THREAD_LENGTH - 200, THREAD_LENGTH - 150),
  );
  const main = await svc.thread(f.userId, f.threadConversationId, 'main', { limit: 500 });
  expectEqual('main thread', main.total, THREAD_PLAN.main);
}

// ---------------------------------------------------------------------------------------------
// Measuring.

interface Target {
  name: string;
  iterations: number;
  /** The headline goal: p50 at most this many times the SELECT 1 p50. */
  goal?: number;
  run: () => Promise<unknown>;
}

interface Measured {
  name: string;
  iterations: number;
  p50: number;
  p99: number;
  /** p50 over the interleaved SELECT 1 p50, and over the back-to-back SELECT 1 p50. */
  ratio: number;
  ratioBackToBack: number;
  /** Each tenth of the run: its p50 over that tenth's SELECT 1 p50. */
  perPart: number[];
  goal?: number;
}

interface Measurement {
  results: Measured[];
  /** SELECT 1 run 100 times in a row after each tenth: the round trip at its fastest. */
  backToBack: { iterations: number; p50: number; p99: number };
}

function targetsFor(database: Database, f: Fixture): Target[] {
  const { db } = database;
  const list = new ConversationsService(db, new AuditService(db, () => new Date()));
  const svc = new MessageService(db);
  const n = (count: number) => Math.max(10, Math.round(count * settings.scale));
  const thread = (limit: number) => () =>
    svc.thread(f.userId, f.threadConversationId, f.deepBranchId, { limit });
  // What reading the page's 50 messages costs by itself: the newest 50 of B3, no ancestors, no
  // total, no ownership check; a prepared drizzle select.
  const reference = db
    .select()
    .from(messages)
    .where(
      and(
        eq(messages.conversationId, sql.placeholder('conversationId')),
        eq(messages.branchId, sql.placeholder('branchId')),
      ),
    )
    .orderBy(desc(messages.seq))
    .limit(50)
    .prepare('bench_reference_page');
  return [
    { name: 'SELECT 1', iterations: n(2000), run: () => db.execute(sql`select 1`) },
    {
      name: 'list, page 1 of 20',
      iterations: n(2000),
      goal: 3,
      run: () => list.page(f.userId, {}, 1, PAGE_SIZE),
    },
    {
      name: 'list, archived=false, page 1',
      iterations: n(2000),
      run: () => list.page(f.userId, { archived: false }, 1, PAGE_SIZE),
    },
    {
      name: `list, page ${DEEP_PAGE}`,
      iterations: n(2000),
      run: () => list.page(f.userId, {}, DEEP_PAGE, PAGE_SIZE),
    },
    { name: 'thread, limit 50 (API default)', iterations: n(1000), goal: 5, run: thread(50) },
    { name: 'thread, limit 200 (API maximum)', iterations: n(1000), run: thread(200) },
    {
      name: `thread, whole (limit ${THREAD_LENGTH})`,
      iterations: n(1000),
      goal: 5,
      run: thread(THREAD_LENGTH),
    },
    {
      name: 'reference: 50 messages, one index scan',
      iterations: n(1000),
      run: () =>
        reference.execute({ conversationId: f.threadConversationId, branchId: f.deepBranchId }),
    },
  ];
}

/**
 * Runs the targets interleaved call by call: round r runs, in a shuffled order, every target whose
 * share of the calls is due (a target with half the iterations runs every other round). Whatever
 * the machine does meanwhile hits every target alike, and no target runs with caches left warm by
 * a stretch of its own calls. SELECT 1 is also run in stretches of 100 after each tenth of the
 * run, for the fastest round trip.
 */
async function measure(label: string, targets: Target[]): Promise<Measurement> {
  const rounds = Math.max(...targets.map((t) => t.iterations));
  const parts = 10;
  const shuffle = prng(7);
  const due = (t: Target, r: number) =>
    Math.floor(((r + 1) * t.iterations) / rounds) > Math.floor((r * t.iterations) / rounds);
  const order = () => {
    const o = targets.map((_, i) => i);
    for (let i = o.length - 1; i > 0; i--) {
      const j = Math.floor(shuffle() * (i + 1));
      [o[i], o[j]] = [o[j]!, o[i]!];
    }
    return o;
  };
  // Warm-up: a tenth of the rounds, untimed (JIT, plans, caches, the pool's connection).
  for (let r = 0; r < Math.ceil(rounds / 10); r++) {
    for (const i of order()) if (due(targets[i]!, r)) await targets[i]!.run();
  }
  const samples = targets.map(() => Array.from({ length: parts }, () => [] as number[]));
  const backToBack: number[] = [];
  const selectOne = targets[0]!;
  for (let r = 0; r < rounds; r++) {
    const part = Math.floor((r * parts) / rounds);
    for (const i of order()) {
      const t = targets[i]!;
      if (!due(t, r)) continue;
      const started = performance.now();
      await t.run();
      samples[i]![part]!.push(performance.now() - started);
    }
    if (Math.floor(((r + 1) * parts) / rounds) > part) {
      for (let k = 0; k < 100; k++) {
        const started = performance.now();
        await selectOne.run();
        backToBack.push(performance.now() - started);
      }
      console.log(`${label}: ${part + 1}/${parts} of the run done`);
    }
  }
  const sorted = (values: number[]) => Float64Array.from(values).sort();
  const p50 = (values: number[]) => percentile(sorted(values), 0.5);
  const baseP50 = p50(samples[0]!.flat());
  const basePerPart = samples[0]!.map(p50);
  const tight = sorted(backToBack);
  const tightP50 = percentile(tight, 0.5);
  return {
    results: targets.map((t, i) => {
      const all = sorted(samples[i]!.flat());
      const median = percentile(all, 0.5);
      return {
        name: t.name,
        iterations: all.length,
        p50: median,
        p99: percentile(all, 0.99),
        ratio: median / baseP50,
        ratioBackToBack: median / tightP50,
        perPart: samples[i]!.map((values, k) => p50(values) / basePerPart[k]!),
        ...(t.goal === undefined ? {} : { goal: t.goal }),
      };
    }),
    backToBack: { iterations: tight.length, p50: tightP50, p99: percentile(tight, 0.99) },
  };
}

// ---------------------------------------------------------------------------------------------
// Report.

const ms = (v: number) => v.toFixed(3);

function resultTable(m: Measurement, withGoals: boolean): string {
  const head = [
    'read',
    'calls',
    'p50 ms',
    'p99 ms',
    'p50 / SELECT 1',
    'per tenth of the run',
    'p50 / back-to-back SELECT 1',
  ];
  const ratio = (v: number) => v.toFixed(2);
  const rows = m.results.map((r) => {
    const base = r.name === 'SELECT 1';
    const cells = [
      r.name,
      r.iterations,
      ms(r.p50),
      ms(r.p99),
      base ? '1' : ratio(r.ratio),
      base ? '' : `${ratio(Math.min(...r.perPart))} to ${ratio(Math.max(...r.perPart))}`,
      ratio(r.ratioBackToBack),
    ];
    if (!withGoals) return cells;
    if (r.goal === undefined) return [...cells, '', ''];
    return [...cells, `≤ ${r.goal}`, r.ratio <= r.goal ? 'yes' : '**no**'];
  });
  const b = m.backToBack;
  const tight = ['SELECT 1, 100 back to back', b.iterations, ms(b.p50), ms(b.p99), '', '', '1'];
  return table(withGoals ? [...head, 'goal', 'met'] : head, [
    ...rows,
    withGoals ? [...tight, '', ''] : tight,
  ]);
}

interface Report {
  date: Date;
  load: number;
  postgres: string;
  pglite: string | undefined;
  pg: { fixture: Fixture; measured: Measurement };
  lite: { fixture: Fixture; measured: Measurement } | undefined;
}

function seededLine(f: Fixture): string {
  return (
    `${f.seeded.conversations} conversations and ${f.seeded.messages} messages seeded in ` +
    `${f.seeded.seconds.toFixed(1)} s (the deep thread's ${THREAD_PLAN.main + THREAD_PLAN.forks.reduce((a, b) => a + b, 0)} ` +
    `appends and forks through \`MessageService\`: ${f.seeded.threadSeconds.toFixed(1)} s)`
  );
}

function render(r: Report): string {
  const when = r.date.toISOString().replace('T', ' ').slice(0, 16);
  const cpu = cpus()[0]?.model ?? '?';
  const fp = THREAD_PLAN;
  const rows = r.pg.measured.results;
  const find = (prefix: string) => rows.find((x) => x.name.startsWith(prefix));
  const whole = find('thread, whole');
  const fifty = find('thread, limit 50');
  const reference = find('reference');
  const times = (x: Measured | undefined) => (x === undefined ? '?' : x.ratio.toFixed(1));
  return `## Conversations (issue 3)

Written by \`bench/conversations.ts\`; edit the script, not this section.

- Command: \`make bench-conversations\` (\`npx tsx bench/conversations.ts\`; \`make bench\` runs it
  after the http benchmark)
- Date: ${when} UTC
- Machine: ${cpu}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, load average
  ${r.load.toFixed(2)} at the start (other work was running); Node ${process.version};
  PostgreSQL ${r.postgres} on the same machine, reached over TCP on 127.0.0.1 through the
  service's own drizzle handle and \`pg\` pool (10 connections). The benchmark and PostgreSQL
  share the cores with whatever else runs: only ratios within one run compare.
- Data: a scratch database, migrated, dropped at the end. One user with
  ${settings.conversations} conversations (titles like "Dosing question: hyperkalaemia",
  \`updated_at\` spread over two years, 15% archived, 30% in one of ${FOLDERS.length} folders,
  0 to 12 messages each on \`main\`) and ${settings.otherUsers} other users with
  ${settings.otherConversations} each, bulk-inserted through drizzle with the columns the services
  write (\`seq\`, parent links, \`message_count\`, \`last_seq\`; the trigger keeps
  \`conversation_counts\`). The deep thread goes through \`MessageService.append\` and \`fork\`:
  \`main\` has ${fp.main} messages, B1 forks from its middle and adds ${fp.forks[0]}, B2 forks from
  the middle of B1's thread and adds ${fp.forks[1]}, B3 from the middle of B2's and adds
  ${fp.forks[2]}, so B3's thread is ${THREAD_LENGTH} messages: user and assistant turns
  alternating, 200 to 800 characters, assistant turns with 1 to 3 citations. Then
  \`${settings.vacuum ? 'VACUUM (ANALYZE)' : 'ANALYZE'}\`${settings.vacuum ? ' (what autovacuum does after bulk inserts, done at once so that every run reads the same state)' : ''}.
  ${seededLine(r.pg.fixture)}.
- Reads: \`SELECT 1\` is \`\`db.execute(sql\`select 1\`)\`\` on the same handle. The lists are
  \`ConversationsService.page(userId, filter, page, 20)\` (rows and total). The threads are
  \`MessageService.thread(userId, conversationId, B3, { limit })\`: 50 is the API's default, 200
  its maximum, ${THREAD_LENGTH} the whole thread as the chat engine reads it for context. The
  reference row reads the newest 50 messages of B3 alone with one prepared index scan: what
  those 50 rows cost to read and send, whatever the query around them.
- Measure: one call at a time from this process, timed with \`performance.now()\`. The reads are
  interleaved call by call: each round runs every read whose share of the calls is due, in a
  shuffled order (the thread reads and the reference every other round), after untimed
  warm-up rounds (a tenth as many). p50 and p99 are over every timed call; "per tenth of the run"
  is the range of the p50 ratios of the ten tenths of the run.
- Round trip: interleaved with other reads, \`SELECT 1\` takes about three times as long as the
  same statement repeated back to back (last row), on this virtual machine even when what runs
  in between is a busy-wait in Node and no query at all (checked while writing this benchmark):
  after any pause the PostgreSQL process has to be woken up again. Every read here pays that once, so the goals are taken
  against the interleaved \`SELECT 1\`; the ratios to the back-to-back figure are shown too.

### PostgreSQL

${resultTable(r.pg.measured, true)}

Goals (issue 3): list p50 at most 3 times the \`SELECT 1\` round trip; thread p50 at most 5
times, held both to the API's default page and to the whole ${THREAD_LENGTH}-message thread. The
whole thread is ${times(whole)} times the round trip: it sends about half a megabyte (the
messages' text and their citations' JSON) that the server formats and \`pg\` parses, which no
query shape avoids. The default page is ${times(fifty)} times, of which the 50 rows themselves
(the reference) take ${times(reference)}: walking the branches, counting the thread for its total
and checking ownership add the rest.
${
  r.lite === undefined
    ? ''
    : `
### PGlite (embedded, in memory)

${resultTable(r.lite.measured, false)}

The same data and reads on PGlite ${r.pglite ?? ''} in this process (PostgreSQL compiled to
WebAssembly; no network, one query at a time), where the back-to-back gap is only that of
warm caches. No goal. ${seededLine(r.lite.fixture)}.
`
}
### How the reads work

The list is one prepared statement per filter shape (\`conversationsRepo.page\`): the page from the index on (\`user_id\`, \`updated_at\` desc, \`id\`
desc), or its \`archived\` or folder variant, read up to the offset; the total as a sum over the
user's few \`conversation_counts\` rows, which a trigger on \`conversations\` keeps, so it costs the
same for 10 or 10,000 conversations. With the offset and limit as parameters PostgreSQL plans
each execution anew (it cannot cost a generic plan for an unknown limit), but the statement is
parsed once per connection. Page ${DEEP_PAGE} walks 2,000 index entries and their rows to
reach its offset.

The thread is one prepared statement (\`messagesRepo.thread\`). Each fork records the message it
follows, that message's branch and its \`seq\`, which grows in append order across the
conversation. A recursive CTE walks from the branch up to \`main\`, one row per level of nesting
(4 here, whatever the thread's length), each with the \`seq\` up to which that level belongs to
the thread. Every message of a deeper level was appended after its fork, so the levels hold
disjoint ranges of \`seq\`, the deepest the newest. Each level's messages on the thread are
counted from the (\`conversation_id\`, \`branch_id\`, \`seq\`) index alone (the total), each level
gets its share of the page, newest level first, and the page's rows, and only those, are read
through the same index backwards. PostgreSQL keeps one generic plan for it, so a read is one
round trip with neither parsing nor planning.

Before the changes made with this benchmark, the thread statement materialised the whole thread
(all 500 messages, text and citations) to sort it and take a page, and both statements were
parsed and planned on every call; side by side on this machine the old thread read took 2.6
times as long at limit 50 (1.4 times for the whole thread) and the old list page 1.7 times as
long.`;
}

// ---------------------------------------------------------------------------------------------

const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) {
    await fn().catch((err: unknown) => {
      console.error('clean-up step failed:', err);
    });
  }
}

async function run(label: string, database: Database) {
  await runMigrations(database);
  console.log(`${label}: seeding`);
  const fixture = await seed(database);
  console.log(`${label}: ${seededLine(fixture)}`);
  await check(database, fixture);
  const measured = await measure(label, targetsFor(database, fixture));
  for (const r of measured.results) {
    console.log(
      `${label}  ${r.name.padEnd(34)} p50 ${ms(r.p50).padStart(7)} ms  p99 ${ms(r.p99).padStart(7)} ms` +
        `  x${r.ratio.toFixed(2)}  (x${r.ratioBackToBack.toFixed(2)} back to back)`,
    );
  }
  const b = measured.backToBack;
  console.log(`${label}  SELECT 1 back to back: p50 ${ms(b.p50)} ms  p99 ${ms(b.p99)} ms`);
  return { fixture, measured };
}

async function main(): Promise<void> {
  const date = new Date();
  const load = loadavg()[0] ?? 0;
  const created = await createDatabase();
  cleanups.push(() => created.drop());
  const pgDatabase = await openDatabase({ url: created.url, poolSize: 10 });
  cleanups.push(() => pgDatabase.close());
  const [version] = await queryRows<{ v: string }>(
    pgDatabase.db,
    sql`select current_setting('server_version') as v`,
  );
  const pg = await run('postgres', pgDatabase);

  let lite: Report['lite'];
  let pgliteVersion: string | undefined;
  if (settings.pglite) {
    const liteDatabase = await openDatabase({});
    cleanups.push(() => liteDatabase.close());
    const [v] = await queryRows<{ v: string }>(
      liteDatabase.db,
      sql`select current_setting('server_version') as v`,
    );
    pgliteVersion = v?.v;
    lite = await run('pglite', liteDatabase);
  }

  await writeSection(
    'conversations',
    render({ date, load, postgres: version?.v ?? '?', pglite: pgliteVersion, pg, lite }),
    settings.write,
  );
}

await runBenchmark(ADMIN_DATABASE_URL, main, cleanUp);
