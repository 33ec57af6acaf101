import { expect } from 'vitest';
import { calculate } from '../../src/modules/chat/tools/calculator/calculators.js';
import { ToolError } from '../../src/modules/chat/tools/types.js';

/** The ToolError message for refused calculator arguments (fails the test if they are accepted). */
export function refusal(args: Record<string, unknown>): string {
  try {
    calculate(args);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return (error as ToolError).message;
  }
  throw new Error(`accepted: ${JSON.stringify(args)}`);
}
