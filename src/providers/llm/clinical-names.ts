/**
 * Single-word names of clinical topics: conditions, syndromes, infections, organisms, medicines
 * (generic and common brand names) and named procedures or tests.
 *
 * The offline extractive answer model refuses a question whose topic no retrieved passage names.
 * A question word that appears in no passage weighs heavily when it names a clinical topic and
 * lightly when it is an ordinary word (a lay rewording such as "kilo", "going" or "flight").
 * Many topic names do not look clinical from their spelling alone ("measles", "lithium",
 * "glaucoma"), so this set lists them by their usual single-word names, in British and American
 * spellings where these differ.
 *
 * It is general medical vocabulary, not drawn from the knowledge base. It deliberately leaves out
 * everyday words that lay questions use without naming a topic (pain, cough, heart, blood, tablet,
 * jab, vaccine, flu, cancer, stroke, anxiety, pregnancy), drug classes and general terms
 * (antibiotics, statins, inhaler), nutrients (iron, calcium), acronyms (copd, ecg, hiv), anatomy
 * and symptoms. Entries are lowercase letters only.
 */
export const WORDS = `
angina arrhythmia atherosclerosis arteriosclerosis cardiomyopathy myocarditis pericarditis
endocarditis hypertension hypotension hyperlipidaemia hyperlipidemia hypercholesterolaemia
hypercholesterolemia dyslipidaemia dyslipidemia tachycardia bradycardia fibrillation aneurysm
thrombosis embolism thromboembolism vasculitis arteritis phlebitis thrombophlebitis claudication
varicose raynaud raynauds infarction ischaemia ischemia stenosis cardiomegaly syncope pacemaker
defibrillator hyperkalaemia hyperkalemia hypokalaemia hypokalemia hyponatraemia hyponatremia
hypernatraemia hypernatremia hypercalcaemia hypercalcemia hypocalcaemia hypocalcemia hypoglycaemia
hypoglycemia hyperglycaemia hyperglycemia hypomagnesaemia hypomagnesemia ketoacidosis acidosis
alkalosis uraemia uremia asthma asthmatic bronchitis bronchiolitis bronchiectasis emphysema
pneumonia pleurisy pneumothorax tuberculosis sarcoidosis fibrosis pertussis whooping croup
laryngitis pharyngitis tonsillitis sinusitis rhinitis epiglottitis tracheitis apnoea apnea
silicosis asbestosis mesothelioma legionella legionnaires hayfever catarrh empyema atelectasis
pneumoconiosis aspergillosis pneumonitis alveolitis appendicitis gastritis gastroenteritis colitis
diverticulitis diverticulosis diverticular coeliac celiac crohn crohns pancreatitis cholecystitis
gallstones cholelithiasis cholangitis hepatitis cirrhosis jaundice haemorrhoids hemorrhoids piles
fistula oesophagitis esophagitis reflux gastroparesis dyspepsia heartburn indigestion constipation
diarrhoea diarrhea dysentery cholera typhoid peritonitis volvulus intussusception hernia ileus
achalasia barrett barretts steatosis steatohepatitis encephalopathy ascites varices proctitis
enteritis malabsorption colic ulcer polyp polyps haemochromatosis hemochromatosis halitosis
cholestasis hepatoma cholangiocarcinoma gastroschisis hirschsprung pyloric stoma colostomy
ileostomy gastrostomy nephritis glomerulonephritis pyelonephritis nephrotic nephropathy cystitis
urethritis prostatitis epididymitis orchitis hydronephrosis hydrocele varicocele phimosis
balanitis cryptorchidism hypospadias incontinence enuresis bedwetting nocturia haematuria
hematuria proteinuria nephrolithiasis urolithiasis dialysis haemodialysis hemodialysis impotence
erectile polycystic hyperplasia priapism peyronie peyronies diabetes diabetic prediabetes
hypothyroidism hyperthyroidism thyrotoxicosis thyroiditis goitre goiter myxoedema myxedema
acromegaly gigantism cushing cushings addison addisons hyperparathyroidism hypoparathyroidism
hypopituitarism prolactinoma phaeochromocytoma pheochromocytoma hyperaldosteronism aldosteronism
hypogonadism gynaecomastia gynecomastia hirsutism osteomalacia rickets osteoporosis osteopenia
obesity insulinoma hashimoto hashimotos epilepsy epileptic migraine dementia parkinsonism
parkinson parkinsons alzheimer alzheimers sclerosis meningitis encephalitis neuropathy neuralgia
sciatica palsy hydrocephalus narcolepsy cataplexy myasthenia ataxia dystonia chorea concussion
hemiplegia paraplegia quadriplegia tetraplegia aphasia dysphasia dysphagia dyslexia dyspraxia
dyscalculia tourette tourettes neuroma glioma glioblastoma meningioma astrocytoma neuroblastoma
retinoblastoma medulloblastoma subarachnoid syringomyelia spondylosis spondylitis
spondylolisthesis radiculopathy myelopathy polio poliomyelitis tetanus botulism rabies shingles
neurofibromatosis bifida amyotrophic huntington huntingtons vertigo labyrinthitis neuritis
tinnitus guillain barre creutzfeldt encephalomyelitis dysautonomia schizophrenia psychosis bipolar
mania hypomania autism asperger aspergers anorexia bulimia insomnia agoraphobia claustrophobia
arachnophobia dysthymia cyclothymia schizoaffective delirium catatonia hypochondria
hypochondriasis kleptomania pyromania trichotillomania alcoholism encopresis pica psoriasis
psoriatic eczema dermatitis acne rosacea impetigo scabies urticaria hives warts verruca verrucae
vitiligo melanoma carcinoma keratosis cellulitis erysipelas folliculitis furuncle carbuncle
ringworm tinea intertrigo pityriasis alopecia hyperhidrosis lichen pemphigus pemphigoid ichthyosis
molluscum herpes chilblains keloid hidradenitis lipoma angioma haemangioma hemangioma naevus nevus
melasma chloasma scleroderma dermatomyositis xanthelasma pruritus erythema paronychia
onychomycosis dandruff sunburn lice bedbugs pediculosis calamine glaucoma cataract cataracts
conjunctivitis blepharitis keratitis uveitis iritis scleritis episcleritis retinopathy maculopathy
macular keratoconus strabismus amblyopia myopia hyperopia hypermetropia presbyopia astigmatism
chalazion stye trachoma papilloedema papilledema nystagmus ptosis diplopia pterygium
endophthalmitis dacryocystitis otitis mastoiditis cholesteatoma otosclerosis meniere menieres
epistaxis quinsy grommets presbycusis gingivitis periodontitis caries stomatitis glossitis
cheilitis leukoplakia xerostomia bruxism pulpitis abscess endometriosis adenomyosis fibroids
menorrhagia dysmenorrhoea dysmenorrhea amenorrhoea amenorrhea menopause perimenopause preeclampsia
eclampsia miscarriage ectopic hyperemesis praevia previa stillbirth infertility endometritis
vaginosis vaginitis vulvodynia vulvovaginitis cervicitis salpingitis prolapse mastitis thrush
candidiasis chorioamnionitis oligohydramnios polyhydramnios caesarean cesarean episiotomy
amniocentesis colposcopy abortion rhesus galactorrhoea galactorrhea measles mumps rubella
chickenpox varicella zoster roseola scarlatina parvovirus kawasaki phenylketonuria galactosaemia
galactosemia cystic thalassaemia thalassemia sickle craniosynostosis plagiocephaly torticollis
threadworm threadworms pinworm pinworms diphtheria meningococcus meningococcal pneumococcus
pneumococcal haemophilus hemophilus trisomy duchenne marfan marfans klinefelter klinefelters
achondroplasia angelman noonan patau malaria sepsis septicaemia septicemia typhus leprosy syphilis
gonorrhoea gonorrhea chlamydia trichomoniasis trichomonas influenza coronavirus covid ebola zika
dengue chikungunya anthrax smallpox monkeypox mpox brucellosis leptospirosis toxoplasmosis
toxoplasma listeriosis listeria salmonella salmonellosis shigella shigellosis campylobacter
escherichia klebsiella pseudomonas enterococcus streptococcus streptococcal staphylococcus
staphylococcal clostridium clostridioides difficile giardia giardiasis cryptosporidium
cryptosporidiosis amoebiasis amebiasis schistosomiasis bilharzia hookworm roundworm tapeworm
ascariasis toxocara candida aspergillus cryptococcus histoplasmosis pneumocystis mycoplasma
bordetella neisseria treponema borrelia rickettsia helicobacter pylori gardnerella cytomegalovirus
adenovirus rhinovirus enterovirus norovirus rotavirus papillomavirus poliovirus metapneumovirus
hantavirus lassa marburg mononucleosis glandular osteomyelitis gangrene necrotising necrotizing
fasciitis bacteraemia bacteremia lyme yersinia vibrio mycobacterium chancroid immunodeficiency
retrovirus leishmaniasis trypanosomiasis filariasis onchocerciasis chagas anaemia anemia
haemophilia hemophilia leukaemia leukemia lymphoma myeloma myelodysplasia polycythaemia
polycythemia thrombocytopenia thrombocythaemia thrombocythemia neutropenia leukopenia pancytopenia
spherocytosis haemolysis hemolysis agranulocytosis willebrand thrombophilia coagulopathy
myelofibrosis aplastic pernicious favism porphyria sarcoma adenocarcinoma osteosarcoma seminoma
teratoma choriocarcinoma hepatoblastoma nephroblastoma wilms hodgkin hodgkins lymphoedema
lymphedema chemotherapy radiotherapy immunotherapy gout lupus arthritis osteoarthritis polymyalgia
fibromyalgia polymyositis bursitis tendinitis tendonitis tendinopathy epicondylitis pseudogout
chondrocalcinosis rheumatoid rheumatism rheumatic ankylosing behcet behcets sjogren sjogrens
hypermobility costochondritis capsulitis hyperuricaemia hyperuricemia scoliosis kyphosis lordosis
whiplash bunion bunions carpal osteonecrosis perthes dupuytren dupuytrens rhabdomyolysis myositis
myopathy dystrophy metatarsalgia tenosynovitis anaphylaxis angioedema amyloidosis hypothermia
hyperthermia heatstroke dehydration malnutrition kwashiorkor marasmus scurvy beriberi pellagra
oedema edema frostbite snakebite paget pagets colonoscopy sigmoidoscopy endoscopy gastroscopy
bronchoscopy cystoscopy laparoscopy hysteroscopy arthroscopy mammogram mammography angiogram
angiography angioplasty echocardiogram electrocardiogram electroencephalogram spirometry
audiometry biopsy appendicectomy appendectomy hysterectomy vasectomy tonsillectomy adenoidectomy
cholecystectomy mastectomy lumpectomy prostatectomy nephrectomy colectomy thyroidectomy
splenectomy oophorectomy gastrectomy tracheostomy tracheotomy laparotomy craniotomy circumcision
lithotripsy thrombolysis thrombectomy cardioversion vitrectomy trabeculectomy keratoplasty
myringotomy septoplasty rhinoplasty liposuction bariatric paracentesis epidural electroconvulsive
paracetamol acetaminophen ibuprofen naproxen diclofenac aspirin celecoxib etoricoxib meloxicam
indomethacin indometacin ketoprofen mefenamic ketorolac piroxicam etodolac nabumetone codeine
dihydrocodeine morphine oxycodone hydrocodone hydromorphone fentanyl tramadol tapentadol
buprenorphine methadone pethidine meperidine diamorphine heroin cocaine cannabis methamphetamine
naloxone naltrexone nefopam cocodamol amoxicillin ampicillin penicillin phenoxymethylpenicillin
benzylpenicillin flucloxacillin dicloxacillin cloxacillin piperacillin tazobactam clavulanate
coamoxiclav augmentin cefalexin cephalexin cefuroxime ceftriaxone cefotaxime ceftazidime cefixime
cefazolin cefepime cefaclor cefdinir cefpodoxime meropenem imipenem ertapenem aztreonam gentamicin
amikacin tobramycin neomycin streptomycin vancomycin teicoplanin daptomycin linezolid erythromycin
clarithromycin azithromycin doxycycline tetracycline minocycline lymecycline oxytetracycline
tigecycline ciprofloxacin levofloxacin moxifloxacin ofloxacin norfloxacin metronidazole tinidazole
clindamycin trimethoprim sulfamethoxazole cotrimoxazole nitrofurantoin fosfomycin pivmecillinam
methenamine rifampicin rifampin rifaximin isoniazid pyrazinamide ethambutol bedaquiline
chloramphenicol fusidic mupirocin colistin polymyxin bacitracin dapsone temocillin fluconazole
itraconazole voriconazole posaconazole ketoconazole clotrimazole miconazole econazole terbinafine
nystatin amphotericin griseofulvin caspofungin aciclovir acyclovir valaciclovir valacyclovir
famciclovir ganciclovir valganciclovir oseltamivir zanamivir tamiflu remdesivir nirmatrelvir
paxlovid molnupiravir tenofovir emtricitabine lamivudine zidovudine abacavir efavirenz
dolutegravir raltegravir bictegravir darunavir ritonavir lopinavir atazanavir rilpivirine
nevirapine sofosbuvir ledipasvir velpatasvir glecaprevir entecavir ribavirin truvada chloroquine
hydroxychloroquine mefloquine atovaquone proguanil malarone artemether lumefantrine artesunate
quinine primaquine ivermectin permethrin malathion mebendazole albendazole praziquantel pyrantel
nitazoxanide ramipril lisinopril enalapril perindopril captopril quinapril fosinopril trandolapril
benazepril losartan candesartan valsartan irbesartan olmesartan telmisartan sacubitril entresto
amlodipine felodipine nifedipine lercanidipine diltiazem verapamil bisoprolol atenolol metoprolol
propranolol carvedilol nebivolol labetalol sotalol timolol nadolol doxazosin prazosin terazosin
tamsulosin alfuzosin silodosin finasteride dutasteride hydralazine minoxidil clonidine methyldopa
moxonidine furosemide frusemide bumetanide torasemide torsemide bendroflumethiazide
hydrochlorothiazide chlorthalidone chlortalidone indapamide metolazone spironolactone eplerenone
amiloride triamterene acetazolamide digoxin amiodarone dronedarone flecainide propafenone
adenosine ivabradine ranolazine nicorandil nitroglycerin nitroglycerine isosorbide atorvastatin
simvastatin rosuvastatin pravastatin fluvastatin lovastatin pitavastatin ezetimibe fenofibrate
gemfibrozil bezafibrate inclisiran evolocumab alirocumab warfarin apixaban rivaroxaban dabigatran
edoxaban heparin enoxaparin dalteparin tinzaparin fondaparinux acenocoumarol clopidogrel
ticagrelor prasugrel dipyridamole cilostazol alteplase tenecteplase streptokinase tranexamic
protamine idarucizumab andexanet phytomenadione lipitor crestor zocor plavix brilinta eliquis
xarelto pradaxa lixiana coumadin lasix norvasc zestril aldactone clexane fragmin salbutamol
albuterol terbutaline salmeterol formoterol vilanterol olodaterol indacaterol tiotropium
ipratropium umeclidinium glycopyrronium aclidinium beclometasone beclomethasone budesonide
fluticasone mometasone ciclesonide montelukast zafirlukast theophylline aminophylline roflumilast
omalizumab mepolizumab benralizumab dupilumab tezepelumab carbocisteine acetylcysteine ventolin
seretide symbicort advair spiriva fostair singulair flixotide dupixent xolair omeprazole
esomeprazole lansoprazole pantoprazole rabeprazole ranitidine famotidine cimetidine nizatidine
sucralfate misoprostol gaviscon metoclopramide domperidone ondansetron granisetron
prochlorperazine cyclizine promethazine hyoscine scopolamine buscopan mebeverine loperamide
imodium lactulose macrogol movicol senna senokot bisacodyl dulcolax docusate picosulfate
linaclotide prucalopride mesalazine mesalamine sulfasalazine balsalazide olsalazine azathioprine
mercaptopurine infliximab adalimumab vedolizumab ustekinumab golimumab certolizumab tofacitinib
upadacitinib ursodeoxycholic ursodiol cholestyramine colestyramine orlistat pancreatin
terlipressin octreotide nexium losec zantac pepcid prilosec rennie fybogel anusol sudocrem insulin
metformin gliclazide glipizide glimepiride glibenclamide glyburide sitagliptin saxagliptin
linagliptin alogliptin vildagliptin pioglitazone rosiglitazone dapagliflozin empagliflozin
canagliflozin ertugliflozin liraglutide semaglutide dulaglutide exenatide tirzepatide lixisenatide
acarbose repaglinide nateglinide glucagon lantus levemir humalog novorapid tresiba glargine
detemir degludec ozempic wegovy mounjaro victoza saxenda trulicity jardiance forxiga farxiga
januvia glucophage levothyroxine thyroxine liothyronine carbimazole methimazole propylthiouracil
synthroid hydrocortisone prednisolone prednisone dexamethasone methylprednisolone betamethasone
triamcinolone fludrocortisone cortisone desmopressin vasopressin cabergoline bromocriptine
somatropin oestradiol estradiol alendronate alendronic risedronate ibandronate zoledronate
zoledronic denosumab teriparatide raloxifene calcitriol alfacalcidol colecalciferol
cholecalciferol ergocalciferol cinacalcet fosamax prolia premarin tibolone levonorgestrel
desogestrel norethisterone norethindrone ethinylestradiol drospirenone medroxyprogesterone
ulipristal mifepristone oxytocin clomifene clomiphene clomid dydrogesterone cyproterone dianette
microgynon cerazette mirena nexplanon levonelle ellaone sertraline citalopram escitalopram
fluoxetine paroxetine fluvoxamine venlafaxine desvenlafaxine duloxetine mirtazapine trazodone
bupropion vortioxetine agomelatine amitriptyline nortriptyline imipramine clomipramine dosulepin
dothiepin lofepramine doxepin phenelzine moclobemide tranylcypromine lithium valproate valproic
lamotrigine carbamazepine oxcarbazepine eslicarbazepine levetiracetam brivaracetam topiramate
zonisamide phenytoin phenobarbital phenobarbitone primidone ethosuximide lacosamide perampanel
cannabidiol clobazam clonazepam diazepam lorazepam midazolam alprazolam temazepam nitrazepam
chlordiazepoxide oxazepam zopiclone zolpidem zaleplon melatonin buspirone pregabalin gabapentin
olanzapine quetiapine risperidone aripiprazole paliperidone clozapine haloperidol chlorpromazine
amisulpride sulpiride lurasidone ziprasidone cariprazine brexpiprazole flupentixol zuclopenthixol
fluphenazine trifluoperazine methylphenidate lisdexamfetamine dexamfetamine dextroamphetamine
amphetamine atomoxetine guanfacine modafinil donepezil rivastigmine galantamine memantine levodopa
carbidopa benserazide madopar sinemet ropinirole pramipexole rotigotine rasagiline selegiline
safinamide entacapone opicapone amantadine apomorphine trihexyphenidyl procyclidine benztropine
sumatriptan zolmitriptan rizatriptan naratriptan eletriptan almotriptan frovatriptan erenumab
galcanezumab fremanezumab pizotifen riluzole baclofen tizanidine dantrolene botulinum botox
pyridostigmine neostigmine interferon natalizumab ocrelizumab fingolimod teriflunomide glatiramer
alemtuzumab cladribine varenicline champix chantix disulfiram antabuse acamprosate nalmefene
suboxone subutex narcan prozac zoloft lexapro cipralex effexor cymbalta wellbutrin xanax valium
ativan klonopin ambien seroquel zyprexa abilify risperdal clozaril lyrica neurontin ritalin
adderall concerta vyvanse elvanse strattera aricept keppra tegretol epilim lamictal depakote
topamax imitrex oxybutynin tolterodine solifenacin fesoterodine trospium darifenacin mirabegron
vibegron sildenafil tadalafil vardenafil avanafil viagra cialis levitra flomax vesicare
isotretinoin roaccutane accutane tretinoin adapalene clobetasol betnovate dermovate tacrolimus
pimecrolimus protopic calcipotriol calcipotriene acitretin ciclosporin cyclosporine secukinumab
ixekizumab guselkumab risankizumab apremilast methotrexate leflunomide mycophenolate
cyclophosphamide sirolimus everolimus etanercept tocilizumab sarilumab abatacept anakinra
baricitinib rituximab belimumab allopurinol febuxostat colchicine probenecid rasburicase humira
enbrel remicade stelara plaquenil cetirizine levocetirizine loratadine desloratadine fexofenadine
chlorphenamine chlorpheniramine diphenhydramine hydroxyzine cyproheptadine acrivastine bilastine
rupatadine cromoglicate cromolyn epipen adrenaline epinephrine zyrtec claritin piriton benadryl
allegra telfast phenergan stemetil zofran latanoprost bimatoprost travoprost tafluprost
dorzolamide brinzolamide brimonidine pilocarpine atropine cyclopentolate tropicamide ranibizumab
aflibercept faricimab propofol ketamine lidocaine lignocaine bupivacaine levobupivacaine
prilocaine etomidate suxamethonium succinylcholine rocuronium vecuronium atracurium sugammadex
sevoflurane desflurane isoflurane noradrenaline norepinephrine dobutamine phenylephrine ephedrine
pseudoephedrine metaraminol glycopyrrolate flumazenil sudafed tamoxifen anastrozole letrozole
exemestane trastuzumab pembrolizumab nivolumab bevacizumab cetuximab imatinib cisplatin
carboplatin oxaliplatin doxorubicin paclitaxel docetaxel fluorouracil capecitabine gemcitabine
vincristine etoposide irinotecan temozolomide hydroxyurea hydroxycarbamide bicalutamide
enzalutamide abiraterone goserelin leuprorelin leuprolide degarelix lenalidomide thalidomide
bortezomib ibrutinib olaparib palbociclib herceptin keytruda opdivo avastin folic ferrous
cyanocobalamin hydroxocobalamin thiamine pabrinex erythropoietin epoetin darbepoetin filgrastim
pegfilgrastim immunoglobulin sevelamer patiromer calpol nurofen tylenol advil motrin aleve panadol
anadin disprin solpadeine voltarol voltaren celebrex oramorph zomorph oxycontin percocet vicodin
keflex cipro bactrim septrin flagyl zithromax amoxil diflucan canesten daktarin lamisil zovirax
valtrex lemsip strepsils gardasil shingrix zostavax bexsero prevenar pneumovax comirnaty spikevax
`;

/** The entries of {@link WORDS}, one per clinical topic name. */
export const CLINICAL_NAMES: ReadonlySet<string> = new Set(
  WORDS.split(/\s+/).filter((w) => w !== ''),
);
