import { SYSTEM_CONTEXT } from '../../src/modules/audit/service.js';
import type { LlmProvider } from '../../src/providers/llm/types.js';
import { createTestApp, type TestApp } from './app.js';
import { createUser, type TestUser } from './factories.js';
import { FhirTestServer } from './fhir-server.js';

export const EHR_TEST_BEARER = 'ehr-test-token';

export interface EhrTestApp {
  server: FhirTestServer;
  t: TestApp;
  /** The first seeded patient, the one `EHR_ALLOWED_PATIENTS` allows. */
  patient: string;
  admin: TestUser;
  clinician: TestUser;
  close(): Promise<void>;
}

export interface EhrTestAppOptions {
  patients?: number;
  seed?: number;
  /** More settings (timeouts, the breaker's wait, CHAOS_ENABLED). */
  env?: Record<string, string>;
  /** The flags switched on for everyone (both EHR flags unless said). */
  flags?: string[];
  llm?: LlmProvider;
}

/**
 * A service whose EHR is a real FHIR server started for the test (static bearer token, seeded),
 * allowed to reach the first seeded patient, with an administrator and a clinician, and the EHR
 * flags on.
 */
export async function startEhrApp(options: EhrTestAppOptions = {}): Promise<EhrTestApp> {
  const server = await FhirTestServer.start({
    auth: { bearer: EHR_TEST_BEARER },
    seed: { patients: options.patients ?? 1, seed: options.seed ?? 3 },
  });
  const patient = server.seeded.patientIds[0] ?? '';
  const t = await createTestApp({
    env: {
      FHIR_BASE_URL: server.baseUrl,
      FHIR_AUTH: 'bearer',
      FHIR_BEARER_TOKEN: EHR_TEST_BEARER,
      EHR_ALLOWED_PATIENTS: patient,
      ...options.env,
    },
    ...(options.llm === undefined ? {} : { llm: options.llm }),
  });
  const admin = await createUser(t.app, t.deps, { admin: true });
  const clinician = await createUser(t.app, t.deps);
  for (const name of options.flags ?? ['ehr.read', 'ehr.write']) {
    await t.deps.flags.create(
      admin,
      { name, enabled: true, description: name, rolloutPercentage: 100 },
      SYSTEM_CONTEXT,
    );
  }
  return {
    server,
    t,
    patient,
    admin,
    clinician,
    close: async () => {
      await t.close();
      await server.stop();
    },
  };
}
