// The package ships no types; what bench/lexical-candidates/candidates.ts calls.
declare module 'wink-bm25-text-search' {
  interface Engine {
    defineConfig(config: {
      fldWeights: Record<string, number>;
      bm25Params?: { k1?: number; b?: number; k?: number };
    }): boolean;
    definePrepTasks(tasks: ((input: string) => string[])[], field?: string): number;
    addDoc(doc: Record<string, string>, id: number | string): number;
    consolidate(fp?: number): boolean;
    search(text: string, limit?: number): [string, number][];
  }
  export default function bm25(): Engine;
}
