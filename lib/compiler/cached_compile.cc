#include "lib/compiler/cached_compile.h"

#include <exception>
#include <optional>

#include "absl/strings/str_cat.h"
#include "lib/compiler/cache.h"
#include "lib/compiler/compiler.h"
#include "lib/compiler/diagnostics.h"
#include "lib/compiler/error_codes.h"
#include "neuron/version.h"

namespace neuron::compiler {
namespace {

// The status with another message, keeping its code and NCC payload.
absl::Status WithMessage(const absl::Status& status, const std::string& message) {
  absl::Status out(status.code(), message);
  status.ForEachPayload([&out](absl::string_view url, const absl::Cord& payload) {
    out.SetPayload(url, payload);
  });
  return out;
}

}  // namespace

absl::StatusOr<CachedCompile> CompileThroughCache(std::string_view input, std::string_view display,
                                                  const CompileOptions& o, CompileLog& log,
                                                  const FailureAnnotator& annotate) {
  std::optional<CompileCache> cache;
  std::string key;
  if (!o.cache_dir.empty() && !o.no_cache) {
    cache.emplace(o.cache_dir, NEURON_TOOLS_VERSION);
    key = CompileCache::Key(NEURON_TOOLS_VERSION, NormalizedOptions(o), input);
    CacheEntry entry = cache->Lookup(key);
    log.Info("Compile cache path: " + cache->EntryDir(key));
    if (entry.kind == CacheEntry::kFailure && o.retry_failed_compilation) {
      log.Info("Retrying a cached failed compilation at " + entry.dir);
      (void)cache->Evict(key);
    } else if (entry.kind == CacheEntry::kFailure) {
      log.Warning(absl::StrCat("Got a cached failed neff at ", entry.dir, ". Will skip compilation"));
      absl::Status cached = CompileError(kErrCachedFailure, absl::StrCat("cached failure: ", entry.error));
      log.Record(kError, std::string(cached.message()));
      return cached;
    } else if (entry.kind == CacheEntry::kSuccess) {
      log.Info(absl::StrCat("Using a cached neff at ", entry.dir,
                            "/model.neff. Exiting with a successfully compiled graph."));
      return CachedCompile{std::move(entry.neff), true, 0};
    }
  }

  absl::StatusOr<CompileResult> result = absl::InternalError("not run");
  try {
    result = CompileBytes(input, display, o, log);
  } catch (const std::exception& e) {
    result = CompileError(kErrInternal, absl::StrCat("internal error: ", e.what()));
  } catch (...) {
    result = CompileError(kErrInternal, "internal error: unknown exception");
  }
  if (!result.ok()) {
    const absl::Status status = AsInternalError(result.status());
    const std::string message = annotate ? annotate(status) : std::string(status.message());
    log.Record(kError, message);
    if (cache) (void)cache->StoreFailure(key, message, log.text());
    return WithMessage(status, message);
  }
  if (cache) {
    if (absl::Status s = cache->StoreSuccess(key, result->neff, log.text()); !s.ok()) {
      log.Warning(absl::StrCat("compile cache not updated: ", s.message()));
    }
  }
  return CachedCompile{std::move(result->neff), false, result->manifest.memory.scratch_peak};
}

}  // namespace neuron::compiler
