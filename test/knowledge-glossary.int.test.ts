import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ExtractiveProvider } from '../src/providers/llm/extractive.js';
import type { LlmEvent, LlmProvider, LlmRequest } from '../src/providers/llm/types.js';
import { createSecondInstance, createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, type TestUser } from './helpers/factories.js';
import { uploadNew, waitForJob } from './helpers/knowledge.js';
import { ChatClient, listenLocal, newConversation } from './helpers/ws-client.js';

/**
 * The knowledge base's glossary (glossary.ts): the abbreviations and pairs of names its documents
 * define, stored by the indexing job, given to the model with the question that writes them and
 * added to the searches, changed with the documents at once on every instance.
 */

/** The offline model, remembering the requests it was given. */
class RecordingModel implements LlmProvider {
  readonly name = 'extractive';
  readonly model = 'extractive-1';
  readonly requests: LlmRequest[] = [];
  private readonly inner = new ExtractiveProvider();

  stream(request: LlmRequest, options: { signal: AbortSignal }): AsyncIterable<LlmEvent> {
    this.requests.push(request);
    return this.inner.stream(request, options);
  }
}

const BASICS = [
  'Latent TB infection (LTBI) means the germs live in the body without making a person sick.',
  'A person with LTBI cannot spread the germs to others.',
  'Lisinopril (Zestril) is taken once a day.',
].join(' ');

const TREATMENT = 'Treat latent TB infection with rifampin daily for four months.';
const DOSING = 'Start lisinopril at 10 mg once daily for high blood pressure.';

describe('the glossary of the knowledge base', () => {
  let a: TestApp;
  let b: TestApp;
  let admin: TestUser;
  let user: TestUser;
  const model = new RecordingModel();
  let dosingId = '';

  const glossaryFor = (t: TestApp, question: string) => t.deps.knowledge.glossary.for(question);

  beforeAll(async () => {
    a = await createTestApp({ llm: model });
    b = await createSecondInstance(a, { env: { KB_WORKER_ENABLED: 'false' } });
    admin = await createUser(a.app, a.deps, { admin: true });
    user = await createUser(a.app, a.deps);
    const basics = await uploadNew(a.app, admin.access, {
      file: BASICS,
      title: 'TB basics',
      docKey: 'tb-basics',
    });
    const treatment = await uploadNew(a.app, admin.access, {
      file: TREATMENT,
      title: 'TB treatment',
    });
    const dosing = await uploadNew(a.app, admin.access, { file: DOSING, title: 'Lisinopril' });
    dosingId = dosing.id;
    for (const job of [basics.job, treatment.job, dosing.job]) {
      await waitForJob(a.app, admin.access, job?.id ?? '', 'completed');
    }
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('holds what the documents define, for the questions that write it', async () => {
    expect(await glossaryFor(a, 'How long is rifampin given for LTBI?')).toEqual([
      { term: 'LTBI', means: 'Latent TB infection', kind: 'abbreviation' },
    ]);
    // By the long form too, in any case, and a pair of names by either name.
    expect(await glossaryFor(a, 'Is LATENT TB INFECTION contagious?')).toHaveLength(1);
    expect(await glossaryFor(a, 'Zestril dose?')).toEqual([
      { term: 'Lisinopril', means: 'Zestril', kind: 'name' },
    ]);
    expect(await glossaryFor(a, 'lisinopril in pregnancy')).toHaveLength(1);
    expect(await glossaryFor(a, 'How is TB spread? Is latent TB contagious?')).toEqual([]);
  });

  it('is given to the model with the question over the chat socket', async () => {
    const port = await listenLocal(a.app);
    const client = await ChatClient.connect(port, user.access, '/ws');
    try {
      const conversationId = await newConversation(a.app, user.access);
      const from = client.frames.length;
      const reads = vi.spyOn(a.deps.knowledge.glossary, 'for');
      client.send({
        type: 'message_send',
        conversation_id: conversationId,
        content: 'How long is rifampin given for LTBI?',
      });
      const done = await client.next((f) => f.type === 'message_done', 10_000, from);
      expect(model.requests.at(-1)?.glossary).toEqual([
        { term: 'LTBI', means: 'Latent TB infection', kind: 'abbreviation' },
      ]);
      expect(JSON.stringify(done)).toContain('four months');
      // Read once for the turn: its search waits for the same entries.
      expect(reads).toHaveBeenCalledTimes(1);
      reads.mockRestore();
    } finally {
      client.close();
      await client.closed;
    }
  });

  it('searches by a brand the documents that write only its generic name', async () => {
    // "Zestril" is written in TB basics only; the lisinopril document is found by its terms too.
    const hits = await a.deps.knowledge.search.search('Zestril', { limit: 5 });
    const dosing = hits.find((h) => h.documentId === dosingId);
    expect(dosing?.lexicalRank).not.toBeNull();
    expect(dosing?.lexicalRank).toBeDefined();
  });

  it('changes with the documents, at once on the other instance too', async () => {
    const question = 'How long is rifampin given for LTBI?';
    expect(await glossaryFor(b, question)).toHaveLength(1);
    // A new version defines something else: its glossary replaces the old one's.
    const next = await uploadNew(a.app, admin.access, {
      file: 'Interferon-gamma release assay (IGRA) is a blood test for TB germs.',
      title: 'TB basics',
      docKey: 'tb-basics',
    });
    await waitForJob(a.app, admin.access, next.job?.id ?? '', 'completed');
    expect(await glossaryFor(a, question)).toEqual([]);
    expect(await glossaryFor(a, 'When is an IGRA used?')).toEqual([
      { term: 'IGRA', means: 'Interferon-gamma release assay', kind: 'abbreviation' },
    ]);
    expect(await glossaryFor(b, question)).toEqual([]);
    // Deleted: gone.
    const deleted = await a.app.inject({
      method: 'DELETE',
      url: `/api/admin/kb/documents/${next.id}`,
      headers: bearer(admin.access),
    });
    expect(deleted.statusCode).toBe(200);
    expect(await glossaryFor(a, 'When is an IGRA used?')).toEqual([]);
    expect(await glossaryFor(b, 'When is an IGRA used?')).toEqual([]);
  });
});
