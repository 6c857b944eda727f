// InjectPod (pod_injection.h): each Ensure* step looks at the pod as the API server sent it
// and appends the operations that add what is missing, so that a pod which already has
// everything (a reinvocation) gets none.
#include "controller/admission/pod_injection.h"

#include <algorithm>
#include <iterator>
#include <sstream>

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;

const char* const kLibPlugin = "libnccl-tuner-ccltune.so";
const char* const kLibPreload = "libccltune-nccl.so";
const char* const kLibProfiler = "libnccl-profiler-ccltune.so";
// The telemetry exporter the profiler plugin links by soname (design §13).
const char* const kLibTelemetry = "libccltune-telemetry.so.1";
// NCCL's plugin variables: a user's own value wins, and the annotation says so.
const char* const kPluginVariables[] = {"NCCL_TUNER_PLUGIN", "NCCL_PROFILER_PLUGIN"};

// What one pod asked for, resolved against the config.
struct Plan {
  std::vector<Feature> features;
  std::vector<std::string> libs;  // file names the init container copies
  const ProgramCredential* credential = nullptr;
  std::vector<std::string> notes;  // where the user's own setting won
  bool Has(Feature f) const {
    return std::find(features.begin(), features.end(), f) != features.end();
  }
};

// RFC 6901: '~' → "~0", '/' → "~1".
std::string Escape(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

Json Op(const std::string& path, Json value) {
  return {{"op", "add"}, {"path", path}, {"value", std::move(value)}};
}

// Appends `item` to the array at `path` of `parent[key]`, creating the array when absent.
void AddToList(Json& ops, const Json& parent, const std::string& path, const std::string& key,
               Json item) {
  if (!parent.contains(key) || parent[key].is_null()) {
    ops.push_back(Op(path + "/" + key, Json::array({std::move(item)})));
  } else {
    ops.push_back(Op(path + "/" + key + "/-", std::move(item)));
  }
}

bool HasNamed(const Json& list, const std::string& name, const char* field = "name") {
  if (!list.is_array()) return false;
  return std::any_of(list.begin(), list.end(), [&](const Json& e) {
    return e.is_object() && e.value(field, Json()).is_string() && e[field] == name;
  });
}

const Json* FindNamed(const Json& list, const std::string& name) {
  if (!list.is_array()) return nullptr;
  for (const Json& e : list) {
    if (e.is_object() && e.value("name", "") == name) return &e;
  }
  return nullptr;
}

std::string LibPath(const InjectConfig& c, const std::string& lib) {
  return c.mount_path + "/" + lib;
}

Json EnvValue(const std::string& name, const std::string& value) {
  return {{"name", name}, {"value", value}};
}

// A variable from the downward API (the pod's own fields).
Json EnvField(const std::string& name, const std::string& field_path) {
  return {{"name", name},
          {"valueFrom", {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", field_path}}}}}};
}

bool IsPluginVariable(const std::string& name) {
  return std::find(std::begin(kPluginVariables), std::end(kPluginVariables), name) !=
         std::end(kPluginVariables);
}

// The variables every injected container gets, in order.
std::vector<Json> DesiredEnv(const Plan& plan, const InjectConfig& c) {
  std::vector<Json> env;
  if (!c.redis_url.empty()) env.push_back(EnvValue("CCLTUNE_REDIS_URL", c.redis_url));
  env.push_back(EnvValue("CCLTUNE_REDIS_USERNAME", plan.credential->user));
  // optional: a namespace without the Secret still runs its pods (the programs then fall
  // back to NCCL with one log line), as failurePolicy Ignore promises for an outage.
  env.push_back({{"name", "CCLTUNE_REDIS_PASSWORD"},
                 {"valueFrom",
                  {{"secretKeyRef",
                    {{"name", plan.credential->secret_name},
                     {"key", plan.credential->secret_key},
                     {"optional", true}}}}}});
  env.push_back(EnvField("CCLTUNE_NODE_NAME", "spec.nodeName"));
  if (plan.Has(Feature::kPlugin))
    env.push_back(EnvValue("NCCL_TUNER_PLUGIN", LibPath(c, kLibPlugin)));
  if (plan.Has(Feature::kPreload)) {
    env.push_back(EnvValue("LD_PRELOAD", LibPath(c, kLibPreload)));
    // PyTorch then registers its segments with NCCL, which is how the preloaded library may
    // run captured all-reduces on the tensors themselves (docs/winners.md, direct mode).
    env.push_back(EnvValue("TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK", "1"));
  }
  if (plan.Has(Feature::kTelemetry)) {
    // The exporter's const labels (design §13) and NCCL's own calls through the profiler.
    env.push_back(EnvField("CCLTUNE_POD_NAME", "metadata.name"));
    env.push_back(EnvField("CCLTUNE_POD_NAMESPACE", "metadata.namespace"));
    env.push_back(EnvValue("CCLTUNE_TELEMETRY", "on"));
    env.push_back(EnvValue("NCCL_PROFILER_PLUGIN", LibPath(c, kLibProfiler)));
    env.push_back(EnvValue("CCLTUNE_METRICS_PORT", std::to_string(c.metrics_port)));
  }
  return env;
}

// LD_PRELOAD the container already sets: ours is appended (space or colon separate entries).
void EnsurePreload(Json& ops, const Json& var, const std::string& at, const std::string& lib,
                   const std::string& cname, Plan& plan) {
  if (!var.contains("value") || !var["value"].is_string()) {
    plan.notes.push_back("container " + cname + ": LD_PRELOAD comes from valueFrom, " +
                         "libccltune-nccl not preloaded");
    return;
  }
  const std::string cur = var["value"];
  if (cur.find(lib) != std::string::npos) return;
  ops.push_back(
      {{"op", "replace"}, {"path", at + "/value"}, {"value", cur.empty() ? lib : cur + ":" + lib}});
}

void EnsureEnv(Json& ops, const Json& container, const std::string& path, Plan& plan,
               const InjectConfig& c) {
  const std::string cname = container.value("name", "?");
  const Json& env = container.contains("env") ? container["env"] : Json();
  Json missing = Json::array();
  for (Json& want : DesiredEnv(plan, c)) {
    const std::string name = want["name"];
    const Json* have = FindNamed(env, name);
    if (have == nullptr) {
      missing.push_back(std::move(want));
    } else if (name == "LD_PRELOAD") {
      const auto index = static_cast<size_t>(have - &env[0]);
      EnsurePreload(ops, *have, path + "/env/" + std::to_string(index), want["value"], cname, plan);
    } else if (IsPluginVariable(name) && have->value("value", Json()) != want["value"]) {
      plan.notes.push_back("container " + cname + " keeps its own " + name);
    }
  }
  if (missing.empty()) return;
  if (!env.is_array()) {
    ops.push_back(Op(path + "/env", missing));
  } else {
    for (Json& m : missing) ops.push_back(Op(path + "/env/-", std::move(m)));
  }
}

void EnsureContainer(Json& ops, const Json& container, size_t i, Plan& plan,
                     const InjectConfig& c) {
  const std::string path = "/spec/containers/" + std::to_string(i);
  if (!plan.libs.empty() && !HasNamed(container.value("volumeMounts", Json()), kInjectVolume)) {
    AddToList(ops, container, path, "volumeMounts", MakeLibraryMount(c));
  }
  EnsureEnv(ops, container, path, plan, c);
  if (i == 0 && plan.Has(Feature::kTelemetry) &&
      !HasNamed(container.value("ports", Json()), "ccltune-metrics") &&
      !HasNamed(container.value("ports", Json()), std::to_string(c.metrics_port))) {
    AddToList(ops, container, path, "ports",
              {{"name", "ccltune-metrics"}, {"containerPort", c.metrics_port}});
  }
}

// FindNameCollision has ruled out a pod's own parts of our names: those present are ours.
void EnsureLibraries(Json& ops, const Json& spec, const Plan& plan, const InjectConfig& c) {
  if (plan.libs.empty()) return;
  if (!HasNamed(spec.value("volumes", Json()), kInjectVolume)) {
    AddToList(ops, spec, "/spec", "volumes", MakeLibraryVolume());
  }
  const Json& inits = spec.value("initContainers", Json());
  const Json* ours = FindNamed(inits, kInjectInitName);
  if (ours == nullptr) {
    AddToList(ops, spec, "/spec", "initContainers", MakeInitContainer(plan.libs, c));
  } else if (auto cmd = CatchUpCopyCommand(*ours, plan.libs, c)) {
    const std::string at = "/spec/initContainers/" + std::to_string(ours - &inits[0]);
    ops.push_back({{"op", "replace"}, {"path", at + "/command"}, {"value", std::move(*cmd)}});
  }
}

void EnsureMetadata(Json& ops, const Json& md, const std::string& summary, bool telemetry) {
  const Json& annotations = md.contains("annotations") ? md["annotations"] : Json();
  if (!annotations.is_object()) {
    ops.push_back(Op("/metadata/annotations", {{kInjectedAnnotation, summary}}));
  } else if (annotations.value(kInjectedAnnotation, Json()) != summary) {
    ops.push_back(Op("/metadata/annotations/" + Escape(kInjectedAnnotation), summary));
  }
  const Json& labels = md.contains("labels") ? md["labels"] : Json();
  if (telemetry && labels.is_object() && !labels.contains(kMetricsLabel)) {
    ops.push_back(Op("/metadata/labels/" + Escape(kMetricsLabel), "true"));
  }
}

std::string Summary(const Plan& plan) {
  static const char* kNames[] = {"plugin", "preload", "telemetry"};
  std::string s;
  for (Feature f : plan.features) s += (s.empty() ? "" : ",") + std::string(kNames[int(f)]);
  for (const auto& n : plan.notes) s += "; " + n;
  return s;
}

Plan MakePlan(std::vector<Feature> features, const InjectConfig& c) {
  Plan plan;
  plan.features = std::move(features);
  if (plan.Has(Feature::kPlugin)) plan.libs.push_back(kLibPlugin);
  if (plan.Has(Feature::kPreload)) plan.libs.push_back(kLibPreload);
  if (plan.Has(Feature::kTelemetry)) {
    plan.libs.push_back(kLibProfiler);
    plan.libs.push_back(kLibTelemetry);
  }
  plan.credential = plan.Has(Feature::kTelemetry) ? &c.telemetry : &c.reader;
  return plan;
}

// Only the annotation: why nothing else was injected.
Injection Refuse(const Json& md, const std::string& why) {
  Injection out;
  out.summary = "none: " + why;
  if (md.is_object()) EnsureMetadata(out.patch, md, out.summary, false);
  return out;
}

}  // namespace

core::Result<std::vector<Feature>> ParseInjectLabel(const std::string& value) {
  std::vector<Feature> out;
  std::stringstream in(value);
  std::string item;
  while (std::getline(in, item, '.')) {
    Feature f;
    if (item == "plugin")
      f = Feature::kPlugin;
    else if (item == "preload")
      f = Feature::kPreload;
    else if (item == "telemetry")
      f = Feature::kTelemetry;
    else
      return core::InvalidArgument(std::string("label ") + kInjectLabel + ": \"" + item +
                                   "\" is not one of plugin, preload, telemetry (join several "
                                   "with '.', e.g. preload.telemetry)");
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  if (out.empty())
    return core::InvalidArgument(std::string("label ") + kInjectLabel +
                                 " is empty (allowed: plugin, preload, telemetry)");
  return out;
}

Injection InjectPod(const Json& pod, const InjectConfig& config) {
  const Json& md = pod.is_object() ? pod.value("metadata", Json()) : Json();
  if (!md.is_object()) return {Json::array(), "none: the pod has no metadata"};
  const Json& spec = pod.value("spec", Json());
  if (!spec.is_object() || !spec.value("containers", Json()).is_array())
    return Refuse(md, "the pod has no spec.containers");
  const Json labels = md.value("labels", Json::object());
  const Json label = labels.is_object() ? labels.value(kInjectLabel, Json()) : Json();
  auto features = ParseInjectLabel(label.is_string() ? label.get<std::string>() : "");
  if (!features.ok()) return Refuse(md, features.status().message());
  Plan plan = MakePlan(std::move(features).value(), config);
  if (auto why = FindNameCollision(spec, config)) return Refuse(md, *why);
  Injection out;
  EnsureLibraries(out.patch, spec, plan, config);
  const Json& containers = spec["containers"];
  for (size_t i = 0; i < containers.size(); ++i) {
    if (containers[i].is_object()) EnsureContainer(out.patch, containers[i], i, plan, config);
  }
  out.summary = Summary(plan);
  EnsureMetadata(out.patch, md, out.summary, plan.Has(Feature::kTelemetry));
  return out;
}

}  // namespace ccltune::controller
