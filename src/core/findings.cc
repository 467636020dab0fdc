// Findings: every one counted, the first kListedPerCode of each code kept.
#include "pihydrate/findings.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace pihydrate {
namespace {

// By position in the file, then in the order added.
struct Earlier {
  template <typename Kept>
  bool operator()(const Kept& a, const Kept& b) const {
    return std::tie(a.d.line, a.d.column, a.order) < std::tie(b.d.line, b.d.column, b.order);
  }
};

}  // namespace

void Findings::add(Diagnostic d) {
  const std::uint64_t stands_for = d.unlisted > 0 ? d.unlisted : 1;
  const bool error = d.severity == Severity::kError;
  if (error) error_at_[static_cast<int>(d.level)] = true;
  if (static_cast<int>(d.code) >= 900) limit_hit_ = true;
  if (static_cast<int>(d.level) > static_cast<int>(list_up_to_)) return;
  (error ? errors_ : warnings_) += stands_for;
  OfCode& of = codes_[d.code];
  if (of.file.empty()) of.file = d.file;
  if (d.unlisted > 0) {  // a summary: only its count carries over
    of.unlisted += d.unlisted;
    of.unlisted_error = of.unlisted_error || error;
    return;
  }
  Kept k{added_++, std::move(d)};
  if (of.kept.size() < kListedPerCode) {
    of.kept.push_back(std::move(k));
    if (of.kept.size() == kListedPerCode) std::make_heap(of.kept.begin(), of.kept.end(), Earlier());
    return;
  }
  // Full (a heap whose front is the last by position): the last gives way to an earlier one.
  if (Earlier()(k, of.kept.front())) {
    std::pop_heap(of.kept.begin(), of.kept.end(), Earlier());
    std::swap(of.kept.back(), k);
    std::push_heap(of.kept.begin(), of.kept.end(), Earlier());
  }
  ++of.unlisted;
  of.unlisted_error = of.unlisted_error || k.d.severity == Severity::kError;
}

void Findings::add_all(Diagnostics list) {
  for (Diagnostic& d : list) add(std::move(d));
}

Diagnostics Findings::take_kept() {
  std::vector<Kept> all;
  for (auto& [code, of] : codes_) {
    for (Kept& k : of.kept) all.push_back(std::move(k));
    of.kept.clear();
  }
  std::sort(all.begin(), all.end(), [](const Kept& a, const Kept& b) { return a.order < b.order; });
  Diagnostics list;
  list.reserve(all.size());
  for (Kept& k : all) list.push_back(std::move(k.d));
  return list;
}

void Findings::append_summaries(Diagnostics& list) const {
  for (const auto& [code, of] : codes_)
    if (of.unlisted > 0)
      list.push_back(
          unlisted_summary(code, of.unlisted_error ? Severity::kError : Severity::kWarning, of.file, of.unlisted));
}

Diagnostics Findings::take_listed() {
  Diagnostics list = take_kept();
  append_summaries(list);
  return list;
}

void FindingsList::add(Diagnostic d) {
  if (d.severity == Severity::kError || d.unlisted > 0) {
    list_.push_back(std::move(d));
    return;
  }
  OfCode& of = codes_[d.code];
  if (of.added == 0) of.file = d.file;
  if (of.added < kListedPerCode) {
    ++of.added;
    list_.push_back(std::move(d));
  } else {
    ++of.unlisted;
  }
}

void FindingsList::close() {
  for (auto& [code, of] : codes_) {
    if (of.unlisted > 0) list_.push_back(unlisted_summary(code, Severity::kWarning, of.file, of.unlisted));
    of.unlisted = 0;
  }
}

Diagnostic unlisted_summary(Code code, Severity severity, const std::string& file, std::uint64_t count) {
  Diagnostic d;
  d.code = code;
  d.severity = severity;
  d.level = code_info(code).level;
  d.file = file;
  d.message = std::to_string(count) + " more " + code_name(code) + " findings like the ones above are not listed";
  d.unlisted = count;
  return d;
}

void list_at_most_per_code(Diagnostics& list) {
  Findings findings;
  findings.add_all(std::move(list));
  list = findings.take_listed();
}

}  // namespace pihydrate
