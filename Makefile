# Thin wrappers over CMake presets. PRESET=ci makes warnings errors.
PRESET ?= dev
JOBS ?= $(shell nproc)
BUILD_DIR := build/$(PRESET)
GPUSAGE := $(BUILD_DIR)/src/cli/gpusage

.PHONY: deps configure build test run clean

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

clean:
	rm -rf build
