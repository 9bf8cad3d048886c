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

.PHONY: run test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet "torch==$(TORCH_VERSION)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX) --extra-index-url https://pypi.org/simple)
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/studyapp $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache
