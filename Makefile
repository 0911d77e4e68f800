# Thin wrapper over CMake (like neovim's): `make run`, `make test`, `make bench`.
# Every target first installs missing Debian packages via docker/install-deps.sh.

BUILD     ?= build
BUILD_TYPE ?= RelWithDebInfo
CMAKE_FLAGS ?=
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
ARGS      ?=

.PHONY: all deps build run test bench sanitize fuzz clean format

all: build

deps:
	@sh docker/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/xrgate $(ARGS)

# `make test`: the whole suite, then a fuzzing smoke of every libFuzzer target
# (TEST_FUZZ_SECONDS each, ASan+UBSan; TEST_FUZZ_SECONDS=0 skips it)
TEST_FUZZ_SECONDS ?= 10
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --repeat until-pass:2 $(ARGS)
	@if [ "$(TEST_FUZZ_SECONDS)" != "0" ]; then $(MAKE) --no-print-directory fuzz SECONDS=$(TEST_FUZZ_SECONDS); fi

bench: build
	cmake --build $(BUILD) --target bench

sanitize:
	$(MAKE) test BUILD=build-asan BUILD_TYPE=Debug CMAKE_FLAGS="-DXRGATE_SANITIZE=ON" TEST_FUZZ_SECONDS=0

# make fuzz SECONDS=N: every libFuzzer target N seconds (ASan+UBSan, clang) in build-fuzz/
SECONDS_EACH ?= $(or $(SECONDS),20)
fuzz: deps
	@sh docker/install-deps.sh --fuzz
	cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
	  -DXRGATE_FUZZ=ON -DXRGATE_SANITIZE=ON
	cmake --build build-fuzz --target fuzzers -j $(JOBS)
	sh tests/fuzz/run.sh build-fuzz $(SECONDS_EACH)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)
