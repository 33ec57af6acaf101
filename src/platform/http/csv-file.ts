import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';

/** The 200 answer of a route that streams a CSV file (for its schema and the OpenAPI document). */
export const CsvFileResponse = {
  description: 'The CSV file (`text/csv; charset=utf-8`, as an attachment)',
  // Streamed: the handler sends a Readable of the file's text.
  content: { 'text/csv': { schema: Type.Unsafe<Readable>({ type: 'string' }) } },
};

/** Sends a CSV stream as a download named `filename`, never cached on the way. */
export function sendCsvFile(reply: FastifyReply, filename: string, stream: Readable) {
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}"`)
    .header('cache-control', 'no-store')
    .send(stream);
}
