// Shared-cache flags and loading (cache_flags.h).
#include "worker/cli/cache_flags.h"

namespace ccltune::worker::cli {

void AddCacheFlags(CLI::App* command, CacheFlags& flags, const std::string& fingerprint_help) {
  command->add_option("--fingerprint", flags.fingerprint, fingerprint_help);
  command
      ->add_option("--redis", flags.redis, "Redis URL (default: the private one of `ccltune tune`)")
      ->envname("CCLTUNE_REDIS_URL");
  command->add_option("--cache-dir", flags.cache_dir, "Private Redis data directory");
}

core::Result<FingerprintRecords> LoadFingerprintRecords(const CacheFlags& flags) {
  FingerprintRecords out;
  CCLTUNE_ASSIGN_OR_RETURN(out.source, exporting::CacheSource::Open(flags.redis, flags.cache_dir));
  core::ResultStore& store = out.source->store();
  CCLTUNE_ASSIGN_OR_RETURN(
      out.fingerprint, exporting::PickFingerprint(store, flags.fingerprint, out.source->where()));
  CCLTUNE_ASSIGN_OR_RETURN(out.records, store.List(out.fingerprint));
  return out;
}

}  // namespace ccltune::worker::cli
