#include "core/diagnose/error_codes.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>

#include "core/common/error.hpp"
#include "core/common/text.hpp"
#include "core/diagnose/substring.hpp"

namespace gpusage::diagnose {

extern const char* const kBuiltinErrorCodes;  // generated from data/doctor/error_codes.toml

namespace error_codes_impl {

constexpr std::pair<ErrorKind, const char*> kKindNames[] = {
    {ErrorKind::none, "none"},
    {ErrorKind::cuda_oom, "cuda-oom"},
    {ErrorKind::driver_too_old, "driver-too-old"},
    {ErrorKind::driver_mismatch, "driver-mismatch"},
    {ErrorKind::no_kernel_image, "no-kernel-image"},
    {ErrorKind::illegal_memory_access, "illegal-memory-access"},
    {ErrorKind::device_assert, "device-assert"},
    {ErrorKind::cuda_error, "cuda-error"},
    {ErrorKind::nccl, "nccl"},
    {ErrorKind::cudnn, "cudnn"},
    {ErrorKind::cudnn_version_mismatch, "cudnn-version-mismatch"},
    {ErrorKind::xla_oom, "xla-oom"},
    {ErrorKind::xla_error, "xla-error"},
};

bool contains(std::string_view haystack, std::string_view needle) { return contains_phrase(haystack, needle); }

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

std::string_view identifier_at(std::string_view s, std::size_t pos) {
  std::size_t end = pos;
  while (end < s.size() && is_ident(s[end])) ++end;
  return s.substr(pos, end - pos);
}

std::string need_string(const toml::table& t, std::string_view key, const std::string& where) {
  auto value = t[key].value<std::string>();
  if (!value) throw InputError(fmt::format("{}: missing text field '{}'", where, key));
  return *value;
}

// The words that gate each family in identify(): a code is found by name, message or number only on a line
// with one of its family's words. The CUDA list has the messages that do not say "CUDA".
constexpr std::string_view kCudaWords[] = {"cuda",
                                           "illegal memory access",
                                           "device-side assert",
                                           "launch failure",
                                           "misaligned address",
                                           "forward compatibility was attempted",
                                           "unsupported display driver",
                                           "provided ptx was compiled"};
constexpr std::string_view kNcclWords[] = {"nccl"};
constexpr std::string_view kCudnnWords[] = {"cudnn"};
constexpr std::string_view kAbslWords[] = {"resource_exhausted", "resource exhausted", "xlaruntimeerror",
                                           "jaxruntimeerror",    "op_requires failed", "execution of replica",
                                           "status code"};

// The first number one of `patterns` captures in `line`, if any.
std::optional<int> number_in(const std::string& line, const std::vector<std::regex>& patterns) {
  std::smatch m;
  for (const auto& re : patterns) {
    if (std::regex_search(line, m, re)) return std::atoi(m[1].str().c_str());
  }
  return std::nullopt;
}

}  // namespace error_codes_impl

const char* to_string(ErrorKind kind) {
  using error_codes_impl::kKindNames;
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "?";
}

const char* finding_id(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::none: return "";
    case ErrorKind::cuda_oom: return "log-cuda-oom";
    case ErrorKind::driver_too_old: return "log-driver-too-old";
    case ErrorKind::driver_mismatch: return "log-driver-mismatch";
    case ErrorKind::no_kernel_image: return "log-no-kernel-image";
    case ErrorKind::illegal_memory_access: return "log-illegal-memory-access";
    case ErrorKind::device_assert: return "log-device-assert";
    case ErrorKind::cuda_error: return "log-cuda-error";
    case ErrorKind::nccl: return "log-nccl-error";
    case ErrorKind::cudnn: return "log-cudnn-error";
    case ErrorKind::cudnn_version_mismatch: return "log-cudnn-version-mismatch";
    case ErrorKind::xla_oom: return "log-jax-oom";
    case ErrorKind::xla_error: return "log-xla-error";
  }
  return "";
}

std::string ErrorCode::label() const { return fmt::format("{} ({})", name, number); }

ErrorCodeTable ErrorCodeTable::parse(std::string_view toml_text, const std::string& origin) {
  using error_codes_impl::kKindNames;
  using error_codes_impl::need_string;
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}: {} (line {})", origin, e.description(), e.source().begin.line));
  }
  ErrorCodeTable table;
  if (auto* list = root["family"].as_array()) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const auto* entry = list->get(i)->as_table();
      const std::string where = fmt::format("{}: family[{}]", origin, i);
      if (!entry) throw InputError(where + ": expected a table");
      table.families_.push_back(
          {need_string(*entry, "id", where), need_string(*entry, "title", where), need_string(*entry, "url", where)});
    }
  }
  if (auto* list = root["code"].as_array()) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const auto* entry = list->get(i)->as_table();
      const std::string where = fmt::format("{}: code[{}]", origin, i);
      if (!entry) throw InputError(where + ": expected a table");
      ErrorCode code;
      code.family = need_string(*entry, "family", where);
      if (!table.family(code.family)) throw InputError(fmt::format("{}: unknown family '{}'", where, code.family));
      auto number = (*entry)["number"].value<std::int64_t>();
      if (!number) throw InputError(where + ": missing integer field 'number'");
      code.number = static_cast<int>(*number);
      code.name = need_string(*entry, "name", where);
      if (auto* aliases = (*entry)["aliases"].as_array()) {
        for (const auto& a : *aliases) {
          if (auto s = a.value<std::string>()) code.aliases.push_back(*s);
        }
      }
      code.message = (*entry)["message"].value_or(std::string());
      const std::string kind = need_string(*entry, "kind", where);
      auto it =
          std::find_if(std::begin(kKindNames), std::end(kKindNames), [&](const auto& k) { return kind == k.second; });
      if (it == std::end(kKindNames))
        throw InputError(fmt::format("{} ({}): unknown kind '{}'", where, code.name, kind));
      code.kind = it->first;
      code.fix = (*entry)["fix"].value_or(std::string());
      if ((code.kind == ErrorKind::cuda_error || code.kind == ErrorKind::xla_error) && code.fix.empty()) {
        throw InputError(fmt::format("{} ({}): kind '{}' needs a fix", where, code.name, kind));
      }
      if (table.by_number(code.family, code.number)) {
        throw InputError(
            fmt::format("{} ({}): number {} listed twice in family {}", where, code.name, code.number, code.family));
      }
      table.lower_messages_.push_back(text::to_lower(code.message));
      table.by_name_.emplace(code.name, table.codes_.size());  // the first of two families keeps the name
      for (const auto& alias : code.aliases) table.by_name_.emplace(alias, table.codes_.size());
      table.codes_.push_back(std::move(code));
    }
  }
  return table;
}

const ErrorCodeTable& ErrorCodeTable::builtin() {
  static const ErrorCodeTable table = parse(kBuiltinErrorCodes, "data/doctor/error_codes.toml");
  return table;
}

const ErrorFamily* ErrorCodeTable::family(std::string_view id) const {
  for (const auto& f : families_) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

const ErrorCode* ErrorCodeTable::by_number(std::string_view family, int number) const {
  for (const auto& c : codes_) {
    if (c.family == family && c.number == number) return &c;
  }
  return nullptr;
}

const ErrorCode* ErrorCodeTable::by_name(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : &codes_[it->second];
}

std::vector<std::string_view> ErrorCodeTable::trigger_words(ErrorGate gate) const {
  using namespace error_codes_impl;
  switch (gate) {
    case ErrorGate::cuda: return {std::begin(kCudaWords), std::end(kCudaWords)};
    case ErrorGate::nccl: return {std::begin(kNcclWords), std::end(kNcclWords)};
    case ErrorGate::cudnn: return {std::begin(kCudnnWords), std::end(kCudnnWords)};
    case ErrorGate::absl: return {std::begin(kAbslWords), std::end(kAbslWords)};
  }
  return {};
}

bool ErrorCodeTable::gate_open(ErrorGate gate, std::string_view lower) const {
  for (std::string_view word : trigger_words(gate)) {
    if (error_codes_impl::contains(lower, word)) return true;
  }
  return false;
}

std::vector<const ErrorCode*> ErrorCodeTable::identify(std::string_view line, std::string_view lower) const {
  return identify(line, lower,
                  {gate_open(ErrorGate::cuda, lower), gate_open(ErrorGate::nccl, lower),
                   gate_open(ErrorGate::cudnn, lower), gate_open(ErrorGate::absl, lower)});
}

std::vector<const ErrorCode*> ErrorCodeTable::identify(std::string_view line, std::string_view lower,
                                                       const ErrorGates& gates) const {
  using error_codes_impl::contains;
  using error_codes_impl::identifier_at;
  using error_codes_impl::is_ident;
  using error_codes_impl::number_in;
  std::vector<const ErrorCode*> found;
  // Cheap gates first: most lines name no library at all.
  const bool cuda = gates.cuda;
  const bool nccl = gates.nccl;
  const bool cudnn = gates.cudnn;
  const bool absl = gates.absl;
  if (!cuda && !nccl && !cudnn && !absl) return found;

  auto in_family = [](const ErrorCode* c, std::initializer_list<std::string_view> families) {
    return c && std::find(families.begin(), families.end(), c->family) != families.end();
  };
  auto add = [&](const ErrorCode* c) {
    if (c && std::find(found.begin(), found.end(), c) == found.end()) found.push_back(c);
  };
  auto named = [&](std::string_view prefix, std::initializer_list<std::string_view> families) {
    for (std::size_t pos = line.find(prefix); pos != std::string_view::npos; pos = line.find(prefix, pos + 1)) {
      if (pos > 0 && is_ident(line[pos - 1])) continue;
      const ErrorCode* c = by_name(identifier_at(line, pos));
      if (in_family(c, families)) add(c);
    }
  };
  auto family_found = [&](std::initializer_list<std::string_view> families) {
    // "error == cudaSuccess (803 vs. 0)" names success only to compare with it: a success code decides nothing.
    return std::any_of(found.begin(), found.end(),
                       [&](const ErrorCode* c) { return c->kind != ErrorKind::none && in_family(c, families); });
  };

  // By name.
  if (cuda) {
    for (std::string_view prefix : {"cudaError", "CUDA_ERROR_", "cudaSuccess", "CUDA_SUCCESS"}) named(prefix, {"cuda"});
  }
  if (nccl) named("nccl", {"nccl"});
  if (cudnn) named("CUDNN_STATUS_", {"cudnn8", "cudnn9"});
  if (absl) {
    for (const auto& c : codes_) {
      if (c.family != "absl") continue;
      std::vector<std::string> spellings{c.name};
      spellings.insert(spellings.end(), c.aliases.begin(), c.aliases.end());
      for (const auto& spelling : spellings) {
        // "INTERNAL: …", "Resource exhausted: …"; RESOURCE_EXHAUSTED is distinctive enough on its own.
        const std::string with_colon = spelling + ":";
        const std::string_view wanted =
            spelling == "RESOURCE_EXHAUSTED" ? std::string_view(spelling) : std::string_view(with_colon);
        for (std::size_t pos = line.find(wanted); pos != std::string_view::npos; pos = line.find(wanted, pos + 1)) {
          if (pos > 0 && is_ident(line[pos - 1])) continue;
          add(&c);
          break;
        }
      }
    }
  }
  // By the library's message, on lines that say something failed (PyTorch's "CUDA error: …", TensorFlow's
  // "CUDA_ERROR_…: …", Caffe's "Check failed"): most lines that mention CUDA or NCCL are progress notes.
  // PyTorch reports errors met in destructors (event and stream teardown) as "Warning: CUDA warning: …".
  const bool failing = contains(lower, "error") || contains(lower, "fail") || contains(lower, "assert") ||
                       contains(lower, "cuda warning");
  for (std::size_t i = 0; failing && i < codes_.size(); ++i) {
    const ErrorCode& c = codes_[i];
    const bool gate = (c.family == "cuda" && cuda) || (c.family == "nccl" && nccl);
    if (gate && !lower_messages_[i].empty() && contains(lower, lower_messages_[i])) add(&c);
  }
  // By number, in the wrappers frameworks print, when the name or message did not already say which.
  std::string owned;
  auto str = [&]() -> const std::string& {
    if (owned.empty()) owned.assign(line);
    return owned;
  };
  if (cuda && !family_found({"cuda"}) &&
      (contains(lower, "error") || contains(lower, "vs. 0)") || contains(lower, "code="))) {
    static const std::vector<std::regex> patterns{
        // "CUDA error 700", "cuda runtime error (2)", "CUDA driver error: 803"
        std::regex(R"(cuda(?:\s+runtime|\s+driver)?\s+error\s*(?:code\s*)?[:=]?\s*\(?(\d{1,4})\b)", std::regex::icase),
        // "Error 803: system has …", "(error 700)", "error=700"
        std::regex(R"(\berror\s*=?\s*\(?(\d{1,4})\)?(?=[\s:),.]|$))", std::regex::icase),
        // Caffe's CHECK_EQ(error, cudaSuccess): "(803 vs. 0)"
        std::regex(R"(\((\d{1,4}) vs\. 0\))"),
        // cuda-samples' checkCudaErrors: "code=700(cudaErrorIllegalAddress)"
        std::regex(R"(\bcode=(\d{1,4}))"),
    };
    if (auto n = number_in(str(), patterns)) add(by_number("cuda", *n));
  }
  if (nccl && !family_found({"nccl"}) && (contains(lower, "nccl error") || contains(lower, "nccl result"))) {
    // "NCCL Error 2: unhandled system error", "NCCL error 1"
    static const std::vector<std::regex> patterns{
        std::regex(R"(nccl\s+(?:error|result)\s*(?:code\s*)?[:=]?\s*\(?(\d{1,2})\b)", std::regex::icase)};
    if (auto n = number_in(str(), patterns)) add(by_number("nccl", *n));
  }
  if (cudnn && !family_found({"cudnn8", "cudnn9"}) &&
      (contains(lower, "cudnn error") || contains(lower, "cudnn status"))) {
    static const std::vector<std::regex> patterns{
        std::regex(R"(cudnn\s*(?:error|status)\s*(?:code\s*)?[:=]?\s*\(?(\d{1,4})\b)", std::regex::icase)};
    // cuDNN 9 numbers its statuses from 1000 up; cuDNN 8's stop at 14, so the number says which.
    if (auto n = number_in(str(), patterns)) add(by_number(*n >= 1000 ? "cudnn9" : "cudnn8", *n));
  }
  if (absl && !family_found({"absl"}) && contains(lower, "status code")) {
    static const std::vector<std::regex> patterns{
        std::regex(R"(status\s*code\s*[:=]?\s*\(?(\d{1,2})\b)", std::regex::icase)};
    if (auto n = number_in(str(), patterns)) add(by_number("absl", *n));
  }
  if (std::any_of(found.begin(), found.end(), [](const ErrorCode* c) { return c->kind != ErrorKind::none; })) {
    found.erase(
        std::remove_if(found.begin(), found.end(), [](const ErrorCode* c) { return c->kind == ErrorKind::none; }),
        found.end());
  }
  return found;
}

}  // namespace gpusage::diagnose
