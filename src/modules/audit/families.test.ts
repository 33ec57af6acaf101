import { describe, expect, it } from 'vitest';
import { cutoffsAt, familyOf, type AuditFamily } from './families.js';

/** Every action the service writes (grep `action:` and `userEvent(` in src), with its outcome. */
const TABLE: [action: string, success: boolean, family: AuditFamily][] = [
  ['ehr.read', true, 'ehr'],
  ['ehr.read', false, 'ehr'],
  ['ehr.write', true, 'ehr'],
  ['ehr.write_failed', false, 'ehr'],
  ['degradation.activated', true, 'ehr'],
  ['degradation.recovered', true, 'ehr'],
  ['auth.login', true, 'session'],
  ['auth.login_failed', false, 'session'],
  ['auth.logout', true, 'session'],
  ['auth.account_locked', true, 'session'],
  ['auth.refresh_reuse_detected', false, 'session'],
  ['user.password_change_locked', true, 'session'],
  ['auth.register', true, 'other'],
  ['auth.register', false, 'error'],
  ['user.password_changed', false, 'error'],
  ['user.promoted', false, 'error'],
  ['kb.job.failed', true, 'error'],
  ['llm.error', true, 'error'],
  ['user.password_changed', true, 'other'],
  ['user.promoted', true, 'other'],
  ['user.demoted', true, 'other'],
  ['user.activated', true, 'other'],
  ['user.deactivated', true, 'other'],
  ['user.updated', true, 'other'],
  ['user.deleted', true, 'other'],
  ['kb.document.uploaded', true, 'other'],
  ['kb.document.deleted', true, 'other'],
  ['kb.document.reindexed', true, 'other'],
  ['kb.job.retried', true, 'other'],
  ['flag.created', true, 'other'],
  ['flag.updated', true, 'other'],
  ['flag.toggled', true, 'other'],
  ['flag.deleted', true, 'other'],
  ['cache.cleared', true, 'other'],
  ['cache.invalidated', true, 'other'],
  ['conversation.deleted', true, 'other'],
  ['feedback.exported', true, 'other'],
  ['audit.exported', true, 'other'],
  ['audit.purged', true, 'other'],
];

describe('familyOf', () => {
  it.each(TABLE)('%s (success %s) is %s', (action, success, family) => {
    expect(familyOf(action, success)).toBe(family);
  });

  it('takes whole prefixes only: lookalike names are not EHR or session entries', () => {
    expect(familyOf('ehrx.read', true)).toBe('other');
    expect(familyOf('authz.check', true)).toBe('other');
    expect(familyOf('user.ehr.read', true)).toBe('other');
  });
});

describe('cutoffsAt', () => {
  it('subtracts whole days from now, family by family', () => {
    const now = new Date('2030-03-01T12:00:00.000Z');
    expect(cutoffsAt(now, { ehr: 2190, session: 365, error: 90 })).toEqual({
      ehr: new Date('2024-03-02T12:00:00.000Z'),
      session: new Date('2029-03-01T12:00:00.000Z'),
      error: new Date('2029-12-01T12:00:00.000Z'),
    });
  });
});
