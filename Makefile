# Thin wrapper over CMake (like neovim's): `make run`, `make test`, `make bench`.
# Every target first installs missing Debian packages via docker/install-deps.sh: `make run` only
# what building and running the gateway needs, the others the test packages too.

BUILD     ?= build
BUILD_TYPE ?= RelWithDebInfo
CMAKE_FLAGS ?=
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
ARGS      ?=

PREFIX    ?= /usr/local
DESTDIR   ?=

.PHONY: all deps deps-build build run install test bench sanitize fuzz clean format

all: build

deps:
	@sh docker/install-deps.sh

deps-build:
	@sh docker/install-deps.sh --build

# `make build` / `make test` configure with the tests (XRGATE_TESTS=ON), also in a build dir
# that `make run` configured without them.
build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DXRGATE_TESTS=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

# `make run`: only the gateway. A fresh build dir is configured without the tests (no test
# packages needed); one that is already configured keeps its settings.
run: deps-build
	@[ -f $(BUILD)/CMakeCache.txt ] || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DXRGATE_TESTS=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD) --target xrgate -j $(JOBS)
	./$(BUILD)/xrgate $(ARGS)

# `make install [PREFIX=/usr/local] [DESTDIR=...]`: the gateway (bin/xrgate) and its man pages
# xrgate(8) and xrgate.yaml(5) (share/man). Builds only the gateway, as `make run` does.
install: deps-build
	@[ -f $(BUILD)/CMakeCache.txt ] || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DXRGATE_TESTS=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD) --target xrgate -j $(JOBS)
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

# `make test`: the whole suite, then a fuzzing smoke of every libFuzzer target
# (TEST_FUZZ_SECONDS each, ASan+UBSan; TEST_FUZZ_SECONDS=0 skips it). No retries: a test that
# fails once fails the suite (tests wait on conditions, never on wall-clock luck).
TEST_FUZZ_SECONDS ?= 10
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(ARGS)
	@if [ "$(TEST_FUZZ_SECONDS)" != "0" ]; then $(MAKE) --no-print-directory fuzz SECONDS=$(TEST_FUZZ_SECONDS); fi

bench: build
	cmake --build $(BUILD) --target bench

# the same suite under ASan+UBSan, without the container test (label "container": it checks
# the Release image, which `make test` has already built and run)
sanitize:
	$(MAKE) test BUILD=build-asan BUILD_TYPE=Debug CMAKE_FLAGS="-DXRGATE_SANITIZE=ON" \
	  TEST_FUZZ_SECONDS=0 ARGS="-LE container $(ARGS)"

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
