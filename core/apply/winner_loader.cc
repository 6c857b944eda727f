// Deadline-bounded winner loading (winner_loader.h).
#include "core/apply/winner_loader.h"

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include "core/apply/redis_source.h"

namespace ccltune::apply {
namespace {

using Clock = std::chrono::steady_clock;

struct LoadJob {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  core::Result<ParsedFile> result{core::Internal("loader did not run")};
};

core::Result<ParsedFile> RunBounded(std::function<core::Result<ParsedFile>()> work,
                                    Clock::time_point deadline) {
  auto job = std::make_shared<LoadJob>();
  try {
    std::thread([job, work = std::move(work)] {
      auto r = work();
      std::lock_guard<std::mutex> lock(job->mu);
      job->result = std::move(r);
      job->done = true;
      job->cv.notify_all();
    }).detach();
  } catch (const std::system_error& e) {
    return core::Unavailable(std::string("cannot start the loader thread: ") + e.what());
  }
  std::unique_lock<std::mutex> lock(job->mu);
  if (!job->cv.wait_until(lock, deadline, [&] { return job->done; }))
    return core::TimeoutError("loading winners took longer than CCLTUNE_PLUGIN_TIMEOUT_MS");
  return std::move(job->result);
}

core::Result<ParsedFile> LoadFile(const std::string& path, const std::string& fingerprint) {
  // Only a regular file is opened: a directory "opens" and reads as garbage sizes, and a FIFO
  // would block the open until some writer came.
  std::error_code ec;
  const auto type = std::filesystem::status(path, ec).type();
  if (!ec && type != std::filesystem::file_type::regular &&
      type != std::filesystem::file_type::not_found)
    return core::Unavailable(
        "CCLTUNE_RESULTS_FILE " + path + " is not a regular file" +
        (type == std::filesystem::file_type::directory ? " (a directory)" : ""));
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return core::Unavailable("CCLTUNE_RESULTS_FILE " + path + " cannot be opened");
  const std::streamoff size = in.tellg();
  if (size < 0) return core::Unavailable("CCLTUNE_RESULTS_FILE " + path + " cannot be read");
  if (static_cast<std::uint64_t>(size) > kMaxResultsFileBytes)
    return core::DataLoss("CCLTUNE_RESULTS_FILE " + path + " is " + std::to_string(size) +
                          " bytes, more than the " + std::to_string(kMaxResultsFileBytes) +
                          " allowed");
  std::string text(static_cast<std::size_t>(size), '\0');
  in.seekg(0);
  in.read(text.data(), size);
  text.resize(static_cast<std::size_t>(in.gcount()));
  auto parsed = ParseResultsFile(text);
  if (!parsed.ok()) return parsed.status().WithContext(path);
  ParsedFile out;
  out.rejected = parsed->rejected;
  out.first_error = parsed->first_error;
  std::size_t other_fp = 0;
  for (auto& r : parsed->records) {
    if (r.fingerprint == fingerprint)
      out.records.push_back(std::move(r));
    else if (other_fp++ == 0 && out.first_error.empty())
      out.first_error = "records of fingerprint " + r.fingerprint + ", not " + fingerprint;
  }
  out.rejected += other_fp;
  return out;
}

}  // namespace

core::Result<ParsedFile> LoadWinners(const PluginConfig& config, const std::string& fingerprint,
                                     Clock::time_point deadline) {
  if (!config.results_file.empty()) {
    return RunBounded(
        [path = config.results_file, fingerprint] { return LoadFile(path, fingerprint); },
        deadline);
  }
  if (!config.redis_url.empty()) {
    return RunBounded([url = config.redis_url, fingerprint, dtype = config.dtype,
                       deadline] { return LoadFromRedis(url, fingerprint, dtype, deadline); },
                      deadline);
  }
  return core::NotFound("neither CCLTUNE_RESULTS_FILE nor CCLTUNE_REDIS_URL is set");
}

}  // namespace ccltune::apply
