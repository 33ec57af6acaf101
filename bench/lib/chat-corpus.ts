import { chunkPages } from '../../src/modules/knowledge/chunk.js';
import { prng } from './sections.js';

/**
 * Synthetic clinical guideline text for the chat benchmark: deterministic documents built from a
 * small clinical vocabulary (conditions, their drugs, tests, populations), and questions in the
 * same vocabulary, most answerable by a sentence of some document and a few off topic.
 */

interface Condition {
  name: string;
  drugs: string[];
  measure: string;
  target: string;
}

/** name | its drugs | what is measured | the target. */
const CONDITIONS: Condition[] = [
  'hypertension | ramipril,amlodipine,indapamide | clinic blood pressure | 140/90 mmHg',
  'type 2 diabetes | metformin,gliclazide,empagliflozin | HbA1c | 53 mmol/mol',
  'atrial fibrillation | apixaban,bisoprolol,digoxin | resting heart rate | 110 beats per minute',
  'heart failure | furosemide,spironolactone,bisoprolol | serum potassium | 5.5 mmol/L',
  'chronic kidney disease | ramipril,dapagliflozin,sodium bicarbonate | urine albumin to creatinine ratio | 30 mg/mmol',
  'asthma | salbutamol,budesonide,montelukast | peak expiratory flow | 80% of best',
  'COPD | tiotropium,salbutamol,prednisolone | oxygen saturation | 88 to 92%',
  'community-acquired pneumonia | amoxicillin,clarithromycin,doxycycline | CURB-65 score | 2',
  'urinary tract infection | nitrofurantoin,trimethoprim,pivmecillinam | urine culture | no growth',
  'cellulitis | flucloxacillin,clarithromycin,doxycycline | temperature | 38 degrees',
  'deep vein thrombosis | apixaban,rivaroxaban,enoxaparin | Wells score | 2 points',
  'migraine | sumatriptan,propranolol,topiramate | headache days a month | 4',
  'epilepsy | levetiracetam,lamotrigine,sodium valproate | seizure frequency | none for a year',
  'depression | sertraline,mirtazapine,citalopram | PHQ-9 score | 10',
  'hypothyroidism | levothyroxine,liothyronine,calcium carbonate | TSH | 4 mU/L',
  'gout | allopurinol,colchicine,naproxen | serum urate | 360 micromol/L',
  'rheumatoid arthritis | methotrexate,folic acid,hydroxychloroquine | DAS28 score | 2.6',
  'osteoporosis | alendronic acid,colecalciferol,denosumab | bone mineral density T-score | -2.5',
  'iron deficiency anaemia | ferrous sulfate,ferric carboxymaltose,ascorbic acid | haemoglobin | 120 g/L',
  'hyperlipidaemia | atorvastatin,ezetimibe,rosuvastatin | non-HDL cholesterol | 40% reduction',
  'peptic ulcer disease | omeprazole,lansoprazole,clarithromycin | urea breath test | negative',
  'Parkinson disease | co-careldopa,ropinirole,rasagiline | motor fluctuation | minimal',
  'stable angina | glyceryl trinitrate,bisoprolol,isosorbide mononitrate | angina episodes a week | 1',
  'sepsis | piperacillin with tazobactam,gentamicin,meropenem | serum lactate | 2 mmol/L',
].map((row) => {
  const [name = '', drugs = '', measure = '', target = ''] = row.split(' | ');
  return { name, drugs: drugs.split(','), measure, target };
});

const TESTS = [
  'eGFR',
  'serum potassium',
  'liver function tests',
  'full blood count',
  'serum sodium',
  'INR',
  'renal function',
  'TSH',
  'creatine kinase',
  'ECG',
];
const POPULATIONS = [
  'pregnant women',
  'adults over 80 years',
  'children under 12',
  'patients on dialysis',
  'breastfeeding women',
  'people with liver cirrhosis',
];
const ADVERSE = [
  'hyperkalaemia',
  'hypoglycaemia',
  'bleeding',
  'acute kidney injury',
  'QT prolongation',
  'falls',
  'hyponatraemia',
  'angioedema',
  'lactic acidosis',
];
const RED_FLAGS = [
  'chest pain',
  'syncope',
  'new confusion',
  'haemoptysis',
  'a systolic pressure below 90 mmHg',
  'rapidly rising creatinine',
  'unexplained weight loss',
];
const SPECIALTIES = [
  'cardiology',
  'nephrology',
  'respiratory medicine',
  'the acute medical unit',
  'endocrinology',
  'rheumatology',
  'neurology',
];
const FREQUENCIES = ['once daily', 'twice daily', 'three times a day', 'at night', 'once weekly'];
const REGIONS = ['North', 'South', 'East', 'West', 'Central', 'Coastal', 'Metropolitan', 'Rural'];
const KINDS = ['trust guideline', 'practice protocol', 'ward handbook', 'formulary note'];
const HEADINGS = [
  'Initial treatment',
  'Dose adjustment',
  'Monitoring',
  'Referral',
  'Special populations',
  'Perioperative care',
  'Counselling',
  'Treatment targets',
  'Review',
];

type Pick = <T>(items: readonly T[]) => T;

/** One sentence of a section, in the words a guideline would use. */
function sentence(c: Condition, heading: string, pick: Pick, n: () => number): string {
  const d = pick(c.drugs);
  const dose = pick([2.5, 5, 10, 20, 25, 40, 50, 100, 200, 250, 500, 1000]);
  switch (heading) {
    case 'Initial treatment':
      return `In adults with ${c.name}, start ${d} at ${dose} mg ${pick(FREQUENCIES)}.`;
    case 'Dose adjustment':
      return pick([
        `Increase the dose of ${d} every ${n()} weeks as tolerated, up to ${dose * 4} mg a day.`,
        `Reduce the dose of ${d} when the eGFR falls below ${15 * n()} mL/min/1.73 m2.`,
      ]);
    case 'Monitoring':
      return `Check ${pick(TESTS)} ${n()} weeks after starting ${d} and then every ${n()} months.`;
    case 'Referral':
      return `Refer patients with ${c.name} and ${pick(RED_FLAGS)} to ${pick(SPECIALTIES)} within ${n() * 12} hours.`;
    case 'Special populations':
      return pick([
        `Avoid ${d} in ${pick(POPULATIONS)} because it increases the risk of ${pick(ADVERSE)}.`,
        `For ${pick(POPULATIONS)}, the usual maintenance dose of ${d} is ${dose / 2} mg ${pick(FREQUENCIES)}.`,
      ]);
    case 'Perioperative care':
      return `Stop ${d} ${n()} days before elective surgery and restart it when the patient is eating and drinking.`;
    case 'Counselling':
      return `Counsel patients taking ${d} about ${pick(ADVERSE)} and advise them to report it promptly.`;
    case 'Treatment targets':
      return `The target ${c.measure} for most adults with ${c.name} is below ${c.target}.`;
    default:
      return pick([
        `Review people with ${c.name} at least every ${n()} months, with their medicines.`,
        `Record the indication, dose and review date of ${d} in the clinical notes.`,
        `Shared decisions about ${c.name} should weigh frailty, preferences and life expectancy.`,
      ]);
  }
}

export interface GeneratedDocument {
  title: string;
  text: string;
  chunks: number;
}

function document(n: number): Omit<GeneratedDocument, 'chunks'> {
  const random = prng(7919 * (n + 1));
  const pick: Pick = (items) => items[Math.floor(random() * items.length)]!;
  const small = () => 1 + Math.floor(random() * 6);
  const c = CONDITIONS[n % CONDITIONS.length]!;
  const year = 2014 + Math.floor(random() * 11);
  const title = `${c.name} in adults (${pick(REGIONS)} ${pick(KINDS)}, ${year}, edition ${n + 1})`;
  const parts = [`# ${title}`];
  for (let s = 0, sections = 6 + Math.floor(random() * 5); s < sections; s++) {
    // Most sections are about the document's condition; some borrow another's.
    const topic = random() < 0.8 ? c : pick(CONDITIONS);
    const heading = pick(HEADINGS);
    parts.push(`## ${heading}`);
    for (let p = 0, paragraphs = 2 + Math.floor(random() * 2); p < paragraphs; p++) {
      const count = 3 + Math.floor(random() * 4);
      const out = Array.from({ length: count }, () =>
        sentence(topic, random() < 0.75 ? heading : pick(HEADINGS), pick, small),
      );
      parts.push(out.join(' '));
    }
  }
  return { title, text: `${parts.join('\n\n')}\n` };
}

/** Documents until their chunks (as the service's chunker cuts them) reach `target`. */
export function corpus(target: number): GeneratedDocument[] {
  const docs: GeneratedDocument[] = [];
  let total = 0;
  for (let n = 0; total < target; n++) {
    const doc = document(n);
    const chunks = chunkPages([{ page: null, text: doc.text }]).length;
    docs.push({ ...doc, chunks });
    total += chunks;
  }
  return docs;
}

const OFF_TOPIC = [
  'How long should a plaster cast stay on after a wrist fracture?',
  'What vaccines does a traveller to Kenya need?',
  'How is head lice treated in school children?',
  'What is the best way to remove a tick?',
];

/** `count` questions: one in ten off topic, the rest about a condition and one of its drugs. */
export function questions(count: number, seed = 1): string[] {
  const random = prng(104_729 * seed);
  const pick: Pick = (items) => items[Math.floor(random() * items.length)]!;
  return Array.from({ length: count }, (_, i) => {
    if (i % 10 === 9) return pick(OFF_TOPIC);
    const c = pick(CONDITIONS);
    const d = pick(c.drugs);
    return pick([
      `What is the starting dose of ${d} for ${c.name}?`,
      `How often should I check bloods after starting ${d}?`,
      `When should a patient with ${c.name} and ${pick(RED_FLAGS)} be referred?`,
      `Should ${d} be avoided in ${pick(POPULATIONS)}?`,
      `What is the target ${c.measure} for adults with ${c.name}?`,
      `Should ${d} be stopped before surgery?`,
      `At what eGFR should the dose of ${d} be reduced?`,
      `What should patients taking ${d} be counselled about?`,
    ]);
  });
}
