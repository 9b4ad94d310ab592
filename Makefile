# Thin wrappers over CMake presets. PRESET=ci makes warnings errors.
#   make run    the main job: installs only the CLI's build dependencies, builds only `gpusage`, prints the guide
#   make test   installs everything, builds every target (LibTorch bench, tests, benchmarks) and runs the tests
#   make bench  the same dependencies as test; builds gpusage and the LibTorch gpusage-bench
#   make wheel  dist/gpusage-VERSION-py3-none-manylinux_2_34_x86_64.whl: gpusage-portable (glibc alone) and
#               the Python package; make package: the .deb and the tarball of it (README "Install")
PRESET ?= dev
JOBS ?= $(shell nproc)
# ctest runs two tests a core: many of them mostly wait (on gpusage's child processes, Prometheus, Chromium,
# tmux), and the suite's wall time drops by a tenth or more on 2 cores (README "What the build takes").
CTEST_JOBS ?= $(shell echo $$(( $$(nproc) * 2 )))
BUILD_DIR := build/$(PRESET)
GPUSAGE := $(BUILD_DIR)/src/cli/gpusage
ALL_TARGETS := -DGPUSAGE_BUILD_TESTS=ON -DGPUSAGE_BUILD_BENCH=ON -DGPUSAGE_BUILD_BENCHMARKS=ON

.PHONY: deps deps-run deps-portable configure configure-run configure-portable build build-run test golden bench run report docs-report package wheel clean

deps:
	scripts/install-deps --test

deps-run:
	scripts/install-deps --run

deps-portable:
	scripts/install-deps --portable

# The presets use Ninja (it starts a target's compiles while the libraries it links are still building). A build
# tree that the Makefile generator made cannot be reconfigured with another generator: it is removed first.
define drop-makefile-tree
	@if grep -qs '^CMAKE_GENERATOR:INTERNAL=Unix Makefiles' $(BUILD_DIR)/CMakeCache.txt; then \
	  echo "make: $(BUILD_DIR) was generated for Unix Makefiles, the presets use Ninja: removing it"; \
	  rm -rf $(BUILD_DIR); fi
endef

configure: deps
	$(drop-makefile-tree)
	cmake --preset $(PRESET) $(ALL_TARGETS)

# A build tree made by `make run` has only the CLI; one that exists already keeps its options (so `make run`
# after `make test` reconfigures nothing and rebuilds nothing).
configure-run: deps-run
	$(drop-makefile-tree)
	@test -f $(BUILD_DIR)/CMakeCache.txt || cmake --preset $(PRESET) \
	  -DGPUSAGE_BUILD_TESTS=OFF -DGPUSAGE_BUILD_BENCH=OFF -DGPUSAGE_BUILD_BENCHMARKS=OFF

# gpusage-portable's tree: a new one has only the CLI; one that exists is configured again, so that it sees the
# static archives and cpp-httplib's source that install-deps --portable just put in place (cmake/Portable.cmake).
configure-portable: deps-portable
	$(drop-makefile-tree)
	@if test -f $(BUILD_DIR)/CMakeCache.txt; then cmake $(BUILD_DIR) >/dev/null; else cmake --preset $(PRESET) \
	  -DGPUSAGE_BUILD_TESTS=OFF -DGPUSAGE_BUILD_BENCH=OFF -DGPUSAGE_BUILD_BENCHMARKS=OFF; fi

build: configure
	cmake --build --preset $(PRESET) -j $(JOBS)

build-run: configure-run
	cmake --build --preset $(PRESET) -j $(JOBS) --target gpusage

test: build
	ctest --preset $(PRESET) -j $(CTEST_JOBS)

# Rewrites tests/golden/expected/ from the current binary (after a deliberate change of output or of a model
# figure), then checks that a second run matches what it wrote (nothing that varies is left unscrubbed).
# Review the result with `git diff tests/golden` before committing it. Another build tree:
# GPUSAGE_GOLDEN_UPDATE=1 ctest --test-dir DIR -L golden.
golden: configure
	cmake --build --preset $(PRESET) -j $(JOBS) --target gpusage test_golden
	GPUSAGE_GOLDEN_UPDATE=1 ctest --preset $(PRESET) -L golden
	ctest --preset $(PRESET) -L golden
	@git status --short -- tests/golden/expected

bench: configure
	cmake --build --preset $(PRESET) -j $(JOBS) --target gpusage gpusage-bench

# The main job: which RTX 50 card, and how fast ResNet-50 trains on each.
run: build-run
	$(GPUSAGE) guide --chart gpusage-guide.svg

# The same comparison as one self-contained HTML page with charts (opens offline): gpusage-report.html.
report: build-run
	$(GPUSAGE) report --out gpusage-report.html

# The page and screenshot the README links, rendered in headless Chromium on the way (web/check-report.mjs).
docs-report: build
	$(GPUSAGE) report --out docs/report/gpusage-report.html
	node web/check-report.mjs docs/report/gpusage-report.html --screenshot docs/report/gpusage-report.png \
	  --max-height 2500 >/dev/null

# dist/gpusage_VERSION_amd64.deb (Depends: libc6 alone) and dist/gpusage-VERSION-linux-x86_64.tar.gz: the
# portable gpusage, its data, man page and completions (cmake/Install.cmake). gpusage-bench is never in them.
package: configure-portable
	cmake --build --preset $(PRESET) -j $(JOBS) --target gpusage-portable gpusage_docs
	cd $(BUILD_DIR) && cpack -B $(CURDIR)/dist
	rm -rf dist/_CPack_Packages

# dist/gpusage-VERSION-py3-none-manylinux_2_34_x86_64.whl: the portable binary, gpusage-trace and the Python
# API (README, Install), written by scripts/build-wheel with any python3 >= 3.9 (the standard library alone).
wheel: configure-portable
	cmake --build --preset $(PRESET) -j $(JOBS) --target gpusage-portable
	scripts/build-wheel $(BUILD_DIR) dist

clean:
	rm -rf build
