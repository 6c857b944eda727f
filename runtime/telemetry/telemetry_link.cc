// Loading libccltune-telemetry on demand (telemetry_link.h).
#include "runtime/telemetry/telemetry_link.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ccltune::runtime {
namespace {

constexpr char kLibrary[] = "libccltune-telemetry.so.1";

bool WantTelemetry() {
  const char* v = std::getenv("CCLTUNE_TELEMETRY");
  return v != nullptr && *v != '\0' && std::string(v) != "off";
}

// The copy already loaded (the profiler plugin links it by soname, and may have come first
// from another folder: a second copy would be a second exporter on the same port), else the
// one beside the library that holds this code (libccltune.so or libccltune-nccl.so), else
// by soname through the loader's path.
void* OpenLibrary(std::string* error) {
  if (void* h = dlopen(kLibrary, RTLD_NOW | RTLD_NOLOAD)) return h;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&Telemetry), &info) != 0 && info.dli_fname != nullptr) {
    std::string dir(info.dli_fname);
    const auto slash = dir.rfind('/');
    dir = slash == std::string::npos ? "." : dir.substr(0, slash);
    if (void* h = dlopen((dir + "/" + kLibrary).c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  }
  if (void* h = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL)) return h;
  const char* e = dlerror();
  *error = e != nullptr ? e : "not found";
  return nullptr;
}

template <class F>
bool Bind(void* lib, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
  return *fn != nullptr;
}

const TelemetryApi* Load() {
  if (!WantTelemetry()) return nullptr;
  std::string error;
  void* lib = OpenLibrary(&error);
  if (lib == nullptr) {
    std::fprintf(stderr,
                 "ccltune: CCLTUNE_TELEMETRY is set but %s could not be loaded (%s): "
                 "telemetry off\n",
                 kLibrary, error.c_str());
    return nullptr;
  }
  static TelemetryApi api;
  int (*version)() = nullptr;
  int (*enabled)() = nullptr;
  const bool bound = Bind(lib, "ccltuneTelemetryAbiVersion", &version) &&
                     Bind(lib, "ccltuneTelemetryEnabled", &enabled) &&
                     Bind(lib, "ccltuneTelemetryCommInit", &api.comm_init) &&
                     Bind(lib, "ccltuneTelemetryRecordCall", &api.record_call) &&
                     Bind(lib, "ccltuneTelemetryForwarded", &api.forwarded) &&
                     Bind(lib, "ccltuneTelemetryDropped", &api.dropped) &&
                     Bind(lib, "ccltuneTelemetryTuned", &api.tuned);
  if (!bound || version() != CCLTUNE_TELEMETRY_ABI_VERSION) {
    std::fprintf(stderr, "ccltune: %s does not offer ABI version %d: telemetry off\n", kLibrary,
                 CCLTUNE_TELEMETRY_ABI_VERSION);
    return nullptr;
  }
  return enabled() != 0 ? &api : nullptr;  // the library said why when it is not
}

}  // namespace

const TelemetryApi* Telemetry() {
  static const TelemetryApi* const api = Load();
  return api;
}

}  // namespace ccltune::runtime
