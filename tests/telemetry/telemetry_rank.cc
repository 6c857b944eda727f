// telemetry_rank: one rank of a test communicator, using libccltune-telemetry through its C
// ABI only, as the runtime and the profiler plugin do. Arguments are key=value:
//   comm=HEX rank=R nranks=N device=D    the communicator (CommInit)
//   calls=K total_ns=T step_ns=S extra_ns=E choice=C op=O dtype=Y bytes=B
//                                        K calls, seq 0..K-1, total T + i*S + E, no split
//   call=op/dtype/bytes/choice/total/split/wait/transfer/count
//                                        `count` calls as given (split: kernel or none);
//                                        may repeat; numbered after the calls= ones
//   forwarded=reason/n dropped=what/n tuned=op/dtype/bytes/choice/seconds
//   hold_ms=M until=FILE                 stay up (serving /metrics) M ms or until FILE exists
// Prints "enabled=0|1", then "recorded=N ns_per_call=X" once every call was recorded
// (RecordCall returned), then "exiting" before main returns (the library's destructor shuts it
// down).
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/telemetry/ccltune_telemetry.h"

namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

std::uint64_t U64(const std::string& s) { return std::strtoull(s.c_str(), nullptr, 0); }

struct Args {
  std::map<std::string, std::string> one;
  std::vector<std::string> calls;  // call=...
  std::string Get(const std::string& k, const std::string& d) const {
    auto it = one.find(k);
    return it == one.end() ? d : it->second;
  }
  std::uint64_t Num(const std::string& k, std::uint64_t d) const {
    auto it = one.find(k);
    return it == one.end() ? d : U64(it->second);
  }
};

ccltuneTelemetryCall_t Call(std::uint64_t comm, const std::string& op, const std::string& dtype,
                            std::uint64_t bytes, const std::string& choice, std::uint64_t seq,
                            std::uint64_t total) {
  ccltuneTelemetryCall_t c{};
  c.size = sizeof c;
  c.comm_hash = comm;
  c.op = op.c_str();
  c.dtype = dtype.c_str();
  c.bytes = bytes;
  c.choice = choice.c_str();
  c.seq = seq;
  c.total_ns = total;
  c.split = ccltuneTelemetrySplitNone;
  return c;
}

std::uint64_t RecordGenerated(const Args& a, std::uint64_t comm) {
  const std::string op = a.Get("op", "allReduce"), dtype = a.Get("dtype", "fp32");
  const std::string choice = a.Get("choice", "nccl:algo=ring,proto=ll");
  const std::uint64_t n = a.Num("calls", 0);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t total =
        a.Num("total_ns", 100000) + i * a.Num("step_ns", 0) + a.Num("extra_ns", 0);
    ccltuneTelemetryCall_t c = Call(comm, op, dtype, a.Num("bytes", 1 << 20), choice, i, total);
    ccltuneTelemetryRecordCall(&c);
  }
  return n;
}

std::uint64_t RecordListed(const Args& a, std::uint64_t comm, std::uint64_t seq) {
  std::uint64_t recorded = 0;
  for (const std::string& spec : a.calls) {
    const std::vector<std::string> f = Split(spec, '/');
    if (f.size() != 9) {
      std::fprintf(stderr, "bad call=%s (9 fields)\n", spec.c_str());
      std::exit(2);
    }
    for (std::uint64_t i = 0; i < U64(f[8]); ++i, ++recorded) {
      ccltuneTelemetryCall_t c = Call(comm, f[0], f[1], U64(f[2]), f[3], seq++, U64(f[4]));
      if (f[5] == "kernel") c.split = ccltuneTelemetrySplitKernel;
      c.wait_ns = U64(f[6]);
      c.transfer_ns = U64(f[7]);
      ccltuneTelemetryRecordCall(&c);
    }
  }
  return recorded;
}

void RecordCounters(const Args& a, std::uint64_t comm) {
  if (auto f = Split(a.Get("forwarded", ""), '/'); f.size() == 2)
    ccltuneTelemetryForwarded(f[0].c_str(), U64(f[1]));
  if (auto f = Split(a.Get("dropped", ""), '/'); f.size() == 2)
    ccltuneTelemetryDropped(f[0].c_str(), U64(f[1]));
  if (auto f = Split(a.Get("tuned", ""), '/'); f.size() == 5)
    ccltuneTelemetryTuned(comm, f[0].c_str(), f[1].c_str(), U64(f[2]), f[3].c_str(),
                          std::strtod(f[4].c_str(), nullptr));
}

void Hold(const Args& a) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(a.Num("hold_ms", 0));
  const std::string file = a.Get("until", "");
  struct stat st {};
  while (std::chrono::steady_clock::now() < until && (file.empty() || stat(file.c_str(), &st) != 0))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    if (eq == std::string::npos) return 2;
    if (arg.substr(0, eq) == "call") {
      a.calls.push_back(arg.substr(eq + 1));
    } else {
      a.one[arg.substr(0, eq)] = arg.substr(eq + 1);
    }
  }
  std::printf("enabled=%d abi=%d\n", ccltuneTelemetryEnabled(), ccltuneTelemetryAbiVersion());
  std::fflush(stdout);
  const std::uint64_t comm = std::strtoull(a.Get("comm", "c0ffee").c_str(), nullptr, 16);
  ccltuneTelemetryComm_t info{sizeof info, comm, static_cast<int>(a.Num("rank", 0)),
                              static_cast<int>(a.Num("nranks", 1)),
                              static_cast<int>(a.Num("device", 0))};
  ccltuneTelemetryCommInit(&info);
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t recorded = RecordGenerated(a, comm);
  recorded += RecordListed(a, comm, recorded);
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  RecordCounters(a, comm);
  // The host time a call costs its caller, for the record (no test bounds it).
  std::printf("recorded=%llu ns_per_call=%.0f\n", static_cast<unsigned long long>(recorded),
              recorded ? ns / static_cast<double>(recorded) : 0.0);
  std::fflush(stdout);
  Hold(a);
  std::printf("exiting\n");
  std::fflush(stdout);
  return 0;
}
