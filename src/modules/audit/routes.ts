import { performance } from 'node:perf_hooks';
import { CsvFileResponse, sendCsvFile } from '../../platform/http/csv-file.js';
import { Envelope, errorResponse, ok } from '../../platform/http/envelope.js';
import { callerOf, contextOf, type App } from '../../platform/http/types.js';
import { AUDIT_EXPORT_COLUMNS } from './export.js';
import {
  AuditPage,
  ExportQuery,
  ListQuery,
  MAX_AUDIT_PAGE,
  Verification,
  parseFilter,
  toAuditDto,
  type FilterQuery,
} from './schema.js';
import type { AuditService } from './service.js';

const tags = ['audit'];
const badQuery = {
  422: errorResponse(
    'A parameter is invalid (the details name it): an action that is not a dotted name or prefix, `since` after `until`, `limit` above the maximum, ...',
  ),
};

/** The filters as the caller gave them, for the export's audit entry. */
const filtersOf = (query: FilterQuery): Record<string, string> => {
  const given: Record<string, string> = {};
  for (const key of ['action', 'user_id', 'since', 'until'] as const) {
    const value = query[key];
    if (value !== undefined) given[key] = value;
  }
  return given;
};

/** Spec 4.4 and DECISIONS 7: the audit log for administrators: list, chain check, CSV export. */
export function auditRoutes(app: App, { audit }: { audit: AuditService }): void {
  const admin = { config: { auth: 'admin' as const } };

  app.get(
    '/api/admin/panel/audit-logs',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'listAuditLogs',
        summary: 'Page of audit entries, newest first (by seq), with filters',
        description: `Filters combine (all must hold). \`limit\` at most ${String(MAX_AUDIT_PAGE)} (above: 422).`,
        querystring: ListQuery,
        response: { 200: Envelope(AuditPage), ...badQuery },
      },
    },
    async (request) => {
      const { page, limit } = request.query;
      const filter = parseFilter(request.query);
      const { rows, total } = await audit.page(filter, page, limit);
      return ok(request, { items: rows.map(toAuditDto), total, page, limit });
    },
  );

  app.get(
    '/api/admin/panel/audit-logs/verify',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'verifyAuditLogChain',
        summary: 'Check the whole hash chain; names the first broken entry',
        description:
          'Walks every entry in seq order: no gap in seq, each `prev_hash` equal to the previous entry’s `hash`, each `hash` recomputed from the entry’s fields. Entries removed by the retention purge are passed over through their tombstones (seq, links and hash, no personal data); each signed checkpoint the purge wrote is checked where the walk reaches its head: its signature, the chain’s hash there, and the tombstones it vouches for. `valid: false` is still a 200.',
        response: { 200: Envelope(Verification) },
      },
    },
    async (request) => {
      const started = performance.now();
      const result = await audit.verify();
      return ok(request, { ...result, duration_ms: Math.round(performance.now() - started) });
    },
  );

  app.get(
    '/api/admin/panel/audit-logs/export',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'exportAuditLogs',
        summary: 'Every matching audit entry as a CSV file, oldest first (streamed)',
        description: `The list's filters, no paging. The export is audited (\`audit.exported\`, with the filters) before the file is read; the file holds the matching entries up to and including that entry. UTF-8 CSV (RFC 4180, CRLF) with the header row \`${AUDIT_EXPORT_COLUMNS.join(',')}\`; \`details\` is its JSON text. A text cell starting with \`=\`, \`+\`, \`-\`, \`@\`, tab or carriage return is prefixed with a single quote so that spreadsheets do not run it as a formula.`,
        querystring: ExportQuery,
        response: {
          200: CsvFileResponse,
          ...badQuery,
        },
      },
    },
    async (request, reply) => {
      const filter = parseFilter(request.query);
      const { id, email } = callerOf(request);
      const { filename, stream } = await audit.exportCsv(
        filter,
        filtersOf(request.query),
        { id, email },
        contextOf(request),
      );
      return sendCsvFile(reply, filename, stream);
    },
  );
}
