// CheckReviewShape, CheckPodShape (review_shape.h): one table of the shapes read, one walker.
#include "controller/admission/review_shape.h"

#include <utility>
#include <vector>

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;

enum class Type { kString, kBool, kInteger, kObject, kArray };

struct Shape;
struct Field {
  const char* key;
  const Shape* shape;
};

// An object's known keys (`fields`), or, with `each`, the shape of every element of an array
// or every value of an object used as a map (labels, annotations).
struct Shape {
  Type type;
  std::vector<Field> fields;
  const Shape* each = nullptr;
};

const Shape kString{Type::kString};
const Shape kBool{Type::kBool};
const Shape kInteger{Type::kInteger};
const Shape kAnyObject{Type::kObject};
const Shape kStrings{Type::kArray, {}, &kString};
const Shape kStringMap{Type::kObject, {}, &kString};

const Shape kEnvVar{Type::kObject,
                    {{"name", &kString}, {"value", &kString}, {"valueFrom", &kAnyObject}}};
const Shape kMount{Type::kObject,
                   {{"name", &kString}, {"mountPath", &kString}, {"readOnly", &kBool}}};
const Shape kPort{Type::kObject, {{"name", &kString}, {"containerPort", &kInteger}}};
const Shape kEnv{Type::kArray, {}, &kEnvVar};
const Shape kMounts{Type::kArray, {}, &kMount};
const Shape kPorts{Type::kArray, {}, &kPort};
const Shape kContainer{Type::kObject,
                       {{"name", &kString},
                        {"image", &kString},
                        {"command", &kStrings},
                        {"env", &kEnv},
                        {"volumeMounts", &kMounts},
                        {"ports", &kPorts}}};
const Shape kContainers{Type::kArray, {}, &kContainer};
const Shape kVolume{Type::kObject, {{"name", &kString}, {"emptyDir", &kAnyObject}}};
const Shape kVolumes{Type::kArray, {}, &kVolume};
const Shape kSpec{
    Type::kObject,
    {{"containers", &kContainers}, {"initContainers", &kContainers}, {"volumes", &kVolumes}}};
const Shape kMetadata{Type::kObject,
                      {{"name", &kString},
                       {"generateName", &kString},
                       {"namespace", &kString},
                       {"labels", &kStringMap},
                       {"annotations", &kStringMap}}};
const Shape kPod{Type::kObject, {{"metadata", &kMetadata}, {"spec", &kSpec}}};

const Shape kGroupVersionKind{Type::kObject,
                              {{"group", &kString}, {"version", &kString}, {"kind", &kString}}};
// request.object is checked apart, and only for a Pod: other kinds are allowed unread.
const Shape kRequest{Type::kObject,
                     {{"uid", &kString}, {"kind", &kGroupVersionKind}, {"operation", &kString}}};
const Shape kReview{Type::kObject,
                    {{"apiVersion", &kString}, {"kind", &kString}, {"request", &kRequest}}};

bool HasType(const Json& v, Type t) {
  switch (t) {
    case Type::kString:
      return v.is_string();
    case Type::kBool:
      return v.is_boolean();
    case Type::kInteger:
      return v.is_number_integer();
    case Type::kObject:
      return v.is_object();
    case Type::kArray:
      return v.is_array();
  }
  return false;
}

const char* Expected(Type t) {
  switch (t) {
    case Type::kString:
      return "expected a string";
    case Type::kBool:
      return "expected true or false";
    case Type::kInteger:
      return "expected an integer";
    case Type::kObject:
      return "expected an object";
    case Type::kArray:
      return "expected an array";
  }
  return "";
}

std::string Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// A map's key in a path: quoted, since label names hold '.' and '/', and cut short, since it
// is the sender's text and goes back in the answer.
std::string MapKey(const std::string& key) {
  constexpr size_t kMaxKey = 63;
  std::string cut(key, 0, kMaxKey);
  if (key.size() > kMaxKey) cut.append("...");
  return Json(cut).dump(-1, ' ', false, Json::error_handler_t::replace);  // a cut may split a rune
}

core::Status Walk(const Json& v, const Shape& shape, const std::string& path) {
  // Kubernetes' JSON may write an absent list or map as null; a scalar is left out instead
  // (and its readers take a null for a value of the wrong type).
  if (v.is_null() && (shape.type == Type::kObject || shape.type == Type::kArray))
    return core::Status::Ok();
  if (!HasType(v, shape.type)) return core::InvalidArgument(path + ": " + Expected(shape.type));
  for (const Field& f : shape.fields) {
    const auto it = v.find(f.key);
    if (it == v.end()) continue;
    CCLTUNE_RETURN_IF_ERROR(Walk(*it, *f.shape, Join(path, f.key)));
  }
  if (shape.each == nullptr) return core::Status::Ok();
  if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i)
      CCLTUNE_RETURN_IF_ERROR(Walk(v[i], *shape.each, path + "[" + std::to_string(i) + "]"));
  } else {
    for (const auto& [key, value] : v.items())
      CCLTUNE_RETURN_IF_ERROR(Walk(value, *shape.each, path + "[" + MapKey(key) + "]"));
  }
  return core::Status::Ok();
}

}  // namespace

core::Status CheckReviewShape(const Json& review) {
  if (!review.is_object()) return core::InvalidArgument("body is not a JSON object");
  return Walk(review, kReview, "");
}

core::Status CheckPodShape(const Json& pod, const std::string& path) {
  return Walk(pod, kPod, path);
}

}  // namespace ccltune::controller
