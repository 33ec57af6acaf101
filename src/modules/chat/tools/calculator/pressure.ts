import { checkPressures, readQuantity } from './args.js';
import type { Calculator } from './result.js';
import { DIASTOLIC, round, SYSTOLIC } from './units.js';

function mapBand(map: number): string {
  if (map < 65) return 'low: below the usual minimum target of 65 mmHg for organ perfusion';
  if (map <= 100) return 'within the usual adult range';
  return 'high';
}

export const mapCalculator: Calculator = {
  name: 'map',
  fields: ['systolic', 'diastolic'],
  compute(args) {
    const systolic = readQuantity(args, SYSTOLIC);
    const diastolic = readQuantity(args, DIASTOLIC);
    checkPressures(systolic, diastolic);
    const value = round(diastolic + (systolic - diastolic) / 3, 0);
    return {
      calculator: 'map',
      value,
      unit: 'mmHg',
      interpretation: mapBand(value),
      inputs: { systolic_mmhg: systolic, diastolic_mmhg: diastolic },
      formula: 'MAP = diastolic + (systolic - diastolic) / 3',
      reference:
        'Standard resting approximation (diastole about two thirds of the cardiac cycle); the ' +
        'MAP target of 65 mmHg: Surviving Sepsis Campaign guidelines 2021',
      notes: [
        'An approximation: at fast heart rates the true mean is closer to the arithmetic mean.',
      ],
    };
  },
};
