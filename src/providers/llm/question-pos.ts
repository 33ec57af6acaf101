import nlp from 'compromise';

/**
 * The question's words that compromise (a rule-based part-of-speech tagger) reads as a verb, an
 * adjective or an adverb and not as a noun: "tangled", "nipped", "scooping", "going" in a
 * clinician's lay question. What a question is about is named by its nouns ("steak", "ankle
 * sprain", "dating scan"); the other words say what happened and what is wanted, in the asker's
 * own words, which a passage rarely repeats. Lower case.
 */
export function notNouns(question: string): Set<string> {
  const found = new Set<string>();
  for (const sentence of nlp(question).json() as { terms: { text: string; tags: string[] }[] }[]) {
    for (const term of sentence.terms) {
      const { tags } = term;
      if (tags.includes('Noun') || tags.includes('Value')) continue;
      if (tags.includes('Verb') || tags.includes('Adjective') || tags.includes('Adverb')) {
        found.add(term.text.toLowerCase());
      }
    }
  }
  return found;
}
