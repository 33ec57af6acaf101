import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { ConversationRow } from '../../db/schema/index.js';
import { notFound } from '../../errors.js';
import type { AuditService, RequestContext } from '../audit/service.js';
import type { SelfActor } from '../users/service.js';
import { messagesRepo, type BranchSummary } from './messages-repo.js';
import { conversationsRepo, type ConversationFilter, type ConversationPatch } from './repo.js';

export const conversationNotFound = () => notFound('Conversation');

/**
 * Conversations of their owner (spec 4.3, DECISIONS 3). Every call names the owner, and a
 * conversation of anyone else is answered as not found, so ids of others' conversations leak
 * nothing.
 */
export class ConversationsService {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditService,
  ) {}

  async create(
    userId: string,
    input: { title: string; folderId?: string | null | undefined },
  ): Promise<ConversationRow> {
    return this.db.transaction((tx) =>
      conversationsRepo.insert(tx, {
        id: randomUUID(),
        userId,
        title: input.title,
        folderId: input.folderId ?? null,
      }),
    );
  }

  async page(userId: string, filter: ConversationFilter, page: number, pageSize: number) {
    return conversationsRepo.page(this.db, userId, filter, (page - 1) * pageSize, pageSize);
  }

  async get(userId: string, id: string): Promise<ConversationRow> {
    const row = await conversationsRepo.find(this.db, userId, id);
    if (row === undefined) throw conversationNotFound();
    return row;
  }

  async update(userId: string, id: string, patch: ConversationPatch): Promise<ConversationRow> {
    const row = await conversationsRepo.update(this.db, userId, id, patch);
    if (row === undefined) throw conversationNotFound();
    return row;
  }

  /** Deletes the conversation with every branch and message; audited without its content. */
  async delete(actor: SelfActor, id: string, ctx: RequestContext): Promise<void> {
    await this.db.transaction(async (tx) => {
      if (!(await conversationsRepo.delete(tx, actor.id, id))) throw conversationNotFound();
      await this.audit.append(
        tx,
        {
          action: 'conversation.deleted',
          success: true,
          actorId: actor.id,
          actorEmail: actor.email,
          resourceType: 'conversation',
          resourceId: id,
        },
        ctx,
      );
    });
  }

  async branches(userId: string, id: string): Promise<BranchSummary[]> {
    await this.get(userId, id);
    return messagesRepo.branches(this.db, id);
  }
}
