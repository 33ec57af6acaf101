import { readFile } from 'node:fs/promises';

export interface Question {
  id: string;
  split: 'dev' | 'heldout';
  question: string;
  doc_key: string;
  /** An exact substring of the passage that answers the question. */
  answer_contains: string;
}

export async function loadQuestions(path: string): Promise<Question[]> {
  return JSON.parse(await readFile(path, 'utf8')) as Question[];
}
