import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import webdavServer from 'webdav-server';

const { v2: webdav } = webdavServer;

export interface TestWebDav {
  /** Base URL of the server, ending in `/`. */
  url: string;
  user: string;
  password: string;
  /** The directory the server stores into, to look at what it really holds. */
  dir: string;
  close(): Promise<void>;
}

/**
 * A real WebDAV server (webdav-server v2) on a free port of 127.0.0.1, with HTTP Basic
 * authentication for one user who may do anything. Files go to a temporary directory on disk, so
 * the server does not hold uploads in memory either and tests can see what it stored.
 */
export async function startWebDav(): Promise<TestWebDav> {
  const dir = await mkdtemp(path.join(tmpdir(), 'mas-webdav-'));
  const user = 'clinic';
  const password = 'correct horse battery staple';
  const users = new webdav.SimpleUserManager();
  const account = users.addUser(user, password, false);
  const privileges = new webdav.SimplePathPrivilegeManager();
  privileges.setRights(account, '/', ['all']);
  const options = Object.assign(new webdav.WebDAVServerOptions(), {
    hostname: '127.0.0.1',
    port: 0, // startAsync(0) falls back to this option, and 0 asks the OS for a free port
    requireAuthentification: true,
    httpAuthentication: new webdav.HTTPBasicAuthentication(users, 'test'),
    privilegeManager: privileges,
    rootFileSystem: new webdav.PhysicalFileSystem(dir),
  });
  const server = new webdav.WebDAVServer(options);
  const http = await server.startAsync(0);
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    user,
    password,
    dir,
    close: async () => {
      // Keep-alive connections from fetch would otherwise hold close() open.
      http.closeAllConnections();
      await server.stopAsync();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
