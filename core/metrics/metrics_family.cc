// Family<T>: prometheus-cpp's family behind the label-set cap (core/metrics/metrics.h).
#include <type_traits>

#include "core/metrics/metrics.h"

namespace ccltune::core {

template <class T>
Family<T>::Family(FamilyOptions options, prometheus::Family<T>& family, Counter& dropped)
    : options_(std::move(options)), family_(family), dropped_(dropped) {}

template <class T>
T& Family<T>::WithLabels(const std::vector<std::string>& values) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = children_.find(values);
  if (it != children_.end()) return *it->second;
  if (values.size() == options_.label_names.size() && children_.size() < options_.max_label_sets) {
    T& child = AddChild(values);
    children_.emplace(values, &child);
    return child;
  }
  // Over the cap, or a wrong arity (a programming error, but metrics must never take the
  // process down): count it and hand out the sink.
  dropped_.Increment();
  return Detached();
}

template <class T>
void Family<T>::Remove(const std::vector<std::string>& values) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = children_.find(values);
  if (it == children_.end()) return;
  family_.Remove(it->second);
  children_.erase(it);
}

template <class T>
T& Family<T>::AddChild(const std::vector<std::string>& values) {
  prometheus::Labels labels;
  for (std::size_t i = 0; i < values.size(); ++i) labels[options_.label_names[i]] = values[i];
  if constexpr (std::is_same_v<T, Histogram>) {
    return family_.Add(labels, options_.buckets);
  } else {
    return family_.Add(labels);
  }
}

template <class T>
T& Family<T>::Detached() {
  if (!detached_) {
    if constexpr (std::is_same_v<T, Histogram>) {
      detached_ = std::make_unique<T>(options_.buckets);
    } else {
      detached_ = std::make_unique<T>();
    }
  }
  return *detached_;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

}  // namespace ccltune::core
