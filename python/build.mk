# The Python package (python/): `make python` installs it into a venv of
# Debian's python3 (build/python/venv, with --system-site-packages for
# psycopg) for trying it and for `make bench-python`; tests/python/run.sh
# builds its own in a fresh venv from a clean copy of the sources. Included
# by the top Makefile, whose variables it uses.

PY_VENV := $(BUILD)/python/venv
PY_SRC := $(wildcard python/src/*.c python/src/*.h python/amq/*.py python/amq/*.pyi) \
	python/setup.py python/pyproject.toml

# make test builds it for the benchmark's smoke run (tests/bench/run.sh).
TEST_BINARIES += $(PY_VENV)/.installed

.PHONY: python bench-python

python: $(PY_VENV)/.installed

# pip builds in a copy, so python/ stays free of build output (python/build,
# not every "build": core/build/ is source).
$(PY_VENV)/.installed: $(PY_SRC) $(CORE_SRC) $(CORE_HDR) $(SQLITE_SRC) $(SQLITE_HDR)
	@rm -rf $(PY_VENV) $(BUILD)/python/src
	$(PYTHON) -m venv --system-site-packages $(PY_VENV)
	@mkdir -p $(BUILD)/python/src
	tar -cf - --exclude=python/build --exclude='*.egg-info' --exclude=__pycache__ \
	  core sqlite python | tar -xf - -C $(BUILD)/python/src
	AMQ_WERROR=1 $(PY_VENV)/bin/python -m pip install -q --no-build-isolation \
	  --no-index $(BUILD)/python/src/python
	@touch $@

bench-python: $(PY_VENV)/.installed $(BUILD)/amq.so
	@bash bench/python/run.sh $(PY_VENV)/bin/python $(BUILD)/amq.so
