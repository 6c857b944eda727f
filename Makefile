# Quickstart on a fresh Debian 12 machine (as root):
#   make run    install what the run needs, build the `ccltune` binary only, run a local
#               4-rank tuning job (host backend)
#   make test   install what the suite needs too, build everything, run the whole ctest suite
# Both use $(BUILD). `make run` configures it (when it is not yet) without the tests, the
# controller and CUDA: the host backend needs none of them, and the CUDA kernels alone take
# minutes to compile on 2 cores. `make test` (re)configures it with all three (CUDA where a
# toolkit is found) and debug info, so after `make run` it compiles everything again (about
# as long as `make test` alone); `make run` after `make test` reuses that tree.
BUILD ?= build
JOBS ?= $(shell nproc)
RANKS ?= 4
# What building and running `ccltune tune --backend host` needs: the compiler and cmake, the
# libraries the root CMakeLists.txt finds, and redis-server (its private cache).
RUN_PACKAGES := build-essential cmake pkg-config libhiredis-dev redis-server libssl-dev \
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
# The run's tree also compiles without -g (same -O2): debug info made its compile 40 % slower
# (CLI11's templates), and a first run needs none. `make test` puts -g back (-U: CMake's default).
NO_DEBUG_INFO := -DCMAKE_C_FLAGS_RELWITHDEBINFO='-O2 -DNDEBUG' -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O2 -DNDEBUG'
RUN_CMAKE_FLAGS := -DCCLTUNE_BUILD_TESTS=OFF -DCCLTUNE_BUILD_CONTROLLER=OFF -DCCLTUNE_WITH_CUDA=OFF \
  $(NO_DEBUG_INFO)
FULL_CMAKE_FLAGS := -DCCLTUNE_BUILD_TESTS=ON -DCCLTUNE_BUILD_CONTROLLER=ON -DCCLTUNE_WITH_CUDA=ON \
  -UCMAKE_C_FLAGS_RELWITHDEBINFO -UCMAKE_CXX_FLAGS_RELWITHDEBINFO
# `make image` packs $(BUILD) as it is: the cuda variant where a CUDA toolkit was found (as on
# the machines here), host otherwise. VARIANT=host builds a CUDA-off tree in $(BUILD)-host.
VARIANT ?=
IMAGE_BUILD := $(if $(filter host,$(VARIANT)),$(BUILD)-host,$(BUILD))

.PHONY: deps deps-run configure configure-run build run test image clean

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
	@[ -f $(BUILD)/CMakeCache.txt ] || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(RUN_CMAKE_FLAGS)

# Reconfigures a tree that `make run` configured (tests off).
configure: deps
	@grep -q '^CCLTUNE_BUILD_TESTS:BOOL=ON$$' $(BUILD)/CMakeCache.txt 2>/dev/null || \
	  cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(FULL_CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: configure-run
	cmake --build $(BUILD) -j $(JOBS) --target ccltune
	$(BUILD)/worker/ccltune tune --ranks $(RANKS) --backend host

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

image: $(if $(filter host,$(VARIANT)),deps,build)
ifeq ($(VARIANT),host)
	cmake -S . -B $(IMAGE_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCCLTUNE_WITH_CUDA=OFF \
	  -DCCLTUNE_BUILD_TESTS=OFF
	cmake --build $(IMAGE_BUILD) -j $(JOBS)
else ifneq ($(VARIANT),)
	$(error VARIANT must be empty (the build tree's own) or host, not '$(VARIANT)')
endif
	bash manifests/image/build-image.sh --build $(IMAGE_BUILD) --out $(BUILD)/image

clean:
	rm -rf $(BUILD) $(BUILD)-host
