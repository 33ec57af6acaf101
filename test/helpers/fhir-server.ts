import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FhirRouter, MemoryRepository } from '@medplum/fhir-router';
import type { OperationOutcome, Resource } from '@medplum/fhirtypes';
import type { JWK } from 'jose';
import {
  capabilityStatement,
  finishSearchset,
  malformedBody,
  pageQuery,
  subset,
} from './fhir-bundle.js';
import { generateSeed } from './fhir-seed.js';
import { SmartAuthority } from './fhir-smart.js';
import { medplumCore } from './medplum.js';

export type Fault =
  | { kind: 'status'; status: number; times?: number } // answer this HTTP status with an OperationOutcome
  | { kind: 'delay'; ms: number; times?: number } // answer correctly after ms
  | { kind: 'hang'; times?: number } // never answer (until stop)
  /** 200 with a body that is not a valid resource: truncated JSON (default), or parseable JSON
   * whose resource / Bundle entries lack a resourceType. */
  | { kind: 'malformed'; times?: number; shape?: 'truncated' | 'not-a-resource' };

export interface FhirServerOptions {
  /** Require `Authorization: Bearer <token>` (a static token), or SMART backend services. */
  auth?:
    | { bearer: string }
    | {
        smart: {
          clientId: string;
          publicJwk: JWK /* RS384 public key, e.g. from jose exportJWK */;
          tokenTtlSeconds?: number;
        };
      };
  seed?: { patients?: number /* default 3 */; seed?: number /* prng seed */ };
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: Record<string, string | undefined>;
  body?: string;
}

const FHIR_PREFIX = '/fhir/R4';
const TOKEN_PATH = '/auth/token';
const FHIR_JSON = 'application/fhir+json; charset=utf-8';
const TYPES = [
  'Patient',
  'Observation',
  'Condition',
  'MedicationRequest',
  'AllergyIntolerance',
  'Encounter',
];

interface Medplum {
  router: typeof FhirRouter;
  repo: typeof MemoryRepository;
  getStatus: (outcome: OperationOutcome) => number;
}
let medplum: Promise<Medplum> | undefined;

function loadMedplum(): Promise<Medplum> {
  medplum ??= (async () => {
    const { core } = await medplumCore();
    const { FhirRouter, MemoryRepository } = await import('@medplum/fhir-router');
    return { router: FhirRouter, repo: MemoryRepository, getStatus: core.getStatus };
  })();
  return medplum;
}

const outcome = (code: string, text: string): OperationOutcome => ({
  resourceType: 'OperationOutcome',
  issue: [{ severity: 'error', code: code as 'processing', details: { text } }],
});

/** A FHIR R4 server on 127.0.0.1 (medplum's FhirRouter over an in-memory repository), seeded. */
export class FhirTestServer {
  readonly requests: RecordedRequest[] = [];
  /** http://127.0.0.1:<port>/fhir/R4 */
  baseUrl = '';
  /** http://127.0.0.1:<port>/auth/token (SMART backend services token endpoint) */
  tokenUrl = '';
  /** Ids of the seeded patients. */
  seeded: { patientIds: string[] } = { patientIds: [] };
  readonly #faults: { fault: Fault; left: number | undefined }[] = [];
  readonly #server: Server;
  readonly #medplum: Medplum;
  readonly #router: FhirRouter;
  readonly #repo: MemoryRepository;
  readonly #options: FhirServerOptions;
  #smart: SmartAuthority | undefined;

  private constructor(m: Medplum, options: FhirServerOptions) {
    this.#medplum = m;
    this.#router = new m.router();
    this.#repo = new m.repo();
    this.#options = options;
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch(() => {
        if (!res.headersSent) this.#send(res, 500, outcome('exception', 'test server error'));
      });
    });
  }

  static async start(options: FhirServerOptions = {}): Promise<FhirTestServer> {
    const server = new FhirTestServer(await loadMedplum(), options);
    await server.#listen();
    return server;
  }

  get tokensIssued(): number {
    return this.#smart?.issued ?? 0;
  }

  inject(fault: Fault): void {
    this.#faults.push({ fault, left: fault.times });
  }

  clearFaults(): void {
    this.#faults.length = 0;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  async #listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    this.baseUrl = origin + FHIR_PREFIX;
    this.tokenUrl = origin + TOKEN_PATH;
    const auth = this.#options.auth;
    if (auth !== undefined && 'smart' in auth)
      this.#smart = new SmartAuthority(auth.smart, this.tokenUrl);
    const today = new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00Z');
    const seed = generateSeed(
      this.#options.seed?.patients ?? 3,
      this.#options.seed?.seed ?? 1,
      today,
    );
    await this.#repo.withSeeding(async () => {
      for (const resource of seed.resources) await this.#repo.createResource(resource);
    });
    this.seeded = { patientIds: seed.patientIds };
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? Buffer.concat(chunks).toString('utf8') : undefined;
    const headers: Record<string, string | undefined> = {};
    for (const [k, v] of Object.entries(req.headers))
      headers[k] = Array.isArray(v) ? v.join(', ') : v;
    this.requests.push({
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const url = new URL(req.url ?? '/', this.baseUrl);
    if (url.pathname === TOKEN_PATH && req.method === 'POST' && this.#smart !== undefined) {
      await this.#token(req, res, body ?? '');
      return;
    }
    if (url.pathname !== FHIR_PREFIX && !url.pathname.startsWith(FHIR_PREFIX + '/')) {
      this.#send(res, 404, outcome('not-found', 'no such endpoint'));
      return;
    }
    const fault = this.#takeFault();
    if (fault?.kind === 'hang') return;
    if (fault?.kind === 'status') {
      this.#send(res, fault.status, outcome('transient', `injected status ${fault.status}`));
      return;
    }
    if (fault?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.ms));
    const rel = url.pathname.slice(FHIR_PREFIX.length).replace(/^\/+|\/+$/g, '');
    if (rel !== 'metadata' && !this.#authorized(req.headers.authorization)) {
      res.setHeader('WWW-Authenticate', 'Bearer error="invalid_token"');
      this.#send(res, 401, outcome('login', 'a valid bearer token is required'));
      return;
    }
    const [status, payload] = await this.#fhir(req, rel, url.searchParams, body);
    if (fault?.kind === 'malformed') {
      res.writeHead(200, { 'Content-Type': FHIR_JSON });
      res.end(malformedBody(payload, fault.shape ?? 'truncated'));
    } else this.#send(res, status, payload);
  }

  #takeFault(): Fault | undefined {
    const head = this.#faults[0];
    if (head === undefined) return undefined;
    if (head.left !== undefined) {
      head.left -= 1;
      if (head.left <= 0) this.#faults.shift();
    }
    return head.fault;
  }

  #authorized(header: string | undefined): boolean {
    const auth = this.#options.auth;
    if (auth === undefined) return true;
    const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
    if (match?.[1] === undefined) return false;
    return 'bearer' in auth ? match[1] === auth.bearer : (this.#smart?.accepts(match[1]) ?? false);
  }

  async #token(req: IncomingMessage, res: ServerResponse, body: string): Promise<void> {
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim();
    const reply =
      type === 'application/x-www-form-urlencoded' && this.#smart !== undefined
        ? await this.#smart.exchange(new URLSearchParams(body))
        : {
            status: 400,
            body: { error: 'invalid_request', error_description: 'form-urlencoded body required' },
          };
    res.writeHead(reply.status, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
    });
    res.end(JSON.stringify(reply.body));
  }

  /** Routes one FHIR interaction through medplum and finishes what the router leaves out. */
  async #fhir(
    req: IncomingMessage,
    rel: string,
    query: URLSearchParams,
    body: string | undefined,
  ): Promise<[number, Resource]> {
    const method = (req.method ?? 'GET').toUpperCase();
    if (rel === 'metadata' && method === 'GET')
      return [200, capabilityStatement(this.#smart && this.tokenUrl, TYPES)];
    let parsed: unknown;
    if (method === 'POST' || method === 'PUT') {
      try {
        parsed = JSON.parse(body ?? '');
      } catch {
        return [400, outcome('structure', 'request body is not JSON')];
      }
    }
    const isSearch = method === 'GET' && /^[A-Z][A-Za-z]+$/.test(rel);
    const q = isSearch ? pageQuery(query) : query;
    const qs = q.toString();
    const [result, resource] = await this.#router.handleRequest(
      {
        method: method as 'GET',
        url: qs === '' ? rel : `${rel}?${qs}`,
        pathname: '',
        params: {},
        query: {},
        body: parsed,
        headers: req.headers,
      },
      this.#repo,
    );
    const status = this.#medplum.getStatus(result);
    if (resource === undefined || status >= 400) return [status, result];
    if (isSearch && resource.resourceType === 'Bundle')
      finishSearchset(resource, this.baseUrl, rel, q);
    else if (method === 'GET' && query.has('_elements'))
      return [status, subset(resource, query.get('_elements') ?? '')];
    return [status, resource];
  }

  #send(res: ServerResponse, status: number, resource: Resource): void {
    const headers: Record<string, string> = { 'Content-Type': FHIR_JSON };
    if (resource.resourceType !== 'OperationOutcome' && resource.id !== undefined) {
      const version = resource.meta?.versionId;
      if (version !== undefined) headers.ETag = `W/"${version}"`;
      if (resource.meta?.lastUpdated !== undefined)
        headers['Last-Modified'] = new Date(resource.meta.lastUpdated).toUTCString();
      if (status === 201) {
        headers.Location = `${this.baseUrl}/${resource.resourceType}/${resource.id}${version === undefined ? '' : `/_history/${version}`}`;
      }
    }
    res.writeHead(status, headers);
    res.end(JSON.stringify(resource));
  }
}
