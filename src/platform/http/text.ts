import { Type } from 'typebox';

/** C0 and C1 control characters, DEL, and lone surrogates (stored as U+FFFD, not as sent). */
const NOT_ALLOWED = '\\u0000-\\u001f\\u007f-\\u009f\\ud800-\\udfff';

/**
 * A one-line text field: at least one visible character, no control characters. The one
 * definition behind names, titles, folder labels, categories and queries.
 */
export const VisibleText = (maxLength: number) =>
  Type.String({
    minLength: 1,
    maxLength,
    pattern: `^[^${NOT_ALLOWED}]*[^\\s${NOT_ALLOWED}][^${NOT_ALLOWED}]*$`,
  });
