import type { AllergyIntolerance, MedicationRequest, Observation } from '@medplum/fhirtypes';
import type { Logger } from '../../platform/logger.js';
import {
  lastGoodKey,
  type DegradationEvent,
  type Labelled,
  type Resilience,
} from '../../providers/ehr/resilience.js';
import type {
  EhrProvider,
  ObservationInput,
  SummaryNoteInput,
  WriteResult,
} from '../../providers/ehr/types.js';
import { EHR_NOT_CONFIGURED, EhrRefusal, failureKind, toAppError } from './errors.js';
import { EhrAudit, EhrGuard, type EhrCaller, type PatientAccess } from './guard.js';
import {
  labsKey,
  readSummary,
  summaryCount,
  SUMMARY_TYPES,
  type PatientSummary,
} from './summary.js';
import { statusOf, type EhrStatus } from './status.js';
import { isWriteRefusal, WriteStats, type WriteMetrics } from './write-stats.js';

export type { EhrCaller } from './guard.js';
export type { PatientSummary } from './summary.js';
export type { EhrStatus } from './status.js';

/** What a write answers: what was written, so the assistant can say so. */
export interface EhrWriteAnswer {
  resource_type: 'Observation' | 'DocumentReference';
  id: string;
  /** False when the idempotency key had already written this resource. */
  created: boolean;
  patient_id: string;
}

export interface EhrServiceDeps {
  flags: ConstructorParameters<typeof EhrGuard>[0];
  audit: ConstructorParameters<typeof EhrAudit>[0];
  log: Pick<Logger, 'warn'>;
  access: PatientAccess;
  /** Both absent: the integration is disabled and every method refuses. */
  provider?: EhrProvider;
  resilience?: Resilience;
  now?: () => number;
}

/** Reads may be given up by their caller (barge-in, message_cancel); writes never are. */
export interface ReadOptions {
  signal?: AbortSignal;
}

/**
 * The one door to the electronic health record (issue 13): every caller (chat tools, voice,
 * operator endpoints) reads and writes through it. Each call is checked (flag `ehr.read` or
 * `ehr.write` for the user, a well-formed patient id, the allowed patients), goes through the
 * circuit breaker and timeouts, and is audited with types, ids and counts, never content. Reads
 * fall back to the last good answer while the EHR is unavailable, labelled `stale` with when it was
 * fetched. A write is never cancelled once sent: write methods take no AbortSignal, and the
 * per-call timeout is the only thing that abandons one (the idempotency key makes trying again
 * safe: the same key never creates a second resource).
 */
export class EhrService {
  private readonly guard: EhrGuard;
  private readonly audit: EhrAudit;
  private readonly stats = new WriteStats();
  private readonly pending = new Set<Promise<void>>();
  private readonly now: () => number;

  constructor(private readonly deps: EhrServiceDeps) {
    this.guard = new EhrGuard(deps.flags, deps.access);
    this.audit = new EhrAudit(deps.audit);
    this.now = deps.now ?? (() => performance.now());
    deps.resilience?.onDegradation((event) => {
      this.track(this.recordDegradation(event));
    });
  }

  get enabled(): boolean {
    return this.deps.provider !== undefined && this.deps.resilience !== undefined;
  }

  status(): EhrStatus {
    return statusOf(this.enabled ? this.deps.resilience : undefined);
  }

  writeMetrics(): WriteMetrics {
    return this.stats.snapshot();
  }

  /** Patient, active conditions, active medications, allergies and latest vitals, in parallel. */
  patientSummary(
    caller: EhrCaller,
    patientId: string,
    options: ReadOptions = {},
  ): Promise<Labelled<PatientSummary>> {
    return this.read(
      caller,
      patientId,
      'summary',
      SUMMARY_TYPES,
      options,
      readSummary,
      summaryCount,
    );
  }

  /** The newest laboratory Observations with any of `codes` (LOINC), at most `limit`. */
  async recentLabs(
    caller: EhrCaller,
    patientId: string,
    codes: readonly string[],
    limit: number,
    options: ReadOptions = {},
  ): Promise<Labelled<Observation[]>> {
    const what = labsKey(codes, limit);
    return await this.read(
      caller,
      patientId,
      what,
      ['Observation'],
      options,
      (p, id, signal) =>
        p.searchObservations(
          { patientId: id, category: 'laboratory', code: codes, limit },
          { signal },
        ),
      (list) => list.length,
    );
  }

  /** Active medication requests. */
  medications(
    caller: EhrCaller,
    patientId: string,
    options: ReadOptions = {},
  ): Promise<Labelled<MedicationRequest[]>> {
    return this.read(
      caller,
      patientId,
      'medications',
      ['MedicationRequest'],
      options,
      (p, id, signal) => p.medicationRequests(id, { activeOnly: true }, { signal }),
      (list) => list.length,
    );
  }

  allergies(
    caller: EhrCaller,
    patientId: string,
    options: ReadOptions = {},
  ): Promise<Labelled<AllergyIntolerance[]>> {
    return this.read(
      caller,
      patientId,
      'allergies',
      ['AllergyIntolerance'],
      options,
      (p, id, signal) => p.allergies(id, { signal }),
      (list) => list.length,
    );
  }

  /** Writes one Observation; the same idempotency key never writes a second one. */
  recordObservation(
    caller: EhrCaller,
    patientId: string,
    input: Omit<ObservationInput, 'patientId' | 'idempotencyKey'>,
    idempotencyKey: string,
  ): Promise<EhrWriteAnswer> {
    return this.write(caller, patientId, 'Observation', (p, id, signal) =>
      p.createObservation({ ...input, patientId: id, idempotencyKey }, { signal }),
    );
  }

  /** Writes the conversation's summary note (a DocumentReference with a text/plain attachment). */
  writeSummaryNote(
    caller: EhrCaller,
    patientId: string,
    note: Omit<SummaryNoteInput, 'patientId' | 'idempotencyKey'>,
    idempotencyKey: string,
  ): Promise<EhrWriteAnswer> {
    return this.write(caller, patientId, 'DocumentReference', (p, id, signal) =>
      p.createDocumentReference({ ...note, patientId: id, idempotencyKey }, { signal }),
    );
  }

  /** Resolves when the degradation events raised so far are audited and last good values kept. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
    await this.deps.resilience?.idle();
  }

  /** Stops probing the EHR, then waits for what is still being audited or kept. */
  async close(): Promise<void> {
    await this.deps.resilience?.close();
    await this.idle();
  }

  private backend(): { provider: EhrProvider; resilience: Resilience } {
    const { provider, resilience } = this.deps;
    if (provider === undefined || resilience === undefined) {
      throw new EhrRefusal('internal', 'SERVICE_UNAVAILABLE', EHR_NOT_CONFIGURED);
    }
    return { provider, resilience };
  }

  private async read<T>(
    caller: EhrCaller,
    patientId: string,
    what: string,
    types: string[],
    options: ReadOptions,
    op: (provider: EhrProvider, patientId: string, signal: AbortSignal) => Promise<T>,
    count: (value: T) => number,
  ): Promise<Labelled<T>> {
    const { provider, resilience } = this.backend();
    const details = { resource_types: types };
    let answer: Labelled<T>;
    try {
      const id = await this.guard.check(caller, 'ehr.read', patientId);
      answer = await resilience.read(lastGoodKey(id, what), (signal) => op(provider, id, signal), {
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch (error) {
      await this.audit.failure(caller, 'ehr.read', patientId, details, error, this.auditFailed);
      throw toAppError(error, 'Patient');
    }
    await this.audit.access(caller, 'ehr.read', patientId, true, {
      ...details,
      count: count(answer.value),
      stale: answer.stale,
    });
    return answer;
  }

  private async write(
    caller: EhrCaller,
    patientId: string,
    type: EhrWriteAnswer['resource_type'],
    op: (provider: EhrProvider, patientId: string, signal: AbortSignal) => Promise<WriteResult>,
  ): Promise<EhrWriteAnswer> {
    const { provider, resilience } = this.backend();
    const details = { resource_type: type };
    let id: string;
    try {
      id = await this.guard.check(caller, 'ehr.write', patientId);
    } catch (error) {
      const kind = failureKind(error);
      this.stats.unsent(isWriteRefusal(kind) ? kind : undefined);
      await this.audit.failure(
        caller,
        'ehr.write_failed',
        patientId,
        details,
        error,
        this.auditFailed,
      );
      throw toAppError(error, 'Patient');
    }
    const started = this.now();
    let result: WriteResult;
    try {
      result = await resilience.run((signal) => op(provider, id, signal), { idempotent: false });
    } catch (error) {
      this.stats.record(false, this.now() - started);
      await this.audit.failure(caller, 'ehr.write_failed', id, details, error, this.auditFailed);
      throw toAppError(error, 'Patient');
    }
    this.stats.record(true, this.now() - started);
    await this.audit.access(caller, 'ehr.write', id, true, {
      ...details,
      outcome: result.created ? 'created' : 'existing',
      resource_id: result.id,
    });
    return { resource_type: type, id: result.id, created: result.created, patient_id: id };
  }

  private readonly auditFailed = (error: unknown): void => {
    this.deps.log.warn({ err: error }, 'EHR audit entry could not be written');
  };

  private async recordDegradation(event: DegradationEvent): Promise<void> {
    const reason = event.type === 'degradation.activated' ? event.reason : undefined;
    await this.audit.degradation(event.type, reason).catch(this.auditFailed);
  }

  private track(promise: Promise<void>): void {
    this.pending.add(promise);
    void promise.finally(() => this.pending.delete(promise));
  }
}
