import { ToolError, type Tool } from '../types.js';
import { calculate } from './calculators.js';
import { calculatorDefinition } from './schema.js';

export { describeCalculation } from './describe.js';
export { parseCalculatorRequest } from './parse.js';

/** Standard medical calculators (BMI, eGFR, CHA2DS2-VASc, ...): see the definition's description. */
export const medicalCalculatorTool: Tool = {
  definition: calculatorDefinition,
  run(args) {
    const given: unknown = args;
    // A throw inside the executor rejects the promise with that ToolError.
    return new Promise((resolve) => {
      if (typeof given !== 'object' || given === null || Array.isArray(given)) {
        throw new ToolError('arguments must be a JSON object');
      }
      resolve({ ...calculate(args) });
    });
  },
};
