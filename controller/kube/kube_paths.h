// REST paths of the resources the controller uses. An empty namespace means "all
// namespaces" for collection paths (list/watch across the cluster).
#pragma once

#include <string>

namespace ccltune::controller {

inline std::string NsPrefix(const std::string& ns) { return ns.empty() ? "" : "/namespaces/" + ns; }
inline std::string JobsPath(const std::string& ns) {
  return "/apis/ccltune.io/v1alpha1" + NsPrefix(ns) + "/collectivetuningjobs";
}
inline std::string JobPath(const std::string& ns, const std::string& name) {
  return JobsPath(ns) + "/" + name;
}
inline std::string JobStatusPath(const std::string& ns, const std::string& name) {
  return JobPath(ns, name) + "/status";
}
inline std::string PodsPath(const std::string& ns) { return "/api/v1" + NsPrefix(ns) + "/pods"; }
inline std::string PodPath(const std::string& ns, const std::string& name) {
  return PodsPath(ns) + "/" + name;
}
inline std::string ConfigMapsPath(const std::string& ns) {
  return "/api/v1" + NsPrefix(ns) + "/configmaps";
}
inline std::string ConfigMapPath(const std::string& ns, const std::string& name) {
  return ConfigMapsPath(ns) + "/" + name;
}
inline std::string EventsPath(const std::string& ns) {
  return "/api/v1" + NsPrefix(ns) + "/events";
}
inline std::string LeasesPath(const std::string& ns) {
  return "/apis/coordination.k8s.io/v1" + NsPrefix(ns) + "/leases";
}
inline std::string LeasePath(const std::string& ns, const std::string& name) {
  return LeasesPath(ns) + "/" + name;
}

// Percent-encodes a query value (label selectors contain '=' and ',').
std::string QueryEscape(const std::string& value);

}  // namespace ccltune::controller
