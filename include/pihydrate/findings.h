// Findings gathered in bounded memory: a report lists at most
// kListedPerCode findings of one code, and one summary after them counts
// the rest. A file of a million skipped lines holds a hundred findings of
// each code while it is read, not a million.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pihydrate/diagnostic.h"

namespace pihydrate {

constexpr std::size_t kListedPerCode = 100;

class Findings {
 public:
  // Findings above `list_up_to` are counted for the verdicts (any_error)
  // but neither listed nor counted as errors or warnings.
  explicit Findings(Level list_up_to = Level::kLint) : list_up_to_(list_up_to) {}

  // Counts `d`, and keeps it while it is among the first kListedPerCode of
  // its code by position (line, column, then the order added). A summary
  // (Diagnostic::unlisted) adds what it stands for to its code's count.
  void add(Diagnostic d);
  void add_all(Diagnostics list);

  // The findings kept, in the order they were added; the summaries are
  // left for append_summaries.
  Diagnostics take_kept();
  // One summary per code with findings not listed, in code order: "N more
  // PHnnn findings like the ones above are not listed", about the file the
  // code's first finding named, and an error when any of them is.
  void append_summaries(Diagnostics& list) const;
  // take_kept(), then append_summaries(): the list a report gives.
  Diagnostics take_listed();

  // Of the findings up to the listing level, listed or not.
  std::uint64_t errors() const { return errors_; }
  std::uint64_t warnings() const { return warnings_; }
  // Whether an error at `level` was added (at any listing level).
  bool any_error_at(Level level) const { return error_at_[static_cast<int>(level)]; }
  // Whether a limit of pi-hydrate's own (PH9xx) stopped a check.
  bool limit_hit() const { return limit_hit_; }

 private:
  struct Kept {
    std::uint64_t order;  // among all added: what breaks a tie of position
    Diagnostic d;
  };
  struct OfCode {
    std::vector<Kept> kept;  // a max-heap by position while full
    std::uint64_t unlisted = 0;
    bool unlisted_error = false;
    std::string file;  // the first finding's
  };
  Level list_up_to_;
  std::map<Code, OfCode> codes_;
  std::uint64_t added_ = 0;
  std::uint64_t errors_ = 0, warnings_ = 0;
  bool error_at_[3] = {false, false, false};
  bool limit_hit_ = false;
};

// A reader's findings as it reads, in bounded memory: every error is
// added to `list`, and the first kListedPerCode warnings of each code;
// close() appends one summary per code of the warnings not added. (Errors
// are never held back: a reader stops at the first few, and `list` must
// show them to whoever checks it meanwhile.)
class FindingsList {
 public:
  explicit FindingsList(Diagnostics& list) : list_(list) {}
  void add(Diagnostic d);
  void close();

 private:
  struct OfCode {
    std::uint64_t added = 0, unlisted = 0;
    std::string file;  // the first finding's
  };
  Diagnostics& list_;
  std::map<Code, OfCode> codes_;
};

// The summary of `count` findings of `code` about `file` not listed.
Diagnostic unlisted_summary(Code code, Severity severity, const std::string& file, std::uint64_t count);

// `list` as a report gives it: at most kListedPerCode findings of a code,
// the first by position, in the order they were in; the rest, and any
// summaries among them, folded into one summary per code at the end.
// Applying it twice changes nothing.
void list_at_most_per_code(Diagnostics& list);

}  // namespace pihydrate
