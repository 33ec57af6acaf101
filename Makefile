# The two commands a newcomer needs: `make run` and `make test`. Everything they need is installed
# by these targets (npm packages; PostgreSQL, Redis and promtool from Debian for the tests).

NPM ?= npm
STAMP := node_modules/.install-stamp

.PHONY: run dev worker speech test lint typecheck format build bench bench-conversations bench-knowledge bench-indexing bench-audit bench-chat bench-voice bench-voice-wer bench-cache bench-ehr bench-llm-usage bench-lexical-candidates bench-search bench-vectors services tools openapi clean

$(STAMP): package.json package-lock.json
	$(NPM) ci --no-audit --no-fund
	@touch $(STAMP)

install: $(STAMP)

build: $(STAMP)
	$(NPM) run --silent build

## Start the service on http://127.0.0.1:8000 with the embedded defaults (PGlite, in-process stores).
run: build speech
	node --enable-source-maps dist/src/main.js

## Start from the TypeScript sources (restart by hand).
dev: $(STAMP)
	npx tsx src/main.ts

## Start only the indexing worker from the build (needs DATABASE_URL; see docs/operations.md).
worker: build
	node --enable-source-maps dist/src/worker-main.js

services:
	bash scripts/ensure-services.sh

## The speech tools of the voice pipeline (Debian: flite, espeak-ng, PocketSphinx and its model).
speech:
	bash scripts/ensure-speech.sh

## Command-line tools the tests call: promtool (Debian package prometheus; its server is not started)
## and Chromium (Debian package chromium, driven by playwright-core in the CORS browser test).
tools:
	bash scripts/ensure-tools.sh
	bash scripts/ensure-speech.sh --tests

typecheck: $(STAMP)
	npx tsc -p tsconfig.json --noEmit

## Type check, ESLint, Prettier, and Redocly's recommended rules on the committed OpenAPI document.
lint: $(STAMP) typecheck
	npx eslint .
	npx prettier --check .
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npx redocly lint --format=summary docs/openapi.json docs/openapi-ops.json

## Rewrite docs/openapi.json from the routes (a test fails while it differs from /openapi.json).
openapi: $(STAMP)
	npx tsx scripts/openapi.ts

format: $(STAMP)
	npx prettier --write .

## Lint, then the whole suite against the real local PostgreSQL and Redis (and PGlite).
test: $(STAMP) services tools lint
	npx vitest run

## Benchmarks of bench/ (needs PostgreSQL and Redis); results are written to BENCHMARKS.md.
bench: $(STAMP) services build
	npx tsx bench/http.ts
	npx tsx bench/conversations.ts
	npx tsx bench/knowledge.ts
	npx tsx bench/indexing-latency.ts
	npx tsx bench/ehr.ts

## Only the conversations benchmark (issue 3; needs PostgreSQL).
bench-conversations: $(STAMP) services
	npx tsx bench/conversations.ts

## Only the knowledge-base benchmark (issue 4: indexing and search; needs PostgreSQL).
bench-knowledge: $(STAMP) services
	npx tsx bench/knowledge.ts

## Only the indexing-latency benchmark (issue 9: API latency while large documents index).
bench-indexing: $(STAMP) services build
	npx tsx bench/indexing-latency.ts

## The audit-log benchmark (issue 12): CSV export and chain verification of 100,000 entries.
bench-audit: $(STAMP) services
	npx tsx --expose-gc bench/audit-log.ts

## The chat benchmark: first chunk over a 20,000-chunk knowledge base, 10,000 idle sockets, 200 turns
## at once (needs PostgreSQL and Redis; about 10 minutes).
bench-chat: $(STAMP) services
	npx tsx bench/chat.ts

## Issue 24: search through the API at 20,000 and 200,000 chunks, embedded and PostgreSQL (about 30 minutes).
bench-search: $(STAMP) services
	npx tsx bench/search-scale.ts

## Issue 24: the embedded dense copy's exact scan against its approximate graph, 20,000, 50,000 and 200,000
## rows (in process, no services; about 5 minutes).
bench-vectors: $(STAMP)
	npx tsx bench/vector-index.ts

## The voice benchmark: latency, barge-in, recognizer speed, overhead, sessions at once and idle CPU
## with the offline providers (needs PostgreSQL, Redis and the speech tools; about 10 minutes).
bench-voice: $(STAMP) services speech
	npx tsx bench/voice.ts

## The recognizer's word error rate with the generic and the knowledge-base models on Flite's voices,
## eSpeak NG's voices and a person's recordings (Debian's Asterisk prompts); installs SoX, the
## recordings and spandsp's G.722 decoder when absent (skipping their rows if it cannot). About 25
## minutes on an idle 2-core machine, several times that when the machine is busy.
bench-voice-wer: $(STAMP)
	bash scripts/ensure-speech.sh --bench
	npx tsx bench/voice-wer.ts

## Cache and flags (issue 12): flag evaluations and cached user lookups against a Map lookup.
bench-cache: $(STAMP) services
	npx tsx bench/admin-cache.ts

## EHR (issue 13): patient summary through the service against the FHIR server called directly,
## and the time from the provider's recovery to a CLOSED circuit breaker.
bench-ehr: $(STAMP) services
	npx tsx bench/ehr.ts

## LLM token totals (issue 22 item 6): what the trigger keeping them costs answers being stored,
## and what the admin panel's read costs after a year of answers (needs PostgreSQL).
bench-llm-usage: $(STAMP) services
	npx tsx bench/llm-usage.ts

## Issue 24: ranked lexical index candidates (in-process libraries, own postings, LanceDB, PostgreSQL
## with RUM) on the same chunks, at 20,000 and 200,000 chunks. The bench is its own package: its
## dependencies are installed under bench/lexical-candidates, not the service's. Needs PostgreSQL
## with the Debian package postgresql-15-rum (its row reports the error otherwise). Under 30 min.
bench-lexical-candidates: $(STAMP) services
	$(NPM) ci --prefix bench/lexical-candidates --no-audit --no-fund
	npx tsc -p bench/lexical-candidates/tsconfig.json --noEmit
	npx tsx bench/lexical-candidates/run.ts

clean:
	rm -rf dist node_modules/.install-stamp
