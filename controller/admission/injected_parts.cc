// The webhook's own pod parts and how they are told from a pod's (injected_parts.h).
#include "controller/admission/injected_parts.h"

#include <algorithm>

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;

const Json& ListOf(const Json& object, const char* key) {
  static const Json kNone = Json::array();
  const auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : kNone;
}

bool NameIs(const Json& item, const std::string& name) {
  return item.is_object() && item.value("name", Json()) == name;
}

// An emptyDir and nothing else: any other source (configMap, hostPath, …) is the pod's.
bool IsOurVolume(const Json& volume) {
  return volume.is_object() && volume.size() == 2 && volume.value("emptyDir", Json()).is_object();
}

// The pod's own text in the annotation, cut short: annotations are limited in size (256 KiB in
// all), and one too long would have the API server refuse the pod. The cut falls between two
// UTF-8 characters, or the patch would not serialize.
std::string Cut(const std::string& text) {
  size_t end = 128;
  if (text.size() <= end) return text;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

// The source a pod's own volume names, for the annotation ("configMap").
std::string SourceOf(const Json& volume) {
  for (const auto& [key, value] : volume.items()) {
    if (key != "name") return Cut(key);
  }
  return "no source";
}

std::string CopiedFrom(const std::string& lib, const InjectConfig& c) {
  return c.source_dir + "/" + lib;
}

std::optional<std::string> VolumeCollision(const Json& spec) {
  for (const Json& v : ListOf(spec, "volumes")) {
    if (NameIs(v, kInjectVolume) && !IsOurVolume(v)) {
      return std::string("volume ") + kInjectVolume + " is the pod's own (" + SourceOf(v) +
             "), not ccltune's: rename it, ccltune needs that name";
    }
  }
  return std::nullopt;
}

std::optional<std::string> InitContainerCollision(const Json& spec, const InjectConfig& c) {
  for (const Json& ic : ListOf(spec, "initContainers")) {
    if (NameIs(ic, kInjectInitName) && !IsOurInitContainer(ic, c)) {
      return std::string("init container ") + kInjectInitName +
             " is the pod's own, not ccltune's: rename it, ccltune needs that name";
    }
  }
  return std::nullopt;
}

// A container must get our volume at mount_path: neither may be taken by something else.
std::optional<std::string> MountCollision(const Json& container, const InjectConfig& c) {
  const std::string who = "container " + Cut(container.value("name", std::string("?")));
  for (const Json& m : ListOf(container, "volumeMounts")) {
    if (!m.is_object()) continue;
    const std::string name = m.value("name", std::string()),
                      at = m.value("mountPath", std::string());
    if (name == kInjectVolume && at != c.mount_path) {
      return who + " mounts volume " + name + " at " + Cut(at) + ", not " + c.mount_path +
             ": rename it, ccltune needs that name";
    }
    if (name != kInjectVolume && at == c.mount_path) {
      return who + " mounts volume " + Cut(name) + " at " + at +
             ": move it, ccltune needs that path";
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> FindNameCollision(const Json& spec, const InjectConfig& c) {
  if (auto why = VolumeCollision(spec)) return why;
  if (auto why = InitContainerCollision(spec, c)) return why;
  for (const Json& container : ListOf(spec, "containers")) {
    if (!container.is_object()) continue;
    if (auto why = MountCollision(container, c)) return why;
  }
  return std::nullopt;
}

bool IsOurInitContainer(const Json& ic, const InjectConfig& c) {
  const Json& cmd = ic.value("command", Json());
  if (!cmd.is_array() || cmd.size() < 3 || cmd[0] != "cp" || cmd[1] != "-L" ||
      cmd.back() != Json(c.mount_path + "/")) {
    return false;
  }
  const Json& mounts = ListOf(ic, "volumeMounts");
  return std::any_of(mounts.begin(), mounts.end(), [&](const Json& m) {
    return NameIs(m, kInjectVolume) && m.value("mountPath", Json()) == c.mount_path;
  });
}

Json MakeInitContainer(const std::vector<std::string>& libs, const InjectConfig& c) {
  Json cmd = {"cp", "-L"};
  for (const auto& lib : libs) cmd.push_back(CopiedFrom(lib, c));
  cmd.push_back(c.mount_path + "/");
  return {{"name", kInjectInitName},
          {"image", c.image},
          {"imagePullPolicy", "IfNotPresent"},
          {"command", cmd},
          {"volumeMounts", {{{"name", kInjectVolume}, {"mountPath", c.mount_path}}}},
          {"resources",
           {{"requests", {{"cpu", "10m"}, {"memory", "16Mi"}}}, {"limits", {{"memory", "64Mi"}}}}},
          {"securityContext",
           {{"allowPrivilegeEscalation", false},
            {"readOnlyRootFilesystem", true},
            {"capabilities", {{"drop", {"ALL"}}}}}}};
}

Json MakeLibraryVolume() {
  return {{"name", kInjectVolume}, {"emptyDir", {{"sizeLimit", "64Mi"}}}};
}

Json MakeLibraryMount(const InjectConfig& c) {
  return {{"name", kInjectVolume}, {"mountPath", c.mount_path}, {"readOnly", true}};
}

std::optional<Json> CatchUpCopyCommand(const Json& have, const std::vector<std::string>& libs,
                                       const InjectConfig& c) {
  Json cmd = have.value("command", Json::array());
  bool changed = false;
  for (const auto& lib : libs) {
    const std::string from = CopiedFrom(lib, c);
    if (std::find(cmd.begin(), cmd.end(), Json(from)) != cmd.end()) continue;
    cmd.insert(cmd.end() - 1, from);  // before the destination, the last argument
    changed = true;
  }
  return changed ? std::optional<Json>(std::move(cmd)) : std::nullopt;
}

}  // namespace ccltune::controller
