import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, errorOf } from './helpers/factories.js';
import {
  createKbApp,
  filesDir,
  filesUnder,
  search,
  upload,
  uploadNew,
  waitIndexed,
  type KbApp,
} from './helpers/knowledge.js';
import { pdfFromPages } from './helpers/pdf.js';
import { startWebDav, type TestWebDav } from './helpers/webdav.js';

const ROOT = 'medical-assistant';

describe.each(['postgres', 'pglite'] as const)(
  'knowledge base on a WebDAV store (%s)',
  (backend) => {
    let dav: TestWebDav;
    let kb: KbApp;
    let token: string;

    beforeAll(async () => {
      dav = await startWebDav();
      kb = await createKbApp({
        backend,
        env: { NEXTCLOUD_URL: dav.url, NEXTCLOUD_USER: dav.user, NEXTCLOUD_PASSWORD: dav.password },
      });
      token = kb.admin.access;
    });
    afterAll(async () => {
      await kb.close();
      await dav.close();
    });

    it('stores the original on the server, indexes it from there, and deletes it with the document', async () => {
      expect(kb.deps.files.kind).toBe('webdav');
      const pdf = await pdfFromPages([
        [
          { heading: 'Lithium Monitoring' },
          { paragraph: 'Check lithium levels every three months.' },
        ],
        [
          { heading: 'Lithium Toxicity' },
          { paragraph: 'Coarse tremor and ataxia suggest toxicity.' },
        ],
      ]);
      const doc = await uploadNew(kb.app, token, {
        file: pdf,
        filename: 'li.pdf',
        title: 'Lithium',
      });
      const key = `${ROOT}/kb/${doc.id}/original`;
      expect(await filesUnder(dav.dir)).toContain(key);
      expect((await readFile(path.join(dav.dir, key))).equals(pdf)).toBe(true);
      // Nothing went to the local directory.
      expect(await filesUnder(filesDir(kb.deps))).toEqual([]);

      const indexed = await waitIndexed(kb.app, token, doc);
      expect(indexed.page_count).toBe(2);
      const [hit] = await search(kb.app, token, 'coarse tremor ataxia');
      expect(hit).toMatchObject({ document_id: doc.id, page: 2, heading: 'Lithium Toxicity' });

      const del = await kb.app.inject({
        method: 'DELETE',
        url: `/api/admin/kb/documents/${doc.id}`,
        headers: bearer(token),
      });
      expect(del.statusCode, del.body).toBe(200);
      expect(await filesUnder(dav.dir)).not.toContain(key);
    });

    it('a rejected upload leaves nothing on the server', async () => {
      const before = await filesUnder(dav.dir);
      const res = await upload(kb.app, token, { file: randomBytes(256 * 1024), filename: 'x.pdf' });
      expect(errorOf(res, 415).code).toBe('UNSUPPORTED_MEDIA_TYPE');
      const empty = await upload(kb.app, token, { file: Buffer.alloc(0) });
      errorOf(empty, 422);
      expect(await filesUnder(dav.dir)).toEqual(before);
    });
  },
);
