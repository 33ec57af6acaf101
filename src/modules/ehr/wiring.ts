import type { Config } from '../../config.js';
import type { Chaos } from '../../platform/chaos.js';
import type { KeyValueStore } from '../../platform/kv.js';
import type { Logger } from '../../platform/logger.js';
import type { Metrics } from '../../platform/metrics.js';
import { chaosEhr } from '../../providers/chaos.js';
import { FhirEhrProvider } from '../../providers/ehr/fhir.js';
import { Resilience } from '../../providers/ehr/resilience.js';
import type { EhrAuth } from '../../providers/ehr/types.js';
import type { AuditService } from '../audit/service.js';
import type { FlagsService } from '../flags/service.js';
import { KvLastGoodStore } from './last-good.js';
import { EhrService } from './service.js';

export interface EhrWiring {
  config: Config;
  log: Logger;
  kv: KeyValueStore;
  metrics: Metrics;
  flags: FlagsService;
  audit: AuditService;
  /** Fault injection: when enabled, its faults reach the breaker as provider failures. */
  chaos: Chaos;
}

/**
 * The EHR service: over FHIR (FHIR_BASE_URL set) through the resilience layer, with last good
 * answers in the key-value store and the breaker's state in `circuit_breaker_state{dependency="ehr"}`;
 * or, FHIR_BASE_URL unset, a service whose status is `disabled` and whose methods refuse.
 */
export function createEhr(w: EhrWiring): EhrService {
  const settings = w.config.ehr;
  const common = {
    flags: w.flags,
    audit: w.audit,
    log: w.log,
    access: { allowAll: settings.allowAllPatients, patients: settings.allowedPatients },
  };
  const fhir = settings.fhir;
  if (fhir === undefined) return new EhrService(common);
  const auth: EhrAuth =
    fhir.auth.kind === 'bearer'
      ? { kind: 'bearer', token: fhir.auth.token }
      : {
          kind: 'smart',
          tokenUrl: fhir.auth.tokenUrl,
          clientId: fhir.auth.clientId,
          privateJwk: fhir.auth.privateJwk,
          scope: fhir.auth.scope,
        };
  const fhirProvider = new FhirEhrProvider({
    baseUrl: fhir.baseUrl,
    auth,
    timeoutMs: settings.timeoutMs,
  });
  const provider = chaosEhr(fhirProvider, w.chaos);
  const gauge = w.metrics.circuitBreakerState;
  const resilience = new Resilience({
    dependency: 'ehr',
    timeoutMs: settings.timeoutMs,
    halfOpenAfterMs: settings.halfOpenAfterMs,
    halfOpenSuccesses: settings.probeSuccesses,
    // The breaker closes on probes of the server, never on users' questions (issue 23).
    probe: (signal) => provider.probe({ signal }),
    probeIntervalMs: settings.probeIntervalMs,
    lastGoodTtlMs: settings.lastGoodTtlMs,
    store: new KvLastGoodStore(w.kv),
    onGauge: (value) => {
      gauge.set({ dependency: 'ehr' }, value);
    },
  });
  return new EhrService({ ...common, provider, resilience });
}
