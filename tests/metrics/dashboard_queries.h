// What the dashboard tests share: Prometheus' HTTP API (instant queries, series), and Grafana's
// part emulated: a dashboard's query variables resolved from label_values() and every panel
// target run with them. Used by dashboards_prometheus_test.cc (tuning dashboards) and
// programs_dashboard_test.cc (the Programs dashboard against real telemetry processes).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace ccltune::testing {

// What a dashboard must have without data: schemaVersion >= 36, the `vars`, the datasource
// variable of type prometheus, query variables whose query is their definition, and on every
// panel a unit, the ${datasource} data source and targets with an expr. One line per problem.
std::vector<std::string> StaticProblems(const nlohmann::json& dash,
                                        const std::vector<std::string>& vars);

// The source tree ($CCLTUNE_SOURCE_DIR, else the one this was built from).
std::string SourceDir();
// dashboards/NAME.json; throws (a test failure) when missing or broken.
nlohmann::json LoadDashboard(const std::string& name);

// A port P with P … P+n-1 all free a moment ago (bound on 0.0.0.0, as the ranks bind),
// below the kernel's ephemeral range: the ranks bind them only after they have opened many
// connections (Redis, the TCP mesh, the Pushgateway), and an ephemeral port taken by one of
// those would make a rank's /metrics bind fail. 0 when none was found.
int FreePortRange(int n);
// The last `max` bytes of a file (a child's log, for failure messages).
std::string ReadTail(const std::string& path, std::size_t max = 4000);

// GET path_and_query from Prometheus' API: its "data" when status is success.
core::Result<nlohmann::json> PromApi(int port, const std::string& path_and_query);
// An instant query evaluated at `at` (Unix seconds, as Prometheus takes it). The panels are
// evaluated at one moment while the ranks were still up: once a rank exits, its next scrape
// fails and Prometheus marks its scraped series stale, as a dashboard's "now" would see.
core::Result<nlohmann::json> Query(int port, const std::string& expr, const std::string& at);
std::string UnixNow();
// Number of series of an instant query (0 on an error or no data).
std::size_t SeriesCount(int port, const std::string& expr, const std::string& at);

// The panels of a dashboard, those inside rows included.
std::vector<nlohmann::json> AllPanels(const nlohmann::json& dashboard);
// Grafana's variable forms ${v}, [[v]] and $v replaced by values (v = "__rate_interval" too).
std::string Substitute(std::string text, const std::map<std::string, std::string>& values);
// Fills the query variables in dashboard order like Grafana does: label_values(selector,
// label) over the series API, each selector seeing the variables before it. `use_all` picks
// the All value (".*") where the variable allows it, else the first value; `pinned` values
// are taken as given where the variable's values hold them (a user's pick).
core::Result<std::map<std::string, std::string>> ResolveVariables(
    int port, const nlohmann::json& dash, bool use_all,
    const std::map<std::string, std::string>& pinned);
// Runs every target of every panel at `at`; returns one line per query that returned nothing,
// an error, or a non-finite value, and counts the queries in `queries`. Panels for which
// `expect_empty` is true must return nothing instead (e.g. the epilogue panels for a job
// without epilogue problems). Histogram quantiles of empty histograms are NaN: the dashboards
// drop them with `>= 0`, so that "All" shows no line for them rather than NaN.
std::vector<std::string> CheckPanels(
    int port, const nlohmann::json& dash, const std::map<std::string, std::string>& values,
    const std::string& at, int& queries,
    const std::function<bool(const nlohmann::json&)>& expect_empty = nullptr);

}  // namespace ccltune::testing
