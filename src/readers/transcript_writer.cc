// What the transcript readers share (transcript_writer.h): reading a JSONL
// transcript record by record, and writing the pi session that stands for it.
#include "readers/transcript_writer.h"

#include <algorithm>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <rapidjson/error/en.h>

#include "core/files.h"
#include "core/json_spans.h"
#include "core/spool_indexer.h"
#include "pihydrate/formats.h"
#include "readers/thread_converter.h"

namespace pihydrate {

bool split_data_url(std::string_view url, std::string& mime, std::string& data) {
  if (url.rfind("data:", 0) != 0) return false;
  const std::size_t semi = url.find(";base64,");
  if (semi == std::string_view::npos) return false;
  mime.assign(url.substr(5, semi - 5));
  data.assign(url.substr(semi + 8));
  return !mime.empty() && !data.empty();
}

namespace {

// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's days_from_civil): what timegm
// counts, a day past a month's end included.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// The times the agents write, "2026-11-28T06:59:44.676Z", read without ms_from_iso's strings and timegm (4% of the
// Gemini CLI reader); false for any other shape, or a field out of its range, which ms_from_iso reads.
bool millis_of_utc_millis(std::string_view t, std::int64_t& ms) {
  if (t.size() != 24 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' || t[19] != '.' ||
      t[23] != 'Z')
    return false;
  const auto number = [&](std::size_t at, std::size_t n, unsigned& value) {
    value = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (t[i] < '0' || t[i] > '9') return false;
      value = value * 10 + static_cast<unsigned>(t[i] - '0');
    }
    return true;
  };
  unsigned year, month, day, hour, minute, second, milli;
  if (!(number(0, 4, year) && number(5, 2, month) && number(8, 2, day) && number(11, 2, hour) &&
        number(14, 2, minute) && number(17, 2, second) && number(20, 3, milli)))
    return false;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return false;
  ms = ((days_from_civil(year, month, day) * 24 + hour) * 60 + minute) * 60 + second;
  ms = ms * 1000 + milli;
  return true;
}

}  // namespace

std::int64_t millis_of(const std::string& iso, std::int64_t fallback) {
  std::int64_t ms = 0;
  if (millis_of_utc_millis(iso, ms)) return ms < 0 ? fallback : ms;
  ms = thread_converter::ms_from_iso(iso);
  return ms < 0 ? fallback : ms;
}

std::string_view EntryIds::key(std::uint32_t k) const {
  const std::size_t begin = k == 0 ? 0 : key_ends_[k - 1];
  return std::string_view(keys_).substr(begin, key_ends_[k] - begin);
}

std::string EntryIds::id_for(std::string_view key) {
  for (std::uint64_t seed = 0;; ++seed) {
    std::string id = hex8_id(stable_hash(key, 1469598103934665603ULL + seed));
    std::uint32_t value = 0;
    for (const char c : id) value = value << 4 | static_cast<std::uint32_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    ids_.push_back(value);  // taken by this key, unless another has it
    const std::int64_t taken_by = by_id_.put_if_absent(static_cast<std::uint32_t>(ids_.size() - 1));
    if (taken_by < 0) {
      keys_.append(key);
      key_ends_.push_back(keys_.size());
      return id;
    }
    ids_.pop_back();
    if (this->key(static_cast<std::uint32_t>(taken_by)) == key) return id;
  }
}

void read_transcript(std::string transcript, const std::string& file, ReadSession& out,
                     const std::function<void(TranscriptRecord&&)>& read) {
  read_transcript(BytesSource(std::move(transcript)), file, out, read);
}

void read_transcript(const LogSource& transcript, const std::string& file, ReadSession& out,
                     const std::function<void(TranscriptRecord&&)>& read, const TranscriptSkim& skim) {
  std::string unused;
  TranscriptWriter report(file, unused, out);
  for_each_log_line(transcript, [&](const JsonlLine& line) {
    TranscriptRecord record;
    record.line = line.number;
    record.column = line.column_of(line.begin + line.text.find_first_not_of(" \t"));
    record.offset = line.begin;
    record.size = line.text.size();
    if (skim && skim(line.text, record)) {
      ++out.records_read;
      return out.ok();
    }
    rapidjson::Document& doc = record.doc;
    doc.Parse(line.text.data(), line.text.size());
    if (doc.HasParseError()) {
      const std::uint64_t at = line.column_of(line.begin + doc.GetErrorOffset());
      const std::string why = rapidjson::GetParseError_En(doc.GetParseError());
      if (line.last_without_newline) {
        report.warn(line.number, at, "the last line is cut off (" + why + "); left out", "truncated-last-line");
        return true;
      }
      report.error(line.number, at, "not JSON: " + why, "each line of a transcript is one JSON object");
      return false;
    }
    if (!doc.IsObject()) {
      report.error(line.number, record.column, "a record is a JSON object",
                   "each line of a transcript is one JSON object");
      return false;
    }
    ++out.records_read;
    read(std::move(record));
    return out.ok();
  });
}

namespace {

constexpr std::size_t kSpoolBlockBytes = std::size_t{1} << 20;

}  // namespace

struct SessionSpool::State {
  std::unique_ptr<SpooledLines> lines = std::make_unique<SpooledLines>();
  std::unique_ptr<SpoolIndexer> indexer;
  SpoolBlock block;
  std::string name;
};

ReadSession read_transcript(const ReaderInput& input, const ReadOptions& options, const TranscriptRun& run) {
  ReadSession out;
  std::string text;
  if (input.fd() < 0) {
    run(BytesSource(input.read_all()), text, nullptr, out);
    if (out.ok()) take_session_text(std::move(text), input.name(), options.index, out);
    return out;
  }
  SessionSpool spool(input.name(), options.index);
  run(FileSource(input.fd(), input.name()), text, &spool, out);
  if (out.ok()) spool.finish(text, out);
  return out;
}

SessionSpool::SessionSpool(const std::string& name, const IndexOptions& options) : state_(std::make_unique<State>()) {
  state_->name = name;
  state_->lines->spool.fd = make_unlinked_temp("the converted session");
  state_->indexer = std::make_unique<SpoolIndexer>(state_->lines->spool.fd, name, options);
}

SessionSpool::~SessionSpool() = default;

void SessionSpool::take_block(std::string& text) {
  if (text.size() < kSpoolBlockBytes) return;
  state_->block.bytes.swap(text);
  state_->indexer->append(state_->block);  // leaves an emptied block, whose buffer `text` takes next time
  text.clear();
}

void SessionSpool::finish(std::string& text, ReadSession& out) {
  if (!text.empty()) {
    state_->block.bytes.swap(text);
    state_->indexer->append(state_->block);
  }
  std::string().swap(text);
  out.index = state_->indexer->finish();
  state_->lines->lines =
      make_spool_line_source(state_->lines->spool.fd, -1, state_->indexer->take_layout(), state_->name);
  out.lines = std::move(state_->lines);
}

JsonWriter& TranscriptWriter::start_line() {
  buffer_.Clear();
  writer_.Reset(buffer_);
  writer_.StartObject();
  return writer_;
}

void TranscriptWriter::end_line(const TranscriptOrigin& origin) {
  writer_.EndObject();
  text_.append(buffer_.GetString(), buffer_.GetSize()).push_back('\n');
  out_.origins.add(origin.line, origin.column, origin.record);
  if (spool_ != nullptr) spool_->take_block(text_);
}

void TranscriptWriter::header(const std::string& session_id, const std::string& timestamp, const std::string& cwd,
                              const TranscriptOrigin& origin) {
  JsonWriter& w = start_line();
  write_key_string(w, "type", "session");
  w.Key("version");
  w.Int(3);
  write_key_string(w, "id", session_id);
  write_key_string(w, "timestamp", timestamp);
  write_key_string(w, "cwd", cwd);
  end_line(origin);
}

void TranscriptWriter::entry(const char* type, const std::string& id, const std::string& parent,
                             const std::string& timestamp, const TranscriptOrigin& origin,
                             const std::function<void(JsonWriter&)>& write_members) {
  JsonWriter& w = start_line();
  write_key_string(w, "type", type);
  write_key_string(w, "id", id);
  w.Key("parentId");
  if (parent.empty())
    w.Null();
  else
    write_string(w, parent);
  write_key_string(w, "timestamp", timestamp);
  write_members(w);
  end_line(origin);
}

void TranscriptWriter::error(std::uint64_t line, std::uint64_t column, std::string message, std::string hint) {
  out_.diagnostics.push_back(Diagnostic{Code::kTranscriptInvalid, Severity::kError,
                                        code_info(Code::kTranscriptInvalid).level, file_, line, column,
                                        std::move(message), std::move(hint)});
}

void TranscriptWriter::warn(std::uint64_t line, std::uint64_t column, std::string message, const std::string& repair) {
  listed_.add(Diagnostic{Code::kTranscriptRecordDropped,
                         Severity::kWarning,
                         code_info(Code::kTranscriptRecordDropped).level,
                         file_,
                         line,
                         column,
                         std::move(message),
                         {}});
  count(repair);
}

bool JsonWriter::String(const Ch* text, rapidjson::SizeType length, bool) {
  // What Writer escapes, and how: 'u' is \u00XX.
  static constexpr char kEscape[256] = {
      'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f',  'r', 'u', 'u',  // 00
      'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',  'u', 'u', 'u',  // 10
      0,   0,   '"', 0,   0,   0,   0,   0,   0,   0,   0,   0,   0,    0,   0,   0,    // 20
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,    0,   0,   0,    // 30
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,    0,   0,   0,    // 40
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   '\\', 0,   0,   0,    // 50
  };
  static constexpr char kHex[] = "0123456789ABCDEF";
  Prefix(rapidjson::kStringType);
  const std::size_t room = 2 + std::size_t{length} * 6;  // every byte \u00XX, and the quotes
  char* const begin = os_->Push(room);
  char* out = begin;
  *out++ = '"';
  for (const char *p = text, *end = text + length; p != end;) {
    const char* run = p;
#ifdef __SSE2__
    // 16 bytes at a time while none is a control byte, a quote or a backslash (kEscape's).
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), control = _mm_set1_epi8(0x1f);
    for (; end - p >= 16; p += 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m128i escaped =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)),
                       _mm_cmpeq_epi8(_mm_max_epu8(bytes, control), control));  // unsigned bytes <= 0x1f
      if (const int mask = _mm_movemask_epi8(escaped); mask != 0) {
        p += __builtin_ctz(static_cast<unsigned>(mask));
        break;
      }
    }
#endif
    while (p != end && kEscape[static_cast<unsigned char>(*p)] == 0) ++p;
    std::memcpy(out, run, static_cast<std::size_t>(p - run));
    out += p - run;
    if (p == end) break;
    const auto c = static_cast<unsigned char>(*p++);
    *out++ = '\\';
    *out++ = kEscape[c];
    if (kEscape[c] == 'u') {
      *out++ = '0';
      *out++ = '0';
      *out++ = kHex[c >> 4];
      *out++ = kHex[c & 15];
    }
  }
  *out++ = '"';
  os_->Pop(room - static_cast<std::size_t>(out - begin));
  return EndValue(true);
}

void write_string(JsonWriter& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

void write_key_string(JsonWriter& w, const char* key, std::string_view s) {
  w.Key(key);
  write_string(w, s);
}

void begin_message(JsonWriter& w, const char* role) {
  w.Key("message");
  w.StartObject();
  write_key_string(w, "role", role);
  w.Key("content");
  w.StartArray();
}

void begin_tool_result(JsonWriter& w, std::string_view call_id, std::string_view tool_name) {
  w.Key("message");
  w.StartObject();
  write_key_string(w, "role", "toolResult");
  write_key_string(w, "toolCallId", call_id);
  write_key_string(w, "toolName", tool_name);
  w.Key("content");
  w.StartArray();
}

void write_text_block(JsonWriter& w, std::string_view text) {
  w.StartObject();
  write_key_string(w, "type", "text");
  write_key_string(w, "text", text);
  w.EndObject();
}

void write_image_block(JsonWriter& w, std::string_view base64, std::string_view mime_type) {
  w.StartObject();
  write_key_string(w, "type", "image");
  write_key_string(w, "data", base64);
  write_key_string(w, "mimeType", mime_type);
  w.EndObject();
}

void write_object_or_empty(JsonWriter& w, const JsonValue* value) {
  if (value != nullptr && value->IsObject()) {
    value->Accept(w);
    return;
  }
  w.StartObject();
  w.EndObject();
}

void write_usage(JsonWriter& w, std::uint64_t input, std::uint64_t output, std::uint64_t cache_read,
                 std::uint64_t cache_write) {
  w.Key("usage");
  w.StartObject();
  w.Key("input");
  w.Uint64(input);
  w.Key("output");
  w.Uint64(output);
  w.Key("cacheRead");
  w.Uint64(cache_read);
  w.Key("cacheWrite");
  w.Uint64(cache_write);
  w.Key("totalTokens");
  w.Uint64(input + output + cache_read + cache_write);
  w.Key("cost");
  w.StartObject();
  for (const char* k : {"input", "output", "cacheRead", "cacheWrite", "total"}) {
    w.Key(k);
    w.Int(0);
  }
  w.EndObject();
  w.EndObject();
}

}  // namespace pihydrate
