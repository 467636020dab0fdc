// The formats pi uses for ids, timestamps and file locations.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pihydrate {

// pi's session-id rule (--session-id): ^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$
bool is_valid_session_id(std::string_view id);

// The entry ids pi generates: 8 lowercase hex digits.
bool is_pi_entry_id(std::string_view id);

// ISO-8601 as Date.prototype.toISOString() writes it, or with an offset:
// YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)
bool is_iso8601(std::string_view text);

// Ids pi-hydrate derives, so the same input always gives the same bytes:
// FNV-1a over the text, and a UUIDv7-shaped id from it.
std::uint64_t stable_hash(std::string_view text, std::uint64_t seed = 1469598103934665603ULL);
std::string derived_session_id(std::string_view basis);
// An 8-hex entry id from a hash (its high bits folded in): the ids hydration gives.
std::string hex8_id(std::uint64_t hash);

// Ids pi and the providers accept everywhere: ^[A-Za-z0-9_-]{1,64}$ (the
// Anthropic tool-call id rule; also the ids pi-hydrate keeps).
bool is_portable_id(std::string_view id);

// The usage of a message that cost nothing, in pi's shape (every count 0,
// with cost): what pi-hydrate writes where usage is missing.
extern const char kZeroUsageJson[];

// pi's file name for a session: <timestamp with ':' and '.' as '-'>_<id>.jsonl
std::string session_file_name(std::string_view timestamp, std::string_view session_id);

// pi's directory name for a cwd under <agent dir>/sessions: "--" + the cwd
// with one leading '/' or '\' stripped and every '/', '\' and ':' as '-' + "--".
std::string encode_cwd_for_agent_dir(std::string_view cwd);

}  // namespace pihydrate
