// Formats pi defines: session ids, entry ids, ISO-8601 times, derived ids, file names and the agent-dir cwd encoding.
#include "pihydrate/formats.h"

#include <cctype>
#include <cstdio>

namespace pihydrate {

bool is_valid_session_id(std::string_view id) {
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (id.empty() || !alnum(id.front()) || !alnum(id.back())) return false;
  for (char c : id)
    if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

bool is_pi_entry_id(std::string_view id) {
  if (id.size() != 8) return false;
  for (char c : id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool is_iso8601(std::string_view t) {
  auto digits = [&](std::size_t pos, std::size_t count) {
    if (pos + count > t.size()) return false;
    for (std::size_t i = pos; i < pos + count; ++i)
      if (!std::isdigit(static_cast<unsigned char>(t[i]))) return false;
    return true;
  };
  if (!(t.size() > 19 && digits(0, 4) && t[4] == '-' && digits(5, 2) && t[7] == '-' && digits(8, 2) && t[10] == 'T' &&
        digits(11, 2) && t[13] == ':' && digits(14, 2) && t[16] == ':' && digits(17, 2)))
    return false;
  std::size_t i = 19;
  if (i < t.size() && t[i] == '.') {
    std::size_t start = ++i;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
    if (i == start) return false;
  }
  if (i < t.size() && t[i] == 'Z') return i + 1 == t.size();
  return i + 6 == t.size() && (t[i] == '+' || t[i] == '-') && digits(i + 1, 2) && t[i + 3] == ':' && digits(i + 4, 2);
}

std::string hex8_id(std::uint64_t hash) {
  hash ^= hash >> 29;  // fold the high bits in
  // "%08x" of the low 32 bits, without printf: ids are made once per entry.
  std::string text(8, '0');
  for (int i = 7; i >= 0; --i, hash >>= 4) text[static_cast<std::size_t>(i)] = "0123456789abcdef"[hash & 0xf];
  return text;
}

std::uint64_t stable_hash(std::string_view text, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string derived_session_id(std::string_view basis) {
  std::uint64_t a = stable_hash(basis), b = stable_hash(std::string(basis) + "#session");
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-7%03x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xfff),
                static_cast<unsigned>(0x8000 | ((b >> 48) & 0x3fff)),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

bool is_portable_id(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string session_file_name(std::string_view timestamp, std::string_view session_id) {
  std::string name(timestamp);
  for (char& c : name)
    if (c == ':' || c == '.') c = '-';
  return name + "_" + std::string(session_id) + ".jsonl";
}

std::string encode_cwd_for_agent_dir(std::string_view cwd) {
  std::string path(cwd);
  if (!path.empty() && (path[0] == '/' || path[0] == '\\')) path.erase(0, 1);
  for (char& c : path)
    if (c == '/' || c == '\\' || c == ':') c = '-';
  return "--" + path + "--";
}

const char kZeroUsageJson[] =
    "{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":0,"
    "\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}}";

}  // namespace pihydrate
