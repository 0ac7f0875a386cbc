# Two commands do everything on a fresh machine with Python 3.11+:
#   make demo   installs podsearch in .venv, indexes the bundled sample and serves it on 127.0.0.1:8080
#   make test   installs podsearch with its test tools (and Chromium when missing) and runs the tests
#   make soak   the long reliability runs (kill -9 x100 and x5 on the site corpus, 60 s load, 50 reindex cycles, the site
#               feeds moving; docs/reliability.md)
#   make opensearch  a real OpenSearch node in the foreground on 127.0.0.1:$(OPENSEARCH_PORT) (default 9200), built
#               from Maven Central jars by the launcher in opensearch/ (needs Java 17 and Maven; docs/opensearch.md)
#   make bench  benchmarks against FTS5, tantivy, more_like, sklearn (CORPORA="site 10k 100k"); make bench-smoke: CI size
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
PORT   ?= 8080
OPENSEARCH_PORT ?= 9200
OPENSEARCH_HOME ?= $(CURDIR)/opensearch/home
OPENSEARCH_HEAP ?= 512m
OPENSEARCH_JAR   = opensearch/target/opensearch-launcher.jar

.PHONY: demo test install install-test browser lint clean soak bench bench-smoke opensearch opensearch-build

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install --quiet -e .

install-test: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'

demo: install
	$(BIN)/podsearch --data index demo --port $(PORT)

browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || \
	  (sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null); }

# the launcher jar and its dependencies in opensearch/target (git-ignored; Maven keeps its downloads in ~/.m2)
$(OPENSEARCH_JAR): opensearch/pom.xml $(shell find opensearch/src -type f 2>/dev/null)
	mvn -q -B -f opensearch/pom.xml package
	@touch $@

opensearch-build: $(OPENSEARCH_JAR)

opensearch: $(OPENSEARCH_JAR)
	OPENSEARCH_PORT=$(OPENSEARCH_PORT) OPENSEARCH_HOME=$(OPENSEARCH_HOME) \
	  java -Xms$(OPENSEARCH_HEAP) -Xmx$(OPENSEARCH_HEAP) -jar $(OPENSEARCH_JAR) $(OPENSEARCH_ARGS)

test: install-test browser opensearch-build
	$(BIN)/python -m pytest -q

bench: install-test
	for c in $(or $(CORPORA),site 10k); do $(BIN)/python -m bench.run --corpus $$c || exit 1; done
	$(BIN)/python -m bench.report

bench-smoke: install-test
	$(BIN)/python -m pytest -q tests/test_bench_smoke.py

soak: install-test
	$(BIN)/python tests/soak/crash.py --runs 100
	$(BIN)/python tests/soak/crash.py --site-kills 5
	$(BIN)/python tests/soak/moves.py
	$(BIN)/python tests/soak/load.py --clients 16 --seconds 60
	$(BIN)/python tests/soak/cycles.py --cycles 50

lint: install-test
	$(BIN)/ruff check src tests

clean:
	rm -rf $(VENV) dist build .pytest_cache opensearch/target
