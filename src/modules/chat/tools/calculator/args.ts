import { ToolError } from '../types.js';
import { matchUnit, type Quantity } from './units.js';

/** A model's arguments: hostile until each value has been read through one of these helpers. */
export type Args = Readonly<Record<string, unknown>>;

export type Sex = 'female' | 'male';

/** A value of `null` counts as not given: some models send null for every unused field. */
export function isGiven(args: Args, field: string): boolean {
  return args[field] !== undefined && args[field] !== null;
}

function readNumber(args: Args, field: string): number {
  const value = args[field];
  if (value === undefined || value === null) throw new ToolError(`${field} is required`);
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new ToolError(`${field} must be a number (a JSON number, not a string)`);
  }
  return value;
}

/** Four significant digits at most, for ranges quoted in messages. */
function bound(value: number): string {
  return String(Number(value.toPrecision(4)));
}

function readUnit(args: Args, quantity: Quantity, unitField: string): string {
  const accepted = Object.keys(quantity.units);
  const listed = accepted.join(', ');
  const written = args[unitField];
  if (written === undefined || written === null) {
    throw new ToolError(`${unitField} is required (one of: ${listed})`);
  }
  const unit = typeof written === 'string' ? matchUnit(written, accepted) : undefined;
  if (unit === undefined) throw new ToolError(`${unitField} must be one of: ${listed}`);
  return unit;
}

/**
 * The quantity in its canonical unit, after checking type, unit and the plausible range (quoted in
 * the unit the caller used).
 */
export function readQuantity(args: Args, quantity: Quantity): number {
  const raw = readNumber(args, quantity.field);
  let unit = quantity.canonical;
  let factor = 1;
  if (quantity.unitField !== undefined) {
    unit = readUnit(args, quantity, quantity.unitField);
    factor = quantity.units[unit] ?? 1;
  }
  const value = raw * factor;
  if (!(value >= quantity.min && value <= quantity.max)) {
    const range = `${bound(quantity.min / factor)} and ${bound(quantity.max / factor)} ${unit}`;
    throw new ToolError(`${quantity.field} must be between ${range}`);
  }
  return value;
}

/** The unit the caller wrote for `quantity`, in its schema spelling (read after readQuantity). */
export function unitOf(args: Args, quantity: Quantity): string {
  return quantity.unitField === undefined
    ? quantity.canonical
    : readUnit(args, quantity, quantity.unitField);
}

/** A yes/no criterion: absent or null means not present; anything but a JSON boolean is refused. */
export function readFlag(args: Args, field: string): boolean {
  const value = args[field];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') {
    throw new ToolError(`${field} must be true or false (a JSON boolean, not a string)`);
  }
  return value;
}

export function readSex(args: Args): Sex {
  const value = args.sex;
  if (value === undefined || value === null)
    throw new ToolError('sex is required (female or male)');
  if (value !== 'female' && value !== 'male') {
    throw new ToolError('sex must be "female" or "male"');
  }
  return value;
}

/** A systolic and diastolic pressure pair in mmHg, the systolic strictly higher. */
export function checkPressures(systolic: number, diastolic: number): void {
  if (systolic <= diastolic) {
    throw new ToolError('systolic must be higher than diastolic: check the blood pressure reading');
  }
}

const MAX_KEY_SHOWN = 40;

/**
 * Refuses arguments this calculator does not take: unknown names, and known names that belong to
 * another calculator (a silently ignored value would look as if it had been used).
 */
export function checkFields(
  args: Args,
  calculator: string,
  fields: readonly string[],
  known: ReadonlySet<string>,
): void {
  for (const key of Object.keys(args)) {
    if (key === 'calculator' || fields.includes(key)) continue;
    const shown = JSON.stringify(key.slice(0, MAX_KEY_SHOWN));
    if (!known.has(key)) throw new ToolError(`unknown argument ${shown}`);
    if (isGiven(args, key)) {
      throw new ToolError(
        `argument ${shown} does not apply to the ${calculator} calculator; it takes: ${fields.join(', ')}`,
      );
    }
  }
}
