import type { FastifyInstance } from 'fastify';

/**
 * Request bodies are JSON (DECISIONS 1). Other types, text/plain included, get 415 rather than
 * being parsed into a string that then fails validation with a misleading "must be object". An
 * empty body sent with a JSON content type (many clients add the header to every POST) counts as
 * no body: routes that take none accept it, routes that need one answer 422 naming `body`.
 */
export function configureBodies(fastify: FastifyInstance): void {
  fastify.removeContentTypeParser('text/plain');
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') {
      done(null, undefined);
      return;
    }
    void parseJson(request, text, done);
  });
}
