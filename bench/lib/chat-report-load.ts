import type { TurnResult } from './chat-client.js';
import { stats, type ConcurrentResult, type IdleResult, type Stats } from './chat-parts.js';
import type { VariantResult } from './chat-report.js';
import { table } from './sections.js';

/** Parts 2 and 3 of the chat section: idle sockets, and turns started at once. */

export const ms = (v: number) => (Number.isNaN(v) ? '–' : v < 10 ? v.toFixed(2) : v.toFixed(0));
export const x = (v: number) => v.toFixed(2);
export const yes = (ok: boolean) => (ok ? 'yes' : '**no**');
export const NO_ANSWER = 'I could not find an answer';
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const mibs = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

export function errorsOf(turns: readonly TurnResult[]): string {
  const counts = new Map<string, number>();
  for (const code of turns.flatMap((t) => t.errors)) counts.set(code, (counts.get(code) ?? 0) + 1);
  return counts.size === 0
    ? 'none'
    : [...counts].map(([code, n]) => `${String(n)} ${code}`).join(', ');
}

// ---------------------------------------------------------------------------------------------
// 2. Idle sockets

export function idleSummary(i: IdleResult) {
  const perSocket = (field: 'rss' | 'heapUsed' | 'external') =>
    i.rounds.map((r) => (r.after[field] - r.before[field]) / i.opened);
  const rss = Math.max(...perSocket('rss'));
  const loaded = stats(i.rounds.flatMap((r) => r.loaded.raw));
  const alone = stats([...i.baseline.raw, ...i.rounds.flatMap((r) => r.alone.raw)]);
  return { perSocket, rss, loaded, alone };
}

export function idleSection(i: IdleResult, pings: number, rate: number): string {
  const { perSocket, rss, loaded, alone } = idleSummary(i);
  const cells = (values: number[], f: (v: number) => string) => values.map(f);
  const rounds = i.rounds.map((_, n) => `round ${String(n + 1)}`);
  const rows = [
    [
      '**RSS per socket** (RSS with them − RSS with one) / n',
      ...cells(perSocket('rss'), (v) => `**${kib(v)}**`),
      '≤ 25 KB',
      yes(rss <= 25_000),
    ],
    ['… V8 heap in use per socket', ...cells(perSocket('heapUsed'), kib), '', ''],
    ['… off-heap buffers (`external`) per socket', ...cells(perSocket('external'), kib), '', ''],
    [
      'RSS with one socket → with them all (MiB)',
      ...i.rounds.map((r) => `${mibs(r.before.rss)} → ${mibs(r.after.rss)}`),
      '',
      '',
    ],
    [
      `**ping p99, ${String(i.opened)} sockets open** (ms)`,
      ...i.rounds.map((r) => `**${ms(r.loaded.rtt.p99)}**`),
      '≤ 50 ms',
      yes(loaded.p99 <= 50),
    ],
    ['ping p50, sockets open (ms)', ...i.rounds.map((r) => ms(r.loaded.rtt.p50)), '', ''],
    [
      'ping p99, one socket, after closing them (ms)',
      ...i.rounds.map((r) => ms(r.alone.rtt.p99)),
      '',
      '',
    ],
    ['opening them (s)', ...i.rounds.map((r) => r.openSeconds.toFixed(1)), '', ''],
    ['still open after the pings', ...i.rounds.map((r) => String(r.stillOpen)), '', ''],
  ];
  return `### 2. ${String(i.opened)} idle sockets on one instance

${table(['measure', ...rounds, 'goal', 'met'], rows)}

**RSS per socket: ${kib(rss)}** (${rss.toFixed(0)} bytes; the largest of the rounds), goal ≤ 25 KB:
${rss <= 25_000 ? 'met' : 'missed'}. **Ping round trip p99 with ${String(i.opened)} sockets open:
${ms(loaded.p99)} ms** over the rounds' ${String(loaded.n)} pings (p50 ${ms(loaded.p50)} ms), goal
≤ 50 ms: ${loaded.p99 <= 50 ? 'met' : 'missed'}; with one socket alone (baseline: ${String(alone.n)}
pings, before the first round and after each) p99 ${ms(alone.p99)} ms (p50 ${ms(alone.p50)} ms):
**${x(loaded.p99 / alone.p99)} × the baseline**.

RSS is \`process.memoryUsage().rss\` reported by the service process after three full GCs,
right before each round opens its sockets (one socket open) and 2 s after they have all opened;
before the first round, ${mibs(i.before.rss)} MiB, after a warm-up of 200 sockets opened, pinged
and closed. A round's sockets are closed before the next round starts. One user holds every socket (\`WS_MAX_SOCKETS_PER_USER\` raised), so the
per-user registry and its one pub/sub subscription are shared; each socket's token is checked as it
opens, 100 handshakes at a time from 127.0.0.1. Each ping row: ${String(pings)} pings sent at
${String(rate)} a second (open loop: a ping does not wait for the one before), each on a socket
drawn at random, timed from \`send\` to the \`pong\` carrying its number at the client (one
process holding all ${String(i.opened)} client sockets). Kernel socket buffers are not in RSS.`;
}

// ---------------------------------------------------------------------------------------------
// 3. Turns at once

const STEPS: [string, string][] = [
  ['admit', '`admitSend` (token, send rate)'],
  ['store question', 'storing the question'],
  ['history', 'history read'],
  ['lexical ranking', 'full-text ranking (PostgreSQL)'],
  ['search queue', 'waiting for a search slot (what-if only)'],
  ['dense ranking', 'dense ranking (in-process index)'],
  ['vector freshness wait', '… of which waiting for the index freshness check'],
  ['vector catch-up', '… the check itself (`catchUp`, shared; how many)'],
  ['passages read', 'passages read (PostgreSQL)'],
  ['retrieval', '**`SearchService.search`** (the two above, then the read)'],
  ['store answer', 'storing the answer'],
];

export function concurrentSummary(c: ConcurrentResult) {
  const alone = stats(c.alone.map((t) => t.firstChunkMs));
  const all = c.bursts.flatMap((b) => b.turns);
  const pooled = stats(all.map((t) => t.firstChunkMs));
  const timedOut = all.filter((t) => t.errors.includes('KB_TIMEOUT')).length;
  return { alone, all, pooled, timedOut };
}

function turnTable(c: ConcurrentResult): string {
  const alone = stats(c.alone.map((t) => t.firstChunkMs));
  const n = c.users * c.perUser;
  const row = (label: string, turns: readonly TurnResult[], s: Stats, seconds: string) => [
    label,
    String(turns.length),
    ms(s.p50),
    `**${ms(s.p99)}**`,
    ms(s.max),
    `**${x(s.p99 / alone.p50)}**`,
    ms(stats(turns.map((t) => t.doneMs)).p99),
    String(turns.filter((t) => t.text.startsWith(NO_ANSWER)).length),
    errorsOf(turns),
    seconds,
  ];
  const rows = [
    row('one turn alone (baseline)', c.alone, alone, '–'),
    ...c.bursts.map((b, k) =>
      row(
        `${String(n)} at once, burst ${String(k + 1)}`,
        b.turns,
        stats(b.turns.map((t) => t.firstChunkMs)),
        b.seconds.toFixed(1),
      ),
    ),
  ];
  const head = ['turns', 'n', 'first chunk p50 ms', 'first chunk p99 ms', 'max ms'];
  return table(
    [...head, 'p99 / alone p50', 'done p99 ms', '"could not find"', 'errors', 'burst s'],
    rows,
  );
}

function stepTable(c: ConcurrentResult): string {
  const step = (s: Stats | undefined, count: boolean) =>
    s === undefined ? '–' : `${ms(s.p50)} / ${ms(s.p99)}${count ? ` (${String(s.n)})` : ''}`;
  const seen = (key: string) =>
    c.aloneSteps[key] !== undefined || c.bursts.some((b) => b.steps[key] !== undefined);
  const rows = STEPS.filter(([key]) => seen(key)).map(([key, label]) => [
    label,
    step(c.aloneSteps[key], key === 'vector catch-up'),
    ...c.bursts.map((b) => step(b.steps[key], key === 'vector catch-up')),
  ]);
  return table(['step', 'alone', ...c.bursts.map((_, k) => `burst ${String(k + 1)}`)], rows);
}

const headline = (c: ConcurrentResult) => {
  const { alone, all, pooled, timedOut } = concurrentSummary(c);
  return (
    `first chunk p99 ${ms(pooled.p99)} ms over the ${String(c.bursts.length)} bursts ` +
    `(${String(all.length)} turns), **${x(pooled.p99 / alone.p50)} × one turn alone** (p50 of ` +
    `${String(c.alone.length)} sequential turns on one socket: ${ms(alone.p50)} ms); ` +
    `${String(timedOut)} of the ${String(all.length)} turns hit the retrieval timeout ` +
    `(\`KB_TIMEOUT\`, 5 s) and were answered without passages`
  );
};

export function concurrentSection(c: ConcurrentResult, variants: readonly VariantResult[]): string {
  const n = c.users * c.perUser;
  const variantPart = variants
    .map((v) => {
      const env = Object.entries(v.env)
        .map(([k, value]) => `\`${k}=${value}\``)
        .join(', ');
      return `

#### Variant: ${v.what}

${env}, the rest as above.

${turnTable(v.result)}

${headline(v.result)}. Steps (p50 / p99 ms):

${stepTable(v.result)}`;
    })
    .join('');
  return `### 3. ${String(n)} turns started at once

${turnTable(c)}

With ${String(n)} turns at once: ${headline(c)}.

${String(c.users)} users × ${String(c.perUser)} sockets, each socket with a conversation of its own;
the ${String(n)} \`message_send\` frames are written in one loop and each turn is timed from its own
send; a burst starts once every search of the one before has returned. The turns' steps, timed in
the service (p50 / p99 ms; a step's time includes waiting for a pooled database connection, 10 by
default):

${stepTable(c)}${variantPart}`;
}
