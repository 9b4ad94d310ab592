# Thin wrappers over CMake presets. PRESET=ci makes warnings errors.
PRESET ?= dev
JOBS ?= $(shell nproc)
BUILD_DIR := build/$(PRESET)
GPUSAGE := $(BUILD_DIR)/src/cli/gpusage

.PHONY: deps configure build test run report docs-report clean

deps:
	scripts/install-deps

configure: deps
	cmake --preset $(PRESET)

build: configure
	cmake --build --preset $(PRESET) -j $(JOBS)

test: build
	ctest --preset $(PRESET) -j $(JOBS)

# The main job: which RTX 50 card, and how fast ResNet-50 trains on each.
run: build
	$(GPUSAGE) guide --chart gpusage-guide.svg

# The same comparison as one self-contained HTML page with charts (opens offline): gpusage-report.html.
report: build
	$(GPUSAGE) report --out gpusage-report.html

# The page and screenshot the README links, rendered in headless Chromium on the way (web/check-report.mjs).
docs-report: build
	$(GPUSAGE) report --out docs/report/gpusage-report.html
	node web/check-report.mjs docs/report/gpusage-report.html --screenshot docs/report/gpusage-report.png \
	  --max-height 2500 >/dev/null

clean:
	rm -rf build
