import { fork, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FhirTestServer, type Fault } from '../../test/helpers/fhir-server.js';

/**
 * The FHIR test server (medplum's router over its in-memory repository) in a process of its own,
 * as a real EHR would be: its request handling does not share the event loop with the client being
 * measured. Beside it, in the same process, a replay server: the first request for a URL is passed
 * to the FHIR server and its answer kept; later ones get the kept answer (status, FHIR headers,
 * body) at once. The in-memory repository takes hundreds of milliseconds per Observation search,
 * which would hide any overhead of the client; the replay answers in well under a millisecond,
 * the strictest upstream to compare against. The parent drives both over IPC: 503 faults on and
 * off, and the URLs the replay server was asked for (to send the service's exact queries directly).
 */

type Command =
  { op: 'inject'; fault: Fault } | { op: 'clear' } | { op: 'requests' } | { op: 'forget' };

interface Ready {
  ready: true;
  baseUrl: string;
  replayUrl: string;
  patientIds: string[];
}

interface Reply {
  id: number;
  urls?: string[];
}

/** The parent's handle on the peer. */
export interface FhirPeer {
  /** The medplum FHIR server. */
  baseUrl: string;
  /** The replay server in front of it (same paths). */
  replayUrl: string;
  patientIds: string[];
  pid: number;
  inject(fault: Fault): Promise<void>;
  clearFaults(): Promise<void>;
  /** Paths and queries of the requests the replay server received since the last `forget`. */
  requests(): Promise<string[]>;
  forget(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the peer (this file, run by tsx in a child process) and waits until it listens. */
export async function startFhirPeer(bearer: string, patients: number): Promise<FhirPeer> {
  const child = fork(import.meta.filename, ['--peer'], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, FHIR_PEER_BEARER: bearer, FHIR_PEER_PATIENTS: String(patients) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once('message', (m) => {
      resolve(m as Ready);
    });
    child.once('exit', (code) => {
      reject(new Error(`FHIR peer exited (${String(code)}) at start-up`));
    });
  });
  return handle(child, ready);
}

function handle(child: ChildProcess, ready: Ready): FhirPeer {
  let next = 0;
  const waiting = new Map<number, (reply: Reply) => void>();
  child.on('message', (m) => {
    const reply = m as Reply;
    waiting.get(reply.id)?.(reply);
    waiting.delete(reply.id);
  });
  const ask = (command: Command) =>
    new Promise<Reply>((resolve) => {
      next += 1;
      waiting.set(next, resolve);
      child.send({ ...command, id: next });
    });
  return {
    baseUrl: ready.baseUrl,
    replayUrl: ready.replayUrl,
    patientIds: ready.patientIds,
    pid: child.pid ?? 0,
    inject: async (fault) => {
      await ask({ op: 'inject', fault });
    },
    clearFaults: async () => {
      await ask({ op: 'clear' });
    },
    requests: async () => (await ask({ op: 'requests' })).urls ?? [],
    forget: async () => {
      await ask({ op: 'forget' });
    },
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

interface Kept {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const KEPT_HEADERS = ['content-type', 'etag', 'last-modified'];

/** The replay server: answers kept per URL, filled through the FHIR server on a miss. */
class Replay {
  readonly requests: string[] = [];
  /** A 503 for every request while set (the `status` faults the parent injects). */
  failing: number | undefined;
  readonly #kept = new Map<string, Kept>();
  #origin = '';
  readonly #server = createServer((req, res) => {
    this.#handle(req, res).catch(() => {
      res.writeHead(502).end();
    });
  });

  constructor(
    private readonly upstream: string,
    private readonly bearer: string,
  ) {}

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.#origin = `http://127.0.0.1:${String((this.#server.address() as AddressInfo).port)}`;
    return `${this.#origin}/fhir/R4`;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => {
      this.#server.close(() => {
        resolve();
      });
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    req.resume(); // GETs only: nothing to read
    const url = req.url ?? '/';
    this.requests.push(url);
    if (req.headers.authorization !== `Bearer ${this.bearer}`) {
      res.writeHead(401).end();
      return;
    }
    if (this.failing !== undefined) {
      res.writeHead(this.failing, { 'content-type': 'application/fhir+json' });
      res.end('{"resourceType":"OperationOutcome","issue":[]}');
      return;
    }
    let kept = this.#kept.get(url);
    if (kept === undefined) {
      kept = await this.#fetch(url);
      if (kept.status === 200) this.#kept.set(url, kept);
    }
    res.writeHead(kept.status, kept.headers);
    res.end(kept.body);
  }

  async #fetch(url: string): Promise<Kept> {
    const response = await fetch(new URL(url, this.upstream), {
      headers: { accept: 'application/fhir+json', authorization: `Bearer ${this.bearer}` },
    });
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = response.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    // Bundle links name the FHIR server: they must name this one, as the client checks.
    const body = (await response.text()).replaceAll(new URL(this.upstream).origin, this.#origin);
    return { status: response.status, headers, body };
  }
}

/** The child's side: serve, and answer the parent's commands. */
async function peer(): Promise<void> {
  const bearer = process.env.FHIR_PEER_BEARER ?? '';
  const server = await FhirTestServer.start({
    auth: { bearer },
    seed: { patients: Number(process.env.FHIR_PEER_PATIENTS ?? '3'), seed: 13 },
  });
  const replay = new Replay(server.baseUrl, bearer);
  const replayUrl = await replay.listen();
  const stop = () => {
    void Promise.all([server.stop(), replay.close()]).then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('disconnect', stop);
  process.on('message', (m) => {
    const command = m as Command & { id: number };
    const reply: Reply = { id: command.id };
    if (command.op === 'inject') {
      server.inject(command.fault);
      if (command.fault.kind === 'status') replay.failing = command.fault.status;
    } else if (command.op === 'clear') {
      server.clearFaults();
      replay.failing = undefined;
    } else if (command.op === 'forget') {
      server.requests.length = 0;
      replay.requests.length = 0;
    } else reply.urls = [...replay.requests];
    process.send?.(reply);
  });
  const ready: Ready = {
    ready: true,
    baseUrl: server.baseUrl,
    replayUrl,
    patientIds: server.seeded.patientIds,
  };
  process.send?.(ready);
}

if (process.argv.includes('--peer')) await peer();
