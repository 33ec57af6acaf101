import type {
  AllergyIntolerance,
  Condition,
  DocumentReference,
  Encounter,
  MedicationRequest,
  Observation,
  Patient,
  Resource,
} from '@medplum/fhirtypes';
import { tokenSource } from './auth.js';
import { buildObservation, buildSummaryNote, idempotencyIdentifier, ifNoneExist } from './build.js';
import { malformed } from './errors.js';
import { FhirHttp } from './http.js';
import type {
  CallOptions,
  EhrProvider,
  FhirEhrOptions,
  ObservationInput,
  ObservationQuery,
  SummaryNoteInput,
  WriteResult,
} from './types.js';
import {
  checkLimit,
  checkPatient,
  ELEMENTS,
  MAX_LIMIT,
  observationParams,
  type SearchParams,
  type SearchType,
} from './query.js';
import { checkId, checkResource, checkSearchBundle } from './validate.js';

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_PAGE_SIZE = 50;
/** By default a search never follows more pages than this, whatever the server links to. */
const DEFAULT_MAX_PAGES = 20;
/** Lists without a caller-given limit (conditions, medications, allergies) stop here. */
const LIST_LIMIT = 200;
const DEFAULT_IDENTIFIER_SYSTEM = 'urn:medical-assistant:idempotency-key';

/** `EhrProvider` over a FHIR R4 server. */
export class FhirEhrProvider implements EhrProvider {
  readonly #base: URL;
  readonly #http: FhirHttp;
  readonly #pageSize: number;
  readonly #maxPages: number;
  readonly #now: () => number;
  readonly #identifierSystem: string;

  constructor(options: FhirEhrOptions) {
    this.#base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
    const fetchImpl = options.fetch ?? globalThis.fetch;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#now = options.now ?? Date.now;
    this.#pageSize = Math.max(1, Math.min(options.pageSize ?? DEFAULT_PAGE_SIZE, MAX_LIMIT));
    this.#maxPages = Math.max(1, options.maxPages ?? DEFAULT_MAX_PAGES);
    this.#identifierSystem = options.identifierSystem ?? DEFAULT_IDENTIFIER_SYSTEM;
    const tokens = tokenSource(options.auth, { fetch: fetchImpl, now: this.#now, timeoutMs });
    this.#http = new FhirHttp({ tokens, fetch: fetchImpl, timeoutMs });
  }

  async getPatient(id: string, options: CallOptions = {}): Promise<Patient> {
    const url = this.#url(`Patient/${checkId(id)}`, { _elements: ELEMENTS.Patient });
    const answer = await this.#http.send({
      method: 'GET',
      url,
      what: 'read Patient',
      idempotent: true,
      signal: options.signal,
    });
    const patient = checkResource<Patient>(answer.body, 'Patient');
    if (patient.id !== id) throw malformed('read Patient answered another patient');
    return patient;
  }

  async searchObservations(
    query: ObservationQuery,
    options: CallOptions = {},
  ): Promise<Observation[]> {
    const patientId = checkId(query.patientId);
    return this.#search<Observation>(
      'Observation',
      patientId,
      observationParams(query),
      checkLimit(query.limit),
      options,
    );
  }

  async conditions(patientId: string, options: CallOptions = {}): Promise<Condition[]> {
    return this.#search<Condition>(
      'Condition',
      checkId(patientId),
      { _sort: '-recorded-date' },
      LIST_LIMIT,
      options,
    );
  }

  async medicationRequests(
    patientId: string,
    filter: { activeOnly: boolean },
    options: CallOptions = {},
  ): Promise<MedicationRequest[]> {
    const params: Record<string, string> = { _sort: '-authoredon' };
    if (filter.activeOnly) params.status = 'active';
    return this.#search<MedicationRequest>(
      'MedicationRequest',
      checkId(patientId),
      params,
      LIST_LIMIT,
      options,
    );
  }

  async allergies(patientId: string, options: CallOptions = {}): Promise<AllergyIntolerance[]> {
    return this.#search<AllergyIntolerance>(
      'AllergyIntolerance',
      checkId(patientId),
      {},
      LIST_LIMIT,
      options,
    );
  }

  async encounters(
    patientId: string,
    limit: number,
    options: CallOptions = {},
  ): Promise<Encounter[]> {
    return this.#search<Encounter>(
      'Encounter',
      checkId(patientId),
      { _sort: '-date' },
      checkLimit(limit),
      options,
    );
  }

  async createObservation(
    input: ObservationInput,
    options: CallOptions = {},
  ): Promise<WriteResult> {
    const identifier = idempotencyIdentifier(
      this.#identifierSystem,
      'Observation',
      input.idempotencyKey,
    );
    return this.#create(buildObservation(input, identifier, this.#now()), identifier, options);
  }

  async createDocumentReference(
    note: SummaryNoteInput,
    options: CallOptions = {},
  ): Promise<WriteResult> {
    const identifier = idempotencyIdentifier(
      this.#identifierSystem,
      'DocumentReference',
      note.idempotencyKey,
    );
    return this.#create(buildSummaryNote(note, identifier, this.#now()), identifier, options);
  }

  async probe(options: CallOptions = {}): Promise<void> {
    const answer = await this.#http.send({
      method: 'GET',
      url: this.#url('metadata', {}),
      what: 'read metadata',
      idempotent: true,
      signal: options.signal,
    });
    const body = answer.body as { resourceType?: unknown } | undefined;
    if (body?.resourceType !== 'CapabilityStatement') {
      throw malformed('metadata answered no CapabilityStatement');
    }
  }

  /** Follows Bundle.link[next] until `limit` matches, no next page, or the page cap. */
  async #search<T extends Resource>(
    type: SearchType,
    patientId: string,
    params: SearchParams,
    limit: number,
    options: CallOptions,
  ): Promise<T[]> {
    const count = String(Math.min(this.#pageSize, limit));
    const query = {
      patient: `Patient/${patientId}`,
      ...params,
      _count: count,
      _elements: ELEMENTS[type],
    };
    let url: URL | undefined = this.#url(type, query);
    const found: T[] = [];
    for (
      let page = 0;
      url !== undefined && found.length < limit && page < this.#maxPages;
      page += 1
    ) {
      const answer = await this.#http.send({
        method: 'GET',
        url,
        what: `search ${type}`,
        idempotent: true,
        signal: options.signal,
      });
      const { resources, next } = checkSearchBundle<T>(answer.body, type);
      for (const resource of resources) checkPatient(resource, type, patientId);
      found.push(...resources);
      url = next === undefined ? undefined : this.#sameServer(next);
    }
    return found.slice(0, limit);
  }

  async #create(
    resource: Observation | DocumentReference,
    identifier: { system: string; value: string },
    options: CallOptions,
  ): Promise<WriteResult> {
    const type = resource.resourceType;
    const answer = await this.#http.send({
      method: 'POST',
      url: this.#url(type, {}),
      what: `create ${type}`,
      idempotent: false,
      body: resource,
      headers: { 'if-none-exist': ifNoneExist(identifier) },
      signal: options.signal,
    });
    if (answer.status !== 200 && answer.status !== 201) {
      throw malformed(`create ${type} answered HTTP ${String(answer.status)}`);
    }
    const id =
      answer.body === undefined
        ? this.#idFromLocation(answer.location, type)
        : checkResource(answer.body, type).id;
    if (id === undefined) throw malformed(`create ${type} answered no id`);
    return { id, created: answer.status === 201, identifier };
  }

  #url(path: string, params: SearchParams): URL {
    const url = new URL(path, this.#base);
    for (const [key, value] of Object.entries(params)) {
      for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(key, v);
    }
    return url;
  }

  /** A next-page link is followed only when it points back at this FHIR base (the token goes with it). */
  #sameServer(link: string): URL {
    let url: URL;
    try {
      url = new URL(link, this.#base);
    } catch {
      throw malformed('Bundle next link is not a URL');
    }
    if (url.origin !== this.#base.origin || !url.pathname.startsWith(this.#base.pathname)) {
      throw malformed('Bundle next link points away from the FHIR server');
    }
    return url;
  }

  #idFromLocation(location: string | null, type: string): string | undefined {
    if (location === null) return undefined;
    const parts = new URL(location, this.#base).pathname.split('/');
    const at = parts.lastIndexOf(type);
    return at < 0 ? undefined : checkId(parts[at + 1], `${type} id`);
  }
}
