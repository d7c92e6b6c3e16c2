# The two commands of the README's Quick start, and the steps they are made of.
#   make demo   set up .venv, build and install tilecc, run the demonstration
#   make test   set up .venv with the test tools, lint, run the C++ and Python test suites
#   make docs   build the documentation site (MkDocs) into build/site, warnings as errors
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
JOBS ?= 2
SOURCES := $(shell find include src python CMakeLists.txt pyproject.toml -type f \
             \( -name '*.hpp' -o -name '*.cpp' -o -name '*.py' -o -name '*.txt' -o -name '*.toml' \) 2>/dev/null)
CXX_SOURCES := $(shell find include src python/bindings tests/cpp -name '*.hpp' -o -name '*.cpp' 2>/dev/null)

.PHONY: demo docs test lint test-cpp test-cpp-sanitized test-python bench clean

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "scikit-build-core>=0.10" "nanobind>=2.4" "mpich>=4.2" "mpi4py>=4.0"
	touch $@

# Development builds: for this machine's CPU, warnings as errors (a wheel or `pip install .` is
# portable and lenient; see CMakeLists.txt).
DEV_FLAGS := -DTILECC_NATIVE=ON -DTILECC_WERROR=ON

# Reinstalled whenever a source changes; the CMake build directory in build/ makes it incremental.
# The demo needs tilecc alone; the tests (and lint, docs) its test extra as well.
INSTALL := CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(PY) -m pip install --quiet --no-build-isolation \
	  -C cmake.define.TILECC_NATIVE=ON -C cmake.define.TILECC_WERROR=ON

$(VENV)/.installed-run: $(VENV)/.created $(SOURCES)
	$(INSTALL) .
	touch $@

$(VENV)/.installed: $(VENV)/.created $(SOURCES)
	$(INSTALL) ".[test]"
	touch $@ $(VENV)/.installed-run

demo: $(VENV)/.installed-run
	$(VENV)/bin/tilecc info
	$(VENV)/bin/tilecc run examples/molecules/water.xyz --basis cc-pvdz --method "ccsd(t)"

docs: $(VENV)/.installed
	$(VENV)/bin/mkdocs build --strict --quiet

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check python tests benchmarks examples tools
	$(VENV)/bin/ruff format --check python tests benchmarks examples tools
	$(VENV)/bin/mypy
	$(VENV)/bin/clang-format --dry-run -Werror $(CXX_SOURCES)

build/cpp/tilecc_tests: $(VENV)/.installed $(CXX_SOURCES)
	cmake -S . -B build/cpp -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILECC_BUILD_TESTS=ON $(DEV_FLAGS) \
	  -DTILECC_BUILD_PYTHON=OFF -DTILECC_MPI_PREFIX="$(abspath $(VENV))" \
	  -DTILECC_BLAS_LIBRARY="$$($(PY) -c 'import tilecc._blas as b; print(b.default_library())')"
	cmake --build build/cpp -j $(JOBS)

test-cpp: build/cpp/tilecc_tests
	cd build/cpp && ctest --output-on-failure --timeout 300

# The same tests on a core built with AddressSanitizer and UndefinedBehaviorSanitizer (sizes that
# overflow, reads past a block, undefined arithmetic), unoptimised but with assertions on, and
# portable (no -march=native: the run-time choice of AVX-512 / AVX2 / baseline loops is tested).
build/asan/tilecc_tests: $(VENV)/.installed $(CXX_SOURCES)
	cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTILECC_BUILD_TESTS=ON \
	  -DTILECC_BUILD_PYTHON=OFF -DTILECC_SANITIZE=ON -DTILECC_NATIVE=OFF -DTILECC_WERROR=ON \
	  -DTILECC_MPI_PREFIX="$(abspath $(VENV))" \
	  -DTILECC_BLAS_LIBRARY="$$($(PY) -c 'import tilecc._blas as b; print(b.default_library())')"
	cmake --build build/asan -j $(JOBS)

test-cpp-sanitized: build/asan/tilecc_tests
	cd build/asan && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure --timeout 600

test-python: $(VENV)/.installed
	$(PY) -m pytest -q --doctest-modules tests/python --pyargs tilecc

test: lint test-cpp test-cpp-sanitized test-python

bench: $(VENV)/.installed
	$(PY) benchmarks/contract/run.py

clean:
	rm -rf build $(VENV)
