// dashboard_queries.h: the Prometheus API calls and Grafana emulation the dashboard tests share.
#include "tests/metrics/dashboard_queries.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "tests/metrics/child_process.h"

namespace ccltune::testing {

using nlohmann::json;
using namespace std::chrono_literals;

std::string SourceDir() {
  const char* dir = std::getenv("CCLTUNE_SOURCE_DIR");
  return dir ? dir : CCLTUNE_TEST_SOURCE_DIR;
}

json LoadDashboard(const std::string& name) {
  std::ifstream in(SourceDir() + "/dashboards/" + name + ".json");
  return json::parse(in);  // throws (test failure) on a missing or broken file
}

int FreePortRange(int n) {
  int ephemeral_low = 32768, ephemeral_high = 60999;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> ephemeral_low >> ephemeral_high;
  int lo = 20000, hi = ephemeral_low - n;  // the range to pick from
  if (hi <= lo) lo = ephemeral_high + 1, hi = 65535 - n;
  std::mt19937 gen(std::random_device{}());
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int base = std::uniform_int_distribution<int>(lo, hi)(gen);
    bool all_free = true;
    for (int i = 0; i < n && all_free; ++i) {
      int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_ANY);
      addr.sin_port = htons(static_cast<std::uint16_t>(base + i));
      all_free = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
      if (fd >= 0) ::close(fd);
    }
    if (all_free) return base;
  }
  return 0;
}

std::string ReadTail(const std::string& path, std::size_t max) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  return text.size() > max ? "…" + text.substr(text.size() - max) : text;
}

core::Result<json> PromApi(int port, const std::string& path_and_query) {
  CCLTUNE_ASSIGN_OR_RETURN(HttpAnswer answer, HttpGet(port, path_and_query, 10s));
  json body = json::parse(answer.body, nullptr, false);
  if (answer.code != 200 || body.is_discarded() || body.value("status", "") != "success")
    return core::Internal("prometheus " + path_and_query + " → " + std::to_string(answer.code) +
                          ": " + answer.body.substr(0, 500));
  return body["data"];
}

core::Result<json> Query(int port, const std::string& expr, const std::string& at) {
  return PromApi(port, "/api/v1/query?query=" + UrlEncode(expr) + "&time=" + at);
}

std::string UnixNow() {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ms / 1000),
                static_cast<long long>(ms % 1000));
  return buf;
}

std::size_t SeriesCount(int port, const std::string& expr, const std::string& at) {
  auto data = Query(port, expr, at);
  return data.ok() ? (*data)["result"].size() : 0;
}

std::vector<json> AllPanels(const json& dashboard) {
  std::vector<json> out;
  for (const auto& p : dashboard.value("panels", json::array())) {
    out.push_back(p);
    for (const auto& inner : p.value("panels", json::array())) out.push_back(inner);  // rows
  }
  return out;
}

std::string Substitute(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [name, value] : values) {
    for (const std::string& form : {"${" + name + "}", "[[" + name + "]]", "$" + name}) {
      for (std::size_t at; (at = text.find(form)) != std::string::npos;) {
        // "$job" must not eat the start of "$jobs": check the next character.
        std::size_t end = at + form.size();
        if (form[1] != '{' && form[0] == '$' && end < text.size() &&
            (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) {
          text.replace(at, 1, "\x01");  // park it; restored below
          continue;
        }
        text.replace(at, form.size(), value);
      }
    }
    for (char& c : text)
      if (c == '\x01') c = '$';
  }
  return text;
}

core::Result<std::map<std::string, std::string>> ResolveVariables(
    int port, const json& dash, bool use_all, const std::map<std::string, std::string>& pinned) {
  std::map<std::string, std::string> values;
  std::regex label_values(R"(^label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\)$)");
  for (const auto& v : dash["templating"]["list"]) {
    if (v.value("type", "") != "query") continue;
    std::string def = v.value("definition", ""), name = v["name"];
    std::smatch m;
    if (!std::regex_match(def, m, label_values))
      return core::InvalidArgument("variable " + name + ": unsupported query '" + def + "'");
    std::string selector = Substitute(m[1].str(), values);
    CCLTUNE_ASSIGN_OR_RETURN(json series,
                             PromApi(port, "/api/v1/series?match[]=" + UrlEncode(selector)));
    std::set<std::string> found;
    for (const auto& s : series)
      if (s.contains(m[2].str())) found.insert(s[m[2].str()]);
    if (found.empty())
      return core::NotFound("variable " + name + ": label_values(" + selector + ", " + m[2].str() +
                            ") is empty");
    values[name] =
        (use_all && v.value("includeAll", false)) ? v.value("allValue", ".*") : *found.begin();
    if (auto p = pinned.find(name); p != pinned.end()) {
      if (!found.count(p->second))
        return core::NotFound("variable " + name + ": '" + p->second + "' is not among its values");
      values[name] = p->second;
    }
  }
  return values;
}

std::vector<std::string> CheckPanels(int port, const json& dash,
                                     const std::map<std::string, std::string>& values,
                                     const std::string& at, int& queries,
                                     const std::function<bool(const json&)>& expect_empty) {
  std::vector<std::string> problems;
  for (const auto& panel : AllPanels(dash)) {
    for (const auto& target : panel.value("targets", json::array())) {
      if (!target.contains("expr")) continue;
      ++queries;
      std::string expr = Substitute(target["expr"], values);
      std::string where = dash["uid"].get<std::string>() + " / " +
                          panel["title"].get<std::string>() + " / " + target.value("refId", "?") +
                          ": " + expr;
      auto data = Query(port, expr, at);
      if (!data.ok()) {
        problems.push_back(where + " → " + data.status().ToString());
        continue;
      }
      const json& result = (*data)["result"];
      if (expect_empty && expect_empty(panel)) {
        if (!result.empty()) problems.push_back(where + " → data where none was expected");
        continue;
      }
      std::size_t finite = 0;
      for (const auto& s : result) {
        if (std::isfinite(std::stod(s["value"][1].get<std::string>()))) {
          ++finite;
        } else {
          problems.push_back(where + " → non-finite value " + s.dump());
        }
      }
      if (finite == 0) problems.push_back(where + " → no finite series: " + result.dump());
    }
  }
  return problems;
}

std::vector<std::string> StaticProblems(const json& dash, const std::vector<std::string>& vars) {
  std::vector<std::string> problems;
  if (dash.value("schemaVersion", 0) < 36) problems.push_back("schemaVersion below 36");
  std::set<std::string> have;
  for (const auto& v : dash["templating"]["list"]) have.insert(v["name"].get<std::string>());
  for (const auto& v : vars)
    if (!have.count(v)) problems.push_back("lacks variable " + v);
  for (const auto& v : dash["templating"]["list"]) {
    if (v["name"] == "datasource" && v["query"] != "prometheus")
      problems.push_back("datasource variable is not of type prometheus");
    // The live tests resolve `definition`: it must be the query Grafana runs.
    if (v["type"] == "query" && v["query"] != v["definition"])
      problems.push_back("variable query differs from its definition: " + v.dump());
  }
  for (const auto& panel : AllPanels(dash)) {
    if (panel.value("type", "") == "row") continue;
    const std::string title = panel.value("title", "?");
    if (panel["fieldConfig"]["defaults"].value("unit", "").empty())
      problems.push_back(title + ": no unit");
    if (panel["datasource"]["uid"] != "${datasource}")
      problems.push_back(title + ": datasource is not ${datasource}");
    if (panel.value("targets", json::array()).empty()) problems.push_back(title + ": no targets");
    for (const auto& t : panel.value("targets", json::array()))
      if (t.value("expr", "").empty()) problems.push_back(title + ": a target without expr");
  }
  return problems;
}

}  // namespace ccltune::testing
