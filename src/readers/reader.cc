// What every reader shares (pihydrate/reader.h): the input's head, the
// source map, a session given as text, and the registry's choice.
#include "pihydrate/reader.h"

#include <algorithm>

namespace pihydrate {

InputHead make_input_head(std::string_view text, bool whole) {
  InputHead head;
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.remove_prefix(3);
  head.text = text;
  head.whole = whole;
  std::size_t pos = 0;
  while (pos < text.size() && head.lines.size() < 8) {
    const std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") != std::string_view::npos) head.lines.push_back(line);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return head;
}

void SourceMap::add(const Origin& origin, std::string_view name) {
  Origin o = origin;
  // Records are named alike ("assistant record"): a name the last line
  // already had is not stored again.
  if (!origins_.empty() && name_of(origins_.back()) == name) {
    o.name_begin = origins_.back().name_begin;
  } else {
    o.name_begin = names_.size();
    names_.append(name);
  }
  o.name_size = static_cast<std::uint32_t>(name.size());
  origins_.push_back(o);
}

void SourceMap::add(std::uint64_t line, std::uint64_t column, std::string_view name) {
  Origin o;
  o.line = line;
  o.column = column;
  add(o, name);
}

void SourceMap::map_back(Diagnostic& d) const {
  if (d.line == 0 || d.line > origins_.size()) return;
  const Origin& o = origins_[d.line - 1];
  if (o.copied_column != 0 && d.column >= o.copied_column && d.column < o.copied_column + o.copied_size)
    d.column = o.input_copied_column + (d.column - o.copied_column);
  else
    d.column = o.column;
  d.line = o.line;
  // A line of the written session means nothing to the input's reader; the record it came from does.
  const std::string_view name = name_of(o);
  if (!name.empty()) d.message = std::string(name) + ": " + d.message;
}

bool ReadSession::ok() const {
  return std::none_of(diagnostics.begin(), diagnostics.end(),
                      [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

void take_session_text(std::string text, const std::string& name, const IndexOptions& options, ReadSession& out) {
  out.index = build_session_index(*make_memory_source(text), name, options);
  out.lines = make_memory_line_source(std::move(text));
}

void ReaderRegistry::add(const Reader& reader) { readers_.push_back(&reader); }

const Reader* ReaderRegistry::find(std::string_view name) const {
  for (const Reader* r : readers_)
    if (name == r->info().name) return r;
  return nullptr;
}

const Reader* ReaderRegistry::choose(const InputHead& head) const {
  const Reader* best = nullptr;
  int best_bid = kBidNone;
  for (const Reader* r : readers_) {
    const int bid = r->bid(head);
    if (bid > best_bid) {
      best = r;
      best_bid = bid;
    }
  }
  return best;
}

std::string ReaderRegistry::tried() const {
  std::string text = "tried ";
  for (std::size_t i = 0; i < readers_.size(); ++i) {
    const ReaderInfo& info = readers_[i]->info();
    text += std::string(i == 0                     ? ""
                        : i + 1 == readers_.size() ? " and "
                                                   : ", ") +
            info.title + " (" + info.recognised_by + ")";
  }
  return text + "; give --from to say which it is";
}

std::string ReaderRegistry::names(std::string_view separator) const {
  std::string text;
  for (const Reader* r : readers_) text += std::string(text.empty() ? "" : separator) + r->info().name;
  return text;
}

}  // namespace pihydrate
