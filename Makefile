# One command to run the app, one to run the tests. Both create .venv on first use.
#
# TORCH_INDEX picks the torch build: leave it empty to take torch from your default index
# (on this project's CI machines that is a local CPU wheel), or set it, for example
#   make run TORCH_INDEX=https://download.pytorch.org/whl/cpu      (CPU only, ~200 MB)
#   make run TORCH_INDEX=https://download.pytorch.org/whl/cu128    (CUDA 12.8)
PYTHON ?= python3
VENV ?= .venv
TORCH_VERSION ?= 2.13.0
TORCH_INDEX ?=
BIN := $(VENV)/bin
STAMP := $(VENV)/.studyapp-installed

.PHONY: run test check bench clean

# The first install takes minutes (torch is large): each step is announced and pip shows its
# downloads, so it is never silent. Later runs skip straight to the app.
$(STAMP): pyproject.toml
	@echo "==> creating $(VENV) (first run only)"
	@$(PYTHON) -m venv $(VENV)
	@echo "==> installing torch $(TORCH_VERSION) for the drill grader: the largest download, a few minutes"
	@$(BIN)/python -m pip install --progress-bar on "torch==$(TORCH_VERSION)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX) --extra-index-url https://pypi.org/simple)
	@echo "==> installing studyapp and its other dependencies"
	@$(BIN)/python -m pip install --progress-bar on -e ".[test,optimizer]"
	@touch $(STAMP)
	@echo "==> installed into $(VENV)"

run: $(STAMP)
	$(BIN)/studyapp $(ARGS)

# The promises of the house style that a tool can keep: lint, the import contracts
# (the domain never imports Textual; the UI process never imports torch) and the types
# (mypy reads its settings from pyproject.toml), then the suite.
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

test: check
	$(BIN)/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache
