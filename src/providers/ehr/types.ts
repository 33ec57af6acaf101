import type { JWK } from 'jose';
import type {
  AllergyIntolerance,
  Condition,
  Encounter,
  MedicationRequest,
  Observation,
  Patient,
} from '@medplum/fhirtypes';

/** A fixed bearer token, or SMART backend services (client_credentials with a private key JWT). */
export type EhrAuth =
  | { kind: 'bearer'; token: string }
  | {
      kind: 'smart';
      tokenUrl: string;
      clientId: string;
      /** The RS384 private key, as a JWK. */
      privateJwk: JWK;
      /** e.g. `system/Patient.read system/Observation.rs system/Observation.c` */
      scope: string;
      /** Sent as the assertion's `kid` header when given. */
      keyId?: string;
    };

export interface FhirEhrOptions {
  /** The FHIR R4 base, e.g. https://fhir.example.org/r4 (FHIR_BASE_URL). */
  baseUrl: string;
  auth: EhrAuth;
  /** Each HTTP call (token request included) is abandoned after this long. Default 10 s. */
  timeoutMs?: number;
  /** `_count` per search page. Default 50. */
  pageSize?: number;
  /** A search follows at most this many pages (Bundle.link next). Default 20. */
  maxPages?: number;
  /** Default: the global fetch (undici). */
  fetch?: typeof fetch;
  /** Milliseconds since the epoch. Default Date.now. */
  now?: () => number;
  /** The identifier system of the idempotency identifiers put on written resources. */
  identifierSystem?: string;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export type ObservationCategory = 'vital-signs' | 'laboratory';

export interface ObservationQuery {
  patientId: string;
  category?: ObservationCategory;
  /** One LOINC code or several (any of them matches). */
  code?: string | readonly string[];
  since?: Date;
  until?: Date;
  /** At most this many Observations, newest first. */
  limit: number;
}

export interface Coded {
  system: string;
  code: string;
  display?: string;
}

export interface QuantityInput {
  value: number;
  unit: string;
  /** Default UCUM. */
  system?: string;
  /** Default `unit`. */
  code?: string;
}

/**
 * One Observation to write. A LOINC code of a FHIR vital-signs profile (src/providers/ehr/
 * vital-signs.ts) makes it a vital sign whatever `category` says: written with category
 * `vital-signs` and refused unless it fits the profile (a value in one of its units; blood
 * pressure 85354-9: no value, a systolic 8480-6 and a diastolic 8462-4 component in mm[Hg]).
 */
export interface ObservationInput {
  /** The caller's key for this write: the same key never creates a second resource. */
  idempotencyKey: string;
  patientId: string;
  status?: 'preliminary' | 'final' | 'amended';
  category?: ObservationCategory;
  code: Coded;
  value?: QuantityInput | { text: string };
  components?: { code: Coded; value: QuantityInput }[];
  effective?: Date;
  encounterId?: string;
}

export interface SummaryNoteInput {
  idempotencyKey: string;
  patientId: string;
  /** Plain text of the note; sent as a text/plain attachment. */
  text: string;
  title?: string;
  date?: Date;
  encounterId?: string;
}

export interface WriteResult {
  /** The resource's id on the FHIR server. */
  id: string;
  /** False when a resource with the same idempotency identifier already existed. */
  created: boolean;
  /** The identifier the write carried (system|value). */
  identifier: { system: string; value: string };
}

/** The electronic health record, read and written over FHIR R4. */
export interface EhrProvider {
  getPatient(id: string, options?: CallOptions): Promise<Patient>;
  searchObservations(query: ObservationQuery, options?: CallOptions): Promise<Observation[]>;
  conditions(patientId: string, options?: CallOptions): Promise<Condition[]>;
  medicationRequests(
    patientId: string,
    filter: { activeOnly: boolean },
    options?: CallOptions,
  ): Promise<MedicationRequest[]>;
  allergies(patientId: string, options?: CallOptions): Promise<AllergyIntolerance[]>;
  encounters(patientId: string, limit: number, options?: CallOptions): Promise<Encounter[]>;
  createObservation(input: ObservationInput, options?: CallOptions): Promise<WriteResult>;
  createDocumentReference(note: SummaryNoteInput, options?: CallOptions): Promise<WriteResult>;
  /**
   * A cheap read of the server itself (`GET [base]/metadata`, with the token and timeout of every
   * call), answering once the server answers with its CapabilityStatement: the breaker's probe.
   */
  probe(options?: CallOptions): Promise<void>;
}
