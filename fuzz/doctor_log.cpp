// doctor's streaming log scanner (doctor --log, run's live rules). The scan must not depend on where the
// stream was cut: the chunked scan (chunk size 1 to 61 bytes, picked from the input's length) must equal the
// scan of the whole text. The log rules then run on it.
#include <algorithm>

#include "core/catalog/catalog.hpp"
#include "core/diagnose/log_rules.hpp"
#include "core/diagnose/log_scan.hpp"
#include "core/diagnose/rules.hpp"
#include "core/workload/workload.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusage;
  const std::size_t chunk = 1 + size * 7 % 61;
  const std::string text = fuzz::text_of(data, size);
  return fuzz::accepting_input_errors([&] {
    const diagnose::LogScan whole = diagnose::scan_log(text);
    diagnose::LogScanner scanner(diagnose::RuleTable::builtin().thresholds());
    for (std::size_t at = 0; at < text.size(); at += chunk)
      scanner.feed_text(std::string_view(text).substr(at, std::min(chunk, text.size() - at)));
    scanner.finish();
    const diagnose::LogScan& chunked = scanner.scan();
    FUZZ_CHECK(chunked.lines == whole.lines);
    FUZZ_CHECK(chunked.cuda_oom_count == whole.cuda_oom_count);
    FUZZ_CHECK(chunked.cuda_oom.size() == whole.cuda_oom.size());
    FUZZ_CHECK(chunked.cuda_oom_lines.size() == whole.cuda_oom_lines.size());
    FUZZ_CHECK(whole.cuda_oom.size() <= diagnose::Matches::kKept + 1);
    // The OOM fix runs the memory model on the log's figures: with a model and a card, as `doctor --model
    // gpt2 --gpu rtx5090` would.
    static const workload::Workload gpt2 = workload::build("gpt2");
    diagnose::RunContext context;
    context.workload = &gpt2;
    context.gpu = &catalog::Catalog::builtin().resolve("rtx5090");
    (void)diagnose::check_log(whole, context);
    (void)diagnose::check_log(whole, diagnose::RunContext{});
  });
}
