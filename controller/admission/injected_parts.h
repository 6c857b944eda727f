// The parts the webhook adds to a pod for its libraries: the init container ccltune-inject,
// which copies them into the emptyDir volume ccltune-lib, and that volume's read-only mount at
// /opt/ccltune/lib in every container. And how to tell them from a pod's own parts that take
// the same names or path.
//
// A pod's own init container or volume of those names, or its own mount of ccltune-lib
// elsewhere or of another volume at the mount path, is never merged with: the pod is left
// uninjected and its annotation says why (annotated as injected while its containers have no
// libraries would be a lie the program only finds out at run time).
//
// Ours is told by shape, not by a marker: the init container runs `cp -L ... MOUNT/` with
// ccltune-lib mounted at MOUNT, the volume is an emptyDir and nothing else. So a pod exported
// from a cluster (`kubectl get -o yaml`) and created again is recognised as injected, as is a
// reinvocation after a replica of another version (another image) injected it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "controller/admission/inject_config.h"

namespace ccltune::controller {

inline constexpr char kInjectInitName[] = "ccltune-inject";
inline constexpr char kInjectVolume[] = "ccltune-lib";

// Why the pod's own parts keep the webhook from injecting ("init container ccltune-inject is
// the pod's own, ..."), or nullopt. `spec` is the pod's spec, its types checked
// (review_shape.h).
std::optional<std::string> FindNameCollision(const nlohmann::json& spec, const InjectConfig& c);

// True when `init_container` has ccltune's init container's shape (see above).
bool IsOurInitContainer(const nlohmann::json& init_container, const InjectConfig& c);

// Ours, copying `libs` (file names in c.source_dir).
nlohmann::json MakeInitContainer(const std::vector<std::string>& libs, const InjectConfig& c);
nlohmann::json MakeLibraryVolume();
nlohmann::json MakeLibraryMount(const InjectConfig& c);

// The command of our init container `have` once it also copies `libs`; nullopt when it already
// copies them all (a pod injected with fewer variants, exported and labelled with more).
std::optional<nlohmann::json> CatchUpCopyCommand(const nlohmann::json& have,
                                                 const std::vector<std::string>& libs,
                                                 const InjectConfig& c);

}  // namespace ccltune::controller
