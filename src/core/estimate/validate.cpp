#include "core/estimate/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "core/common/error.hpp"
#include "core/estimate/validate_detail.hpp"

namespace gpusage::estimate {

ValidationReport validate(const std::vector<Measurement>& measurements, const catalog::Catalog& catalog,
                          const Calibration& calibration) {
  ValidationReport report;
  for (const Measurement& m : measurements) {
    ValidationRow row{m, std::nullopt, std::nullopt, {}, {}, {}, {}, false, std::nullopt};
    if (auto p = detail::prepare(m, catalog, row.skipped)) {
      row.architecture = p->gpu.architecture;
      row.geforce = catalog::is_geforce(p->gpu.family);
      row.gpu_class = detail::gpu_class(p->gpu);
      detail::predict_row(row, *p, calibration);
    }
    report.rows.push_back(std::move(row));
  }
  detail::summarize_report(report);
  return report;
}

ValidationReport cross_validate(const std::vector<Measurement>& measurements, const catalog::Catalog& catalog,
                                const ModelConstants& prior, CvGroup group,
                                const std::function<void(int, int)>& progress) {
  ValidationReport report;
  report.cv = group;
  std::vector<std::optional<detail::Prepared>> prepared;
  std::vector<std::string> groups_of;
  std::vector<std::string> groups;
  for (const Measurement& m : measurements) {
    ValidationRow row{m, std::nullopt, std::nullopt, {}, {}, {}, cv_group_of(m, group), false, std::nullopt};
    prepared.push_back(detail::prepare(m, catalog, row.skipped));
    if (prepared.back()) {
      row.architecture = prepared.back()->gpu.architecture;
      row.geforce = catalog::is_geforce(prepared.back()->gpu.family);
      row.gpu_class = detail::gpu_class(prepared.back()->gpu);
    }
    if (prepared.back() && std::find(groups.begin(), groups.end(), row.group) == groups.end()) {
      groups.push_back(row.group);
    }
    report.rows.push_back(std::move(row));
  }
  report.groups = static_cast<int>(groups.size());
  std::vector<const detail::Prepared*> prepared_rows;
  for (const auto& p : prepared) prepared_rows.push_back(p ? &*p : nullptr);
  const detail::MemoryVerdicts verdicts = detail::memory_verdicts(measurements, prepared_rows, prior);
  std::atomic<std::size_t> next{0};
  std::atomic<int> done{0};
  std::mutex failure_mutex;
  std::string failure;
  auto worker = [&] {
    while (true) {
      const std::size_t g = next++;
      if (g >= groups.size()) return;
      try {
        std::vector<detail::FitRow> rows;
        for (std::size_t i = 0; i < prepared.size(); ++i) {
          if (prepared[i] && report.rows[i].group != groups[g] && detail::fits_speed(measurements[i], *prepared[i])) {
            rows.push_back({&*prepared[i], measurements[i].value});
          }
        }
        Calibration calibration;
        calibration.constants = detail::fit_rows(rows, prior);
        calibration.constants.allocator_unreleasable_fraction = detail::fit_unreleasable_fraction(
            verdicts, [&](std::size_t i) { return report.rows[i].group != groups[g]; },
            prior.allocator_unreleasable_fraction);
        {
          std::lock_guard lock(failure_mutex);
          report.fold_constants[groups[g]] = calibration.constants;
        }
        for (std::size_t i = 0; i < prepared.size(); ++i) {
          if (prepared[i] && report.rows[i].group == groups[g]) {
            detail::predict_row(report.rows[i], *prepared[i], calibration);
          }
        }
      } catch (const std::exception& e) {
        std::lock_guard lock(failure_mutex);
        failure = fmt::format("holding out {} '{}': {}", to_string(group), groups[g], e.what());
      }
      const int finished = ++done;
      if (progress) progress(finished, static_cast<int>(groups.size()));
    }
  };
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (!failure.empty()) throw InputError(failure);
  detail::summarize_report(report);
  return report;
}

}  // namespace gpusage::estimate
