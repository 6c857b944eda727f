# Quickstart on a fresh Debian 12 machine (as root):
#   make run    install what is missing, build, run a local 4-rank tuning job (host backend)
#   make test   same setup, then the whole ctest suite
BUILD ?= build
JOBS ?= $(shell nproc)
RANKS ?= 4
# `make image` and the `image` tests (manifests/image/build-image.sh): Debian rootfs, OCI
# packing, OCI runtime. In DEB_PACKAGES because `make test` runs the image test; defined
# first, since `:=` expands it where DEB_PACKAGES is defined (it was empty there before).
IMAGE_PACKAGES := mmdebstrap umoci runc
DEB_PACKAGES := build-essential cmake pkg-config libhiredis-dev redis-server libcpprest-dev \
  libssl-dev prometheus-cpp-dev prometheus prometheus-pushgateway python3-kubernetes nlohmann-json3-dev \
  libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev \
  zlib1g-dev clang-14 libclang-rt-14-dev chromium $(IMAGE_PACKAGES)
# `make image` packs $(BUILD) as it is: the cuda variant where a CUDA toolkit was found (as on
# the machines here), host otherwise. VARIANT=host builds a CUDA-off tree in $(BUILD)-host.
VARIANT ?=
IMAGE_BUILD := $(if $(filter host,$(VARIANT)),$(BUILD)-host,$(BUILD))

.PHONY: deps configure build run test image clean

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" -ne 0 ]; then echo "error: missing Debian packages:$$missing (run as root or install them)"; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@command -v kubectl >/dev/null || { [ "$$(id -u)" -eq 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubernetes-client; } || true

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
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
