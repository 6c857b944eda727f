# Quickstart on a fresh Debian 12 machine (as root):
#   make run    install what the run needs, build the `ccltune` binary only, run a local
#               4-rank tuning job (host backend)
#   make test   install what the suite needs too, build everything, run the whole ctest suite
# Both use $(BUILD) with the same compiler flags. `make run` configures it (when it is not yet)
# without the tests, the controller and CUDA: the host backend needs none of them, and the CUDA
# kernels alone take minutes to compile on 2 cores. `make test` turns the three on in the same
# tree, so it compiles only what `make run` did not (the worker's backend factory is the one
# file of the run that the CUDA build changes); `make run` after `make test` reuses that tree.
BUILD ?= build
JOBS ?= $(shell nproc)
RANKS ?= 4
# What building and running `ccltune tune --backend host` needs: the compiler and cmake, the
# libraries the root CMakeLists.txt finds, and redis-server (its private cache).
RUN_PACKAGES := build-essential cmake ninja-build pkg-config libhiredis-dev redis-server libssl-dev \
  prometheus-cpp-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev
# `make image` and the `image` tests (manifests/image/build-image.sh): Debian rootfs, OCI
# packing, OCI runtime. In TEST_PACKAGES because `make test` runs the image test; defined
# before it, since `:=` expands it there.
IMAGE_PACKAGES := mmdebstrap umoci runc
# What the test suite adds: the controller's cpprestsdk, GoogleTest, real Prometheus and
# Pushgateway, the simulator's Kubernetes client, clang for the fuzzers, Chromium for the
# report's browser test, the image tools.
TEST_PACKAGES := libcpprest-dev prometheus prometheus-pushgateway python3-kubernetes \
  libgtest-dev libgmock-dev zlib1g-dev clang-14 libclang-rt-14-dev chromium $(IMAGE_PACKAGES)
DEB_PACKAGES := $(RUN_PACKAGES) $(TEST_PACKAGES)
# Both trees compile -O2 without debug info: debug info made the compile about 40 % slower
# (CLI11's and cpprestsdk's templates), and one set of flags lets `make test` reuse what `make
# run` compiled. DEBUG=1 puts -g back (on a tree configured anew, or by `make reconfigure`).
DEBUG ?= 0
OPT_FLAGS := $(if $(filter 1,$(DEBUG)),-O2 -g -DNDEBUG,-O2 -DNDEBUG)
COMMON_CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO='$(OPT_FLAGS)' \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='$(OPT_FLAGS)' -DCMAKE_CUDA_FLAGS_RELWITHDEBINFO='$(OPT_FLAGS)'
RUN_CMAKE_FLAGS := -DCCLTUNE_BUILD_TESTS=OFF -DCCLTUNE_BUILD_CONTROLLER=OFF -DCCLTUNE_WITH_CUDA=OFF \
  $(COMMON_CMAKE_FLAGS)
FULL_CMAKE_FLAGS := -DCCLTUNE_BUILD_TESTS=ON -DCCLTUNE_BUILD_CONTROLLER=ON -DCCLTUNE_WITH_CUDA=ON \
  $(COMMON_CMAKE_FLAGS)
# ctest's parallel jobs: most tests wait on processes, sockets and deadlines rather than
# compute, so twice the cores keeps both busy; of them at most two are heavy (many processes
# against deadlines, or a compile: the `heavy` resource of tests/ctest-resources.json).
# A new tree is configured for Ninja: it starts a target's compiles before the targets it links
# are linked, which keeps both cores busy behind the long CUDA and cpprestsdk compiles. A tree
# configured before (by hand, or for Make) keeps its generator.
new-tree-flags = $(if $(wildcard $(1)/CMakeCache.txt),,-G Ninja)
NEW_TREE_FLAGS = $(call new-tree-flags,$(BUILD))
TEST_JOBS ?= $(shell echo $$(( $(JOBS) * 2 )))
PREFIX ?= /usr/local
# `make image` packs $(BUILD) as it is: the cuda variant where a CUDA toolkit was found (as on
# the machines here), host otherwise. VARIANT=host builds a CUDA-off tree in $(BUILD)-host.
VARIANT ?=
IMAGE_BUILD := $(if $(filter host,$(VARIANT)),$(BUILD)-host,$(BUILD))

.PHONY: deps deps-run configure configure-run reconfigure build run test install image clean

# install-missing PACKAGES: apt-get install those of PACKAGES not installed yet.
define install-missing
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" -ne 0 ]; then echo "error: missing Debian packages:$$missing (run as root or install them)"; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

deps-run:
	$(call install-missing,$(RUN_PACKAGES))

deps:
	$(call install-missing,$(DEB_PACKAGES))
	@command -v kubectl >/dev/null || { [ "$$(id -u)" -eq 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubernetes-client; } || true

# A tree configured by `make test` (or by hand) is kept as it is.
configure-run: deps-run
	@[ -f $(BUILD)/CMakeCache.txt ] || cmake -S . -B $(BUILD) $(NEW_TREE_FLAGS) $(RUN_CMAKE_FLAGS)

# Turns on the tests, the controller and CUDA in a tree that `make run` configured.
configure: deps
	@grep -q '^CCLTUNE_BUILD_TESTS:BOOL=ON$$' $(BUILD)/CMakeCache.txt 2>/dev/null || \
	  cmake -S . -B $(BUILD) $(NEW_TREE_FLAGS) $(FULL_CMAKE_FLAGS)

# Configures the full tree anew with this Makefile's flags (DEBUG=1: with -g).
reconfigure: deps
	cmake -S . -B $(BUILD) $(NEW_TREE_FLAGS) $(FULL_CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: configure-run
	cmake --build $(BUILD) -j $(JOBS) --target ccltune
	$(BUILD)/worker/ccltune tune --ranks $(RANKS) --backend host

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(TEST_JOBS) --timeout 600 \
	  --resource-spec-file $(CURDIR)/tests/ctest-resources.json

# `ccltune`, the libraries and (where built) the controller under $(PREFIX): after `make run`
# the docs' bare `ccltune` is `$(BUILD)/worker/ccltune`, or this. Builds the tree's every
# target first (cmake --install needs them all).
install: configure-run
	cmake --build $(BUILD) -j $(JOBS)
	cmake --install $(BUILD) --prefix $(PREFIX)

image: $(if $(filter host,$(VARIANT)),deps,build)
ifeq ($(VARIANT),host)
	cmake -S . -B $(IMAGE_BUILD) $(call new-tree-flags,$(IMAGE_BUILD)) $(COMMON_CMAKE_FLAGS) -DCCLTUNE_WITH_CUDA=OFF \
	  -DCCLTUNE_BUILD_TESTS=OFF
	cmake --build $(IMAGE_BUILD) -j $(JOBS)
else ifneq ($(VARIANT),)
	$(error VARIANT must be empty (the build tree's own) or host, not '$(VARIANT)')
endif
	bash manifests/image/build-image.sh --build $(IMAGE_BUILD) --out $(BUILD)/image

clean:
	rm -rf $(BUILD) $(BUILD)-host
