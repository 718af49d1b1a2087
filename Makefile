# Frontiers of Optimization. `make book` and `make test` work on a fresh machine.
SHELL := /bin/bash
PY    ?= python3
VENV  := .venv
BIN   := $(VENV)/bin
STAMP := $(VENV)/.installed
# Small matrices: threaded BLAS only adds overhead on 2 cores (100x slower under load).
export OPENBLAS_NUM_THREADS := 1
export OMP_NUM_THREADS := 1
export MKL_NUM_THREADS := 1

.PHONY: book test unit browser lab chromium serve notebooks student-notebooks bench clean page warm record-verdicts

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch pinned to the CPU wheel; an unpinned torch pulls a multi-GB CUDA build.
	$(BIN)/pip install -q "torch==2.13.0"
	$(BIN)/pip install -q -e ".[book,test]"
	touch $(STAMP)

# plotly.js for the figure script (_assets/optbook-figures.js), which loads the smallest bundle that
# draws a page's trace types: plotly's partial bundles (npm packages plotly.js-<name>-dist-min,
# fetched with npm at the version of the full bundle in the plotly wheel), else the full one.
# Where npm cannot be reached, the full bundle stands in for a partial one (the same figures, heavier).
PLOTLY_DIR := _assets/plotly
PLOTLY_JS  := $(PLOTLY_DIR)/plotly.min.js $(PLOTLY_DIR)/plotly-cartesian.min.js $(PLOTLY_DIR)/plotly-gl3d.min.js

$(PLOTLY_DIR)/plotly.min.js: $(STAMP)
	mkdir -p $(PLOTLY_DIR)
	cp "$$($(BIN)/python -c 'import plotly, pathlib; print(pathlib.Path(plotly.__file__).parent / "package_data" / "plotly.min.js")')" $@

$(PLOTLY_DIR)/plotly-%.min.js: $(PLOTLY_DIR)/plotly.min.js
	@v=$$($(BIN)/python -c 'from plotly.offline import get_plotlyjs_version as v; print(v())'); \
	tmp=$$(mktemp -d); \
	if (cd "$$tmp" && timeout 120 npm pack --silent "plotly.js-$*-dist-min@$$v") >/dev/null 2>&1 \
	   && tar -xzf "$$tmp"/*.tgz -C "$$tmp" && test -s "$$tmp/package/plotly-$*.min.js"; then \
	  cp "$$tmp/package/plotly-$*.min.js" $@; echo "plotly-$*.min.js $$v from npm"; \
	else \
	  echo "npm could not fetch plotly.js-$*-dist-min@$$v: the full bundle stands in"; cp $< $@; \
	fi; rm -rf "$$tmp"

_assets/mathjax/tex-chtml.js: $(STAMP)
	rm -rf _assets/mathjax
	cp -r "$$($(BIN)/python -c 'import mathjax, pathlib; print(pathlib.Path(mathjax.__path__[0]) / "static" / "mathjax" / "es5")')" _assets/mathjax
	touch $@

# The execution cache keys on notebook code only, not on src/ nor on the installed packages: drop it
# whenever src/ or any installed version changed (`pip freeze`, our own editable install left out, as
# src/ covers it), and Sphinx's saved environment with it (else Sphinx sees no changed page and
# executes nothing): a dependency upgrade that moves a number re-executes every chapter.
# Chapters record their full-size claim results in _build/claims for the scoreboard page; only the
# build sets OPTBOOK_CLAIMS_DIR, so the fast results of `make unit` never stand in for them.
book: $(STAMP) $(PLOTLY_JS) _assets/mathjax/tex-chtml.js warm
	@hash=$$({ find src pyproject.toml -type f \( -name '*.py' -o -name '*.txt' -o -name pyproject.toml \) | sort | xargs cat; \
	          $(BIN)/pip freeze --exclude-editable; } | sha256sum | cut -c1-16); \
	if [ "$$(cat _build/.src-hash 2>/dev/null)" != "$$hash" ]; then \
	  echo "src/ or the installed packages changed: re-executing every chapter"; \
	  rm -rf _build/.jupyter_cache _build/claims _build/.doctrees; \
	fi; \
	mkdir -p _build; \
	OPTBOOK_BUILD=1 OPTBOOK_CLAIMS_DIR=$(CURDIR)/_build/claims $(BIN)/jupyter-book build . -W -n --keep-going || { \
	  for f in _build/html/reports/*.log; do [ -f "$$f" ] && { echo "== $$f"; cat "$$f"; }; done; exit 1; }; \
	echo "$$hash" > _build/.src-hash

# One chapter as a stand-alone page (seconds, not a whole book): make page CH=01 (or CH=intro), then
# .venv/bin/python tools/shoot.py on the page it prints for desktop/phone, light/dark screenshots.
page: $(STAMP) $(PLOTLY_JS) _assets/mathjax/tex-chtml.js warm
	@test -n "$(CH)" || { echo "usage: make page CH=NN"; exit 2; }
	@src=$$(ls book/part*/$(CH)-*.md book/$(CH).md 2>/dev/null | head -1); test -n "$$src" || { echo "no chapter $(CH)"; exit 2; }; \
	page=_build/_page/$$(echo "$${src%.md}" | tr / -); rm -rf "$$page"; mkdir -p _build; \
	OPTBOOK_BUILD=1 $(BIN)/jupyter-book build "$$src" --config _config.yml >_build/page.log 2>&1 || exit 1; \
	out=$$page/html; cp -r _assets/. "$$out/_static/"; \
	echo "$$out/$$(basename "$${src%.md}").html"

# Part VII's tiny language models, trained once and cached (~/.cache/optbook, or $$OPTBOOK_CACHE)
# before any chapter or test asks for them (each would otherwise train its own); a no-op once cached.
warm: $(STAMP)
	$(BIN)/python -m optbook warm

unit: $(STAMP) warm
	$(BIN)/python -m pytest -m "not book and not lab" -q

# Debian's chromium drives the browser and JupyterLab tests: where it is missing, one line says how to
# install it (as root, it is installed), before the long build rather than deep inside a test.
chromium:
	@tools/need-chromium.sh

browser: $(STAMP) chromium
	$(BIN)/python -m pytest -m book -q

# The live explorers in a real JupyterLab (the Binder experience): chapters run, a slider moved,
# screenshots in _build/lab-shots.
lab: $(STAMP) chromium warm
	$(BIN)/python -m pytest -m lab -q

test: chromium unit book browser lab

serve:
	$(BIN)/python -m http.server --directory _build/html 8000

# The .ipynb twins in plain Jupyter Markdown (src/optbook/twins.py), glued numbers from the last
# executed build's cache; first the launch setting (_config.yml repository:) goes into the
# chapters' Colab install cells and the README (src/optbook/launch.py).
notebooks: $(STAMP)
	$(BIN)/python -m optbook twins

# Copies for students, solutions removed (src/optbook/student.py); never written over a source.
student-notebooks: $(STAMP)
	$(BIN)/python -m optbook student --out _build/student

# The full-size claim results of the last `make book` (_build/claims) recorded as
# book/verdicts/<date>.json, with the package versions they were measured with; commit the file, and
# the scoreboard shows every later change of verdict or headline figure against it. Where no build
# left results, RUN=1 runs every claim at full size here instead (long).
record-verdicts: $(STAMP)
	$(BIN)/python -m optbook verdicts record --from _build/claims --out book/verdicts $(if $(RUN),--run)

bench: $(STAMP)
	$(BIN)/python -m optbook bench

clean:
	rm -rf _build $(PLOTLY_DIR) _assets/mathjax
