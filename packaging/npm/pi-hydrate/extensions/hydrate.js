// pi-hydrate inside pi (docs/pi-package.md of the pi-hydrate repository):
//   /hydrate FILE      convert FILE (any input pi-hydrate reads) for this directory, store it
//                      where pi keeps this directory's sessions, and switch to it
//   /hydrate-context   what pi sends to the model for the current session (pi-hydrate context)
// pi-hydrate does the work; this file finds it, runs it, and reports what it says.
import os from "node:os";
import path from "node:path";
import { VERSION } from "@earendil-works/pi-coding-agent";
import binary from "../lib/binary.js";
import sessions from "../lib/sessions.js";

const TIMEOUT_MS = 120000;

// The binary this package carries for this machine, else `pi-hydrate` from PATH.
function findPiHydrate() {
  try {
    return binary.binaryPath(binary.platformKey(process.env, process.platform, process.arch));
  } catch (e) {
    if (!(e instanceof binary.NoBinaryError)) throw e;
    return "pi-hydrate";
  }
}

function expandHome(file) {
  if (file === "~") return os.homedir();
  if (file.startsWith("~/")) return path.join(os.homedir(), file.slice(2));
  return file;
}

// One argument: the text after the command, quotes around it removed.
function oneArgument(args) {
  let text = (args || "").trim();
  if (text.length >= 2 && (text[0] === '"' || text[0] === "'") && text[text.length - 1] === text[0]) {
    text = text.slice(1, -1);
  }
  return text;
}

function completions(prefix) {
  const text = (prefix || "").trim();
  const items = sessions.sessionFiles(os.homedir())
    .filter((f) => !text || f.value.startsWith(text) || f.value.includes(text))
    .slice(0, 50)
    .map((f) => ({
      value: f.value,
      label: f.value,
      description: `${f.agent}, ${new Date(f.mtime).toISOString().slice(0, 16).replace("T", " ")}`,
    }));
  return items.length ? items : null;
}

export default function (pi) {
  let piVersionArgs;

  async function run(args, cwd) {
    return pi.exec(findPiHydrate(), args, { cwd, timeout: TIMEOUT_MS });
  }

  // --pi-version for the running pi when pi-hydrate knows its major.minor (--list-pi-versions).
  async function versionArgs(cwd) {
    if (piVersionArgs === undefined) {
      piVersionArgs = [];
      const wanted = String(VERSION || "").split(".").slice(0, 2).join(".");
      const list = await run(["--list-pi-versions"], cwd);
      if (wanted && list.code === 0 && list.stdout.split(/\s+/).includes(wanted)) piVersionArgs = ["--pi-version", wanted];
    }
    return piVersionArgs;
  }

  function failed(ctx, what, result) {
    const text = (result.stderr || result.stdout || "").trim();
    ctx.ui.notify(`${what} failed (exit ${result.code}):\n${text}`, "error");
  }

  pi.registerCommand("hydrate", {
    description: "Convert another agent's conversation (or a thread export, a pi session) with pi-hydrate and switch to it",
    getArgumentCompletions: completions,
    handler: async (args, ctx) => {
      const arg = oneArgument(args);
      if (!arg) {
        ctx.ui.notify("usage: /hydrate FILE (a Claude Code, Codex, Gemini CLI, Qwen Code or OpenCode session, a thread export, a pi session or event capture)", "error");
        return;
      }
      const input = path.resolve(ctx.cwd, expandHome(arg));
      await ctx.waitForIdle();
      // Where pi keeps this directory's sessions: this session's folder when it has one,
      // else pi-hydrate's own rule, which is pi's (PI_CODING_AGENT_SESSION_DIR, settings, agent dir).
      const sessionDir = ctx.sessionManager.getSessionFile() ? ctx.sessionManager.getSessionDir() : "";
      const argv = ["--session", input, "--cwd", ctx.cwd, ...(await versionArgs(ctx.cwd))];
      if (sessionDir) argv.push("--session-dir", sessionDir);
      const result = await run(argv, ctx.cwd);
      if (result.code !== 0) {
        failed(ctx, `pi-hydrate ${arg}`, result);
        return;
      }
      const written = result.stdout.trim().split("\n").pop();
      const summary = (result.stderr || "").trim();
      const outcome = await ctx.switchSession(written, {
        withSession: async (next) => {
          next.ui.notify(`Hydrated ${arg} into ${written}\n${summary}`, "info");
        },
      });
      if (outcome && outcome.cancelled) {
        ctx.ui.notify(`Hydrated ${arg} into ${written}, but the switch was cancelled\n${summary}`, "warning");
      }
    },
  });

  pi.registerCommand("hydrate-context", {
    description: "Show what pi sends to the model for this session (pi-hydrate context; --full for whole texts)",
    handler: async (args, ctx) => {
      const file = ctx.sessionManager.getSessionFile();
      if (!file) {
        ctx.ui.notify("/hydrate-context: this session has no file (pi runs with --no-session)", "error");
        return;
      }
      const extra = (args || "").trim().split(/\s+/).filter(Boolean);
      const result = await run(["context", ...(await versionArgs(ctx.cwd)), ...extra, file], ctx.cwd);
      if (result.code !== 0) {
        failed(ctx, "pi-hydrate context", result);
        return;
      }
      ctx.ui.notify(result.stdout.trimEnd(), "info");
    },
  });
}
