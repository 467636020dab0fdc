"use strict";
// The session files the agents pi-hydrate reads keep under a home directory, newest
// first: what /hydrate completes FILE from.
const fs = require("fs");
const path = require("path");

// Where the agents keep their sessions, as [agent, folder, depth, does a file name count].
const PLACES = [
  ["Claude Code", ".claude/projects", 2, (f) => f.endsWith(".jsonl")],
  ["Codex", ".codex/sessions", 4, (f) => f.startsWith("rollout-") && f.endsWith(".jsonl")],
  ["Gemini CLI", ".gemini/tmp", 3, (f, dir) => path.basename(dir) === "chats" && /\.jsonl?$/.test(f)],
  ["Qwen Code", ".qwen/projects", 3, (f, dir) => path.basename(dir) === "chats" && f.endsWith(".jsonl")],
  ["OpenCode", ".local/share/opencode", 1, (f) => f === "opencode.db"],
];

function walk(dir, depth, keep, out) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    return;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (depth > 1) walk(full, depth - 1, keep, out);
    } else if (entry.isFile() && keep(entry.name, dir)) {
      try {
        out.push({ file: full, mtime: fs.statSync(full).mtimeMs });
      } catch (e) {
        // gone since the listing
      }
    }
  }
}

// The agents' session files, newest first, each named with ~ for the home directory.
function sessionFiles(home) {
  const found = [];
  for (const [agent, folder, depth, keep] of PLACES) {
    const files = [];
    walk(path.join(home, folder), depth, keep, files);
    for (const f of files) found.push({ ...f, agent });
  }
  found.sort((a, b) => b.mtime - a.mtime);
  return found.map((f) => ({
    value: f.file.startsWith(home + path.sep) ? "~" + f.file.slice(home.length) : f.file,
    agent: f.agent,
    mtime: f.mtime,
  }));
}

module.exports = { sessionFiles };
