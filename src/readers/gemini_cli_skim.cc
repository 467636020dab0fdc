// RecordSkimmer (gemini_cli_skim.h): a FastSaxReader handler that reads
// RecordFields and checks the syntax of the rest without keeping it.
#include "readers/gemini_cli_skim.h"

#include <cstdint>
#include <vector>

#include "core/fast_sax.h"

namespace pihydrate {
namespace gemini_cli {
namespace {

// A FastSaxReader handler that reads RecordFields from a record's line and
// steps over the rest (message text, tool output, images), checking its
// syntax: a fraction of a parse into a Document. Not sure (false), and the
// Document is parsed, for what it does not read: a list of messages, a key
// with escapes, a count RapidJSON might read as a double.
class RecordSkim {
 public:
  RecordSkim(RecordFields& f, std::vector<int>& places) : f_(f), places_(places) {
    f_.clear();
    places_.clear();
  }
  bool StartObject() { return open(true); }
  bool StartArray() { return open(false); }
  bool EndObject(unsigned) { return close(); }
  bool EndArray(unsigned) { return close(); }
  bool skips_current() const { return places_.back() == kSkip; }  // after Start*: never empty
  bool wants_text() const {
    if (places_.empty()) return false;  // a line that is a bare string: scalar() says it is no record
    switch (places_.back()) {
      case kInTop: return key_ != kNone && key_ != kSet && key_ != kTokens && key_ != kDirs && key_ != kMessages;
      case kInSet: return key_ == kSetKind;
      case kInDirs:
      case kInSetDirs: return element_ == 0;
      default: return false;
    }
  }
  bool Key(const char* s, unsigned n, bool) {
    const std::string_view k(s, n);
    key_ = kNone;
    const auto place = static_cast<Place>(places_.back());
    const auto is = [&](const char* name, Target t) {
      if (k == name) key_ = t;
    };
    if (place == kInTop) {
      is("$rewindTo", kRewind), is("id", kId), is("$set", kSet), is("sessionId", kSessionId);
      is("projectHash", kProjectHash), is("startTime", kStartTime), is("directories", kDirs), is("kind", kKind);
      is("timestamp", kTimestamp), is("model", kModel), is("tokens", kTokens), is("messages", kMessages);
    } else if (place == kInSet) {
      is("kind", kSetKind), is("directories", kSetDirs), is("messages", kSetMessages);
    } else if (place == kInTokens) {
      is("input", kInput), is("output", kOutput), is("cached", kCached), is("thoughts", kThoughts);
    }
    return true;
  }
  bool String(const char* s, unsigned n, bool) { return scalar(std::string_view(s, n), true); }
  bool Null() { return scalar({}, false); }
  bool Bool(bool) { return scalar({}, false); }
  bool RawNumber(const char* s, unsigned n, bool) {
    if (places_.empty()) return false;
    if (places_.back() != kInTokens || key_ == kNone) return scalar({}, false);
    // json_count: a number RapidJSON reads as a uint64; a negative or a fraction counts 0.
    const std::string_view digits(s, n);
    std::uint64_t count = 0;
    if (digits.find_first_not_of("0123456789") == std::string_view::npos) {
      if (digits.size() > 19) return false;  // near the uint64 limit: RapidJSON decides
      for (char c : digits) count = count * 10 + static_cast<std::uint64_t>(c - '0');
    } else if (digits.find_first_of(".eE") == std::string_view::npos && digits.size() > 19) {
      return false;
    }
    count_target() = count;
    return true;
  }

 private:
  enum Place { kInTop, kInSet, kInTokens, kInDirs, kInSetDirs, kSkip };
  enum Target {
    kNone,
    kRewind,
    kId,
    kSet,
    kSessionId,
    kProjectHash,
    kStartTime,
    kDirs,
    kKind,
    kTimestamp,
    kModel,
    kTokens,
    kMessages,
    kSetKind,
    kSetDirs,
    kSetMessages,
    kInput,
    kOutput,
    kCached,
    kThoughts
  };

  std::uint64_t& count_target() {
    MessageFields& m = f_.fields;
    return key_ == kInput ? m.input : key_ == kOutput ? m.output : key_ == kCached ? m.cached : m.thoughts;
  }

  // A value that is not a container, at the current key (or element).
  bool scalar(std::string_view text, bool is_string) {
    if (places_.empty()) return false;  // a record is an object: RapidJSON says why not
    const auto place = static_cast<Place>(places_.back());
    if (place == kInDirs || place == kInSetDirs) {
      if (element_++ == 0 && is_string)  // a C string, as metadata_of reads it
        directories(place) = std::string(text.substr(0, text.find('\0')));
      return true;
    }
    if (place == kInTokens) {
      if (key_ != kNone) count_target() = 0;
      return true;
    }
    if (place == kInSet) {
      if (key_ == kSetKind) f_.set_metadata.kind = is_string ? std::string(text) : std::string();
      if (key_ == kSetDirs) f_.set_metadata.first_directory.reset();
      return true;
    }
    set_top(is_string ? std::optional<std::string_view>(text) : std::nullopt);
    return true;
  }

  // A top-level member: a string, or nullopt for any other value (a view of the line: only the fields read are
  // copied, into strings that keep their room from one record to the next).
  void set_top(std::optional<std::string_view> v) {
    const auto optional = [&](std::optional<std::string>& field) {
      if (v)
        field.emplace(*v);
      else
        field.reset();
    };
    switch (key_) {
      case kRewind: optional(f_.rewind); break;
      case kId:
        f_.message = v.has_value();
        f_.fields.id.assign(v.value_or(""));
        break;
      case kSessionId: optional(f_.session_id); break;
      case kProjectHash: optional(f_.project_hash); break;
      case kStartTime: f_.start_time.assign(v.value_or("")); break;
      case kKind: f_.metadata.kind.assign(v.value_or("")); break;
      case kTimestamp: f_.fields.timestamp.assign(v.value_or("")); break;
      case kModel: f_.fields.model.assign(v.value_or("")); break;
      case kSet: f_.set = false; break;
      case kTokens: f_.fields.tokens = false; break;
      case kDirs: f_.metadata.first_directory.reset(); break;
      default: break;
    }
  }

  std::optional<std::string>& directories(Place place) {
    return place == kInDirs ? f_.metadata.first_directory : f_.set_metadata.first_directory;
  }

  bool open(bool object) {
    if (places_.empty()) {
      places_.push_back(object ? kInTop : kSkip);
      return object;  // a top-level array: RapidJSON says why it is no record
    }
    const auto place = static_cast<Place>(places_.back());
    Place next = kSkip;
    if (place == kInTop) {
      if ((key_ == kMessages) && !object) return false;  // a list of messages: read from the Document
      if (key_ == kSet && object) {
        f_.set = true;
        f_.set_metadata = Metadata();
        next = kInSet;
      } else if (key_ == kTokens && object) {
        f_.fields.tokens = true;
        f_.fields.input = f_.fields.output = f_.fields.cached = f_.fields.thoughts = 0;
        next = kInTokens;
      } else if (key_ == kDirs && !object) {
        f_.metadata.first_directory.reset();
        next = kInDirs;
      } else {
        set_top(std::nullopt);
      }
    } else if (place == kInSet) {
      if (key_ == kSetMessages && !object) return false;
      if (key_ == kSetKind) f_.set_metadata.kind.clear();
      if (key_ == kSetDirs) f_.set_metadata.first_directory.reset();
      if (key_ == kSetDirs && !object) next = kInSetDirs;
    } else if (place == kInTokens) {
      if (key_ != kNone) count_target() = 0;
    } else if (place == kInDirs || place == kInSetDirs) {
      ++element_;
    }
    if (next == kInDirs || next == kInSetDirs) element_ = 0;
    places_.push_back(next);
    return true;
  }

  bool close() {
    places_.pop_back();
    return true;
  }

  RecordFields& f_;
  std::vector<int>& places_;  // Place: the open containers, kept from one record to the next
  Target key_ = kNone;
  std::size_t element_ = 0;  // of the open directories list
};

}  // namespace

bool RecordSkimmer::skim(std::string_view text, RecordFields& fields) {
  RecordSkim skim(fields, places_);
  FastSaxReader<RecordSkim> reader;
  return reader.parse(text.data(), text.data() + text.size(), skim, SIZE_MAX);  // deeper: RapidJSON
}

}  // namespace gemini_cli
}  // namespace pihydrate
