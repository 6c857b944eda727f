#include "controller/reconcile/pod_failure.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;

bool IsUrlDelimiter(char c) {
  return std::isspace(static_cast<unsigned char>(c)) || c == '/' || c == '"' || c == '\'';
}

// Drops C0 controls, DEL and ANSI escape sequences (ESC [ ... final byte); tabs become spaces.
std::string StripControls(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == 0x1b && i + 1 < s.size() && s[i + 1] == '[') {
      i += 2;
      while (i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7e)) ++i;
      continue;
    }
    if (c == '\t') out += ' ';
    if (c < 0x20 || c == 0x7f) continue;
    out += static_cast<char>(c);
  }
  return out;
}

std::string Trim(std::string_view s) {
  auto b = s.find_first_not_of(' ');
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(' ') - b + 1));
}

// Cuts at most `max` bytes without splitting a UTF-8 sequence.
std::string Bound(std::string s, std::size_t max) {
  if (s.size() <= max) return s;
  std::size_t cut = max - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "...";
}

bool SaysError(std::string_view line) {
  std::string lower(line);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("error") != std::string::npos;
}

std::string PickLine(std::string_view message) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= message.size()) {
    std::size_t nl = message.find('\n', start);
    if (nl == std::string_view::npos) nl = message.size();
    std::string line = Trim(StripControls(message.substr(start, nl - start)));
    if (!line.empty()) lines.push_back(std::move(line));
    start = nl + 1;
  }
  if (lines.empty()) return "";
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (SaysError(*it)) return *it;
  }
  return lines.back();
}

// The terminated state of a container: its current one, else the previous run's.
const Json* Terminated(const Json& cs) {
  for (const char* which : {"state", "lastState"}) {
    auto s = cs.find(which);
    if (s == cs.end() || !s->is_object()) continue;
    auto t = s->find("terminated");
    if (t != s->end() && t->is_object() && !t->empty()) return &*t;
  }
  return nullptr;
}

}  // namespace

std::string RedactUrlCredentials(std::string_view text) {
  std::string out(text);
  for (std::size_t scheme = out.find("://"); scheme != std::string::npos;
       scheme = out.find("://", scheme + 3)) {
    std::size_t begin = scheme + 3, end = begin;
    while (end < out.size() && !IsUrlDelimiter(out[end]) && out[end] != '@') ++end;
    if (end >= out.size() || out[end] != '@' || end == begin) continue;
    std::size_t colon = out.find(':', begin);
    std::size_t from = (colon != std::string::npos && colon < end) ? colon + 1 : begin;
    out.replace(from, end - from, "***");
  }
  return out;
}

std::string TerminationLine(std::string_view message) {
  return Bound(RedactUrlCredentials(PickLine(message)), kTerminationLineMaxBytes);
}

std::string PodFailureMessage(const Json& pod) {
  const Json& st = pod.value("status", Json::object());
  std::string name = pod["metadata"].value("name", "");
  std::string msg = TerminationLine(st.value("message", ""));
  for (const Json& cs : st.value("containerStatuses", Json::array())) {
    const Json* term = Terminated(cs);
    if (term == nullptr) continue;
    std::string detail = "exit code " + std::to_string(term->value("exitCode", -1));
    if (!term->value("reason", "").empty()) detail += " (" + term->value("reason", "") + ")";
    std::string line = TerminationLine(term->value("message", ""));
    if (!line.empty()) detail += ": " + line;
    msg = msg.empty() ? detail : msg + "; " + detail;
  }
  return "pod " + name + " failed" + (msg.empty() ? "" : ": " + msg);
}

}  // namespace ccltune::controller
