import { randomBytes } from 'node:crypto';
import {
  BenchSocket,
  jobCount,
  newConversation,
  newUser,
  uploadText,
} from '../../bench/lib/chat-client.js';
import { backends, startService } from '../../test/helpers/service.js';
import type { RealAnswer, RealDocument } from './real-dev.js';

/**
 * The whole path a user of the service takes, for eval/answers.ts --corpus: `src/main.ts` started
 * with the embedded defaults (as `make run` starts it; a fresh data directory), every document
 * uploaded through the admin route with its key as `doc_key`, the indexing jobs awaited, then
 * each question asked by a signed-up user over the chat socket, in a conversation of its own, and
 * the stored answer of `message_done` kept. The send rate per user is raised (a question a
 * minute-fraction, not 30 a minute); nothing else differs from `make run`.
 */
export interface AskingService {
  ask(question: string): Promise<RealAnswer>;
  close(): Promise<void>;
}

export async function serviceWith(documents: readonly RealDocument[]): Promise<AskingService> {
  const data = await backends('embedded');
  // The one setting changed from the defaults: the evaluation asks faster than a person types.
  const env = { ...data.env, CHAT_SENDS_PER_MINUTE: '100000' };
  const service = await startService(env).catch(async (error: unknown) => {
    await data.dispose();
    throw error;
  });
  const close = async () => {
    service.process.child.kill('SIGTERM');
    await service.process.exited;
    await data.dispose();
  };
  try {
    for (const doc of documents) {
      await uploadText(service.base, service.token, doc.title, doc.text, doc.key);
    }
    await indexed(service, documents.length);
    const password = `eval ${randomBytes(9).toString('hex')} pass`;
    const user = await newUser(
      service.base,
      `eval.${randomBytes(4).toString('hex')}@example.org`,
      password,
    );
    const port = Number(new URL(service.base).port);
    const socket = await BenchSocket.open(port, user);
    return {
      async ask(question) {
        const conversation = await newConversation(service.base, user);
        const turn = await socket.turn(conversation, question);
        if (!turn.completed || turn.message === undefined) {
          throw new Error(`the turn ended without an answer: ${turn.errors.join(', ')}`);
        }
        const { content, citations } = turn.message as {
          content: string;
          citations: { index: number; docKey: string }[];
        };
        const cited = [...citations].sort((a, b) => a.index - b.index).map((c) => c.docKey);
        return { content, cited };
      },
      async close() {
        socket.close();
        await close();
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}

async function indexed(service: { base: string; token: string }, count: number) {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const failed = await jobCount(service.base, service.token, 'failed');
    if (failed > 0) throw new Error(`${String(failed)} indexing jobs failed`);
    if ((await jobCount(service.base, service.token, 'completed')) >= count) return;
    if (Date.now() > deadline) throw new Error('the documents were not indexed in 5 minutes');
    await new Promise((r) => setTimeout(r, 200));
  }
}
