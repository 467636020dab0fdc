#!/usr/bin/env node
// pi_load.mjs — load a session file with the real, installed `pi` and print what pi makes of it.
//
// Usage (node >= 22.19, e.g. the one install_pi.sh puts in DEST/node/bin):
//   DEST/node/bin/node tests/conformance/pi_load.mjs --pi DEST/pi-0.78.0 [--cwd DIR]
//       [--timeout SECONDS] [--max-text N | --full] FILE...
//
//   --pi DIR       an install made by install_pi.sh (DIR/node_modules/@earendil-works/pi-coding-agent),
//                  or the pi-coding-agent package folder itself
//   --cwd DIR      process cwd pi runs in for the FILEs after it (default: the current directory); it
//                  must exist. May be given again between FILEs: `--cwd A f1 f2 --cwd B f3`
//   --timeout S    give up on a file after S seconds (default 20): pi 0.78 hangs on parentId cycles
//   --max-text N   cut each text to N characters (default 200; "…" marks a cut); --full: no cut
//   --rpc          instead of calling pi's functions, run the real CLI on the copy:
//                  `pi --offline --mode rpc --session COPY` with get_state + get_messages on stdin
//                  (isolated HOME/PI_CODING_AGENT_DIR), same output shape; see "RPC mode" below.
//
// What it does, in the order of pi's CLI (`pi --session FILE`, dist/main.js):
//   1. copies FILE into a fresh temp dir (pi rewrites files on load; the original is never opened
//      for writing) and runs everything below in a child process with a time limit;
//   2. SessionManager.open(copy)            (sessionDir defaults to the copy's folder, as in the CLI);
//   3. getMissingSessionCwdIssue(sm, cwd)   (pi's own function from dist/core/session-cwd.js; the
//      non-interactive CLI prints MissingSessionCwdError's message and exits 1);
//   4. sm.buildSessionContext()             (what createAgentSession puts in agent.state.messages);
//   5. convertToLlm(messages) then pi-ai's transformMessages(…, model) — what every provider sends.
//      The model is the session's own (context.model; api taken from the last assistant message of
//      that provider/model), with image input, and no provider-specific tool-call-id normaliser.
//
// Several FILEs are loaded in one child process, one after the other (pi is imported once: for many
// small files that is most of the time), and give one line each, in order; the child changes into
// each file's --cwd before loading it. --timeout is per file: a file that hangs or crashes the child
// gets its "timeout" or "child exited" line, and a new child loads the files after it, so one bad
// file never costs the others their lines.
// Output: ONE JSON line on stdout per FILE, keys always in this order:
//   {"loaded","error","cwdMissing","leafId","entryCount","context","llm","llmError","fileModified",
//    "replacedWithFreshSession","name","thinkingLevel","model","piVersion"}
//   loaded      true iff the non-interactive CLI would get past steps 2-4 (open ok, cwd exists,
//               context built). A missing cwd gives loaded:false, cwdMissing:true and pi's message
//               as error, but context/llm are still reported (what the interactive "Continue" sees).
//   error       the first error in CLI order (open exception, missing-cwd message, context
//               exception, "timeout", or a child crash); temp paths replaced by <SESSION_FILE>/<TMP>.
//   entryCount  sm.getEntries().length (entries without the header; counts duplicate ids twice,
//               unlike 1.5.2's getEntryCount() which is byId.size).
//   context/llm [{"role","texts","toolCallIds","toolResultId"}] per message; llm is null and
//               llmError set when transformMessages throws (pi loads such a file, but every model
//               request fails). texts: text blocks (string content as one text; summaries of
//               compaction/branch summaries; bashExecution's command).
//   fileModified             the copy's bytes differ after the load (migration rewrite, 1.5.2's
//                            newline repair, 0.78.0's truncation of an invalid file, ...).
//   replacedWithFreshSession the loaded header id differs from the original file's first header
//                            (0.78.0 replaces a non-empty invalid file with a fresh session).
// RPC mode: loaded = the CLI started and answered get_messages; error = its stderr (colours removed,
//   a stack trace reduced to the exception message, "Error: " prefix removed); context = get_messages
//   (= agent.state.messages); name/thinkingLevel/model from get_state (thinkingLevel is clamped to
//   the model, which is the "unknown" placeholder without credentials, so it reads "off");
//   leafId/entryCount/llm are null; fileModified is true for every session with messages because the
//   CLI appends a thinking_level_change entry.
// Not simulated (function mode): the CLI's later side effect of appending thinking_level_change /
// model_change entries. leafId of a migrated v1 file is random (migration generates new ids).
// Exit status: 0 whenever a JSON line was printed (whatever pi did), 2 on usage errors.

import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const SELF = fileURLToPath(import.meta.url);
// The child's first line once pi is imported: the time limit of each file starts after it, so a slow
// import (a busy machine, pi 0.78's hundreds of files) never reads as a file that hangs.
const READY = "pi_load: ready";
const IMPORT_LIMIT_S = 120;
const KEYS = ["loaded", "error", "cwdMissing", "leafId", "entryCount", "context", "llm", "llmError",
    "fileModified", "replacedWithFreshSession", "name", "thinkingLevel", "model", "piVersion"];

function usage(msg) {
    process.stderr.write(`pi_load.mjs: ${msg}\nusage: node pi_load.mjs --pi DIR [--cwd DIR] [--timeout S] [--max-text N|--full] [--rpc] FILE...\n`);
    process.exit(2);
}

function parseCli(argv) {
    const o = { pi: undefined, cwd: process.cwd(), timeout: 20, maxText: 200, files: [], child: false, rpc: false };
    let cwd = process.cwd();
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const val = () => { if (i + 1 >= argv.length) usage(`${a} needs a value`); return argv[++i]; };
        if (a === "--pi") o.pi = val();
        else if (a === "--cwd") cwd = o.cwd = val();
        else if (a === "--timeout") o.timeout = Number(val());
        else if (a === "--max-text") o.maxText = Number(val());
        else if (a === "--full") o.maxText = 0;
        else if (a === "--child") o.child = true;
        else if (a === "--rpc") o.rpc = true;
        else if (a === "--help" || a === "-h") usage("help");
        else if (a.startsWith("--")) usage(`unknown option ${a}`);
        else o.files.push({ path: a, cwd });
    }
    if (!o.pi) usage("--pi is required");
    if (o.files.length === 0) usage("FILE is required");
    if (o.rpc && o.files.length > 1) usage("--rpc takes one FILE");
    if (!(o.timeout > 0)) usage("--timeout must be a positive number");
    if (!(o.maxText >= 0)) usage("--max-text must be >= 0");
    return o;
}

/** Locate pi-coding-agent and its pi-ai inside an install made by install_pi.sh. */
function locatePi(dir) {
    const root = resolve(dir);
    const candidates = [join(root, "node_modules/@earendil-works/pi-coding-agent"), root];
    const pkgDir = candidates.find((d) => existsSync(join(d, "package.json")) &&
        JSON.parse(readFileSync(join(d, "package.json"), "utf8")).name === "@earendil-works/pi-coding-agent");
    if (!pkgDir) usage(`no @earendil-works/pi-coding-agent under ${root}`);
    const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
    const bin = typeof pkg.bin === "string" ? pkg.bin : pkg.bin?.pi;
    // 1.x ships a self-contained bundle as the real program (bin = dist/bundle/cli.js); its unbundled
    // dist/index.js imports packages that are only stubs in our install. 0.x: the package main.
    const index = bin?.startsWith("dist/bundle/") ? join(pkgDir, "dist/bundle/index.js") : join(pkgDir, pkg.main ?? "dist/index.js");
    const sessionCwd = join(pkgDir, "dist/core/session-cwd.js");
    // pi-ai: nested under pi-coding-agent or hoisted next to it.
    const aiDirs = [join(pkgDir, "node_modules/@earendil-works/pi-ai"), join(pkgDir, "../pi-ai")];
    const aiDir = aiDirs.find((d) => existsSync(join(d, "package.json")));
    if (!aiDir) usage(`pi-ai not found next to ${pkgDir}`);
    // 0.x: dist/providers/transform-messages.js; 1.x: dist/api/transform-messages.js
    const transform = ["dist/api/transform-messages.js", "dist/providers/transform-messages.js"]
        .map((p) => join(aiDir, p)).find((p) => existsSync(p));
    if (!transform) usage(`transform-messages.js not found in ${aiDir}`);
    return { pkgDir, version: pkg.version, bin, index, sessionCwd, transform };
}

// ------------------------------------------------------------------ child: the actual load ------

function errMessage(e) {
    return e instanceof Error ? e.message : String(e);
}

function cut(s, max) {
    if (typeof s !== "string") s = s === undefined ? "" : JSON.stringify(s);
    return max > 0 && s.length > max ? `${s.slice(0, max)}…` : s;
}

function summarize(messages, max) {
    return messages.map((m) => {
        const texts = [];
        const toolCallIds = [];
        const c = m?.content;
        if (typeof c === "string") texts.push(cut(c, max));
        else if (Array.isArray(c)) {
            for (const b of c) {
                if (b?.type === "text") texts.push(cut(b.text, max));
                else if (b?.type === "toolCall") toolCallIds.push(b.id ?? null);
            }
        }
        if (m?.role === "bashExecution" && typeof m.command === "string") texts.push(cut(m.command, max));
        if ((m?.role === "compactionSummary" || m?.role === "branchSummary") && m.summary !== undefined)
            texts.push(cut(m.summary, max));
        return {
            role: m?.role ?? null,
            texts,
            toolCallIds,
            toolResultId: m?.role === "toolResult" ? (m.toolCallId ?? null) : null,
        };
    });
}

/** The model a continued session would use: context.model, api from a matching assistant message. */
function sessionModel(context, messages) {
    const provider = context?.model?.provider ?? "unknown";
    const id = context?.model?.modelId ?? "unknown";
    let api = "unknown";
    for (const m of messages) {
        if (m?.role === "assistant" && m.provider === provider && m.model === id && typeof m.api === "string") api = m.api;
    }
    return { id, name: id, provider, api, input: ["text", "image"], reasoning: true };
}

async function runChild(opts) {
    const loc = locatePi(opts.pi);
    const out = { piVersion: loc.version };
    const pi = await import(pathToFileURL(loc.index).href);
    const { getMissingSessionCwdIssue, MissingSessionCwdError } = await import(pathToFileURL(loc.sessionCwd).href);
    const { transformMessages } = await import(pathToFileURL(loc.transform).href);

    let sm;
    try {
        sm = pi.SessionManager.open(opts.file);
    } catch (e) {
        return { ...out, loaded: false, error: errMessage(e) };
    }
    out.headerId = sm.getHeader()?.id ?? null;
    out.leafId = sm.getLeafId() ?? null;
    out.entryCount = sm.getEntries().length;
    try {
        out.name = sm.getSessionName() ?? null;
    } catch {
        out.name = null; // e.g. a non-string session_info.name (`name?.trim` throws); the CLI reads it later
    }

    const issue = getMissingSessionCwdIssue(sm, process.cwd());
    out.cwdMissing = !!issue;
    if (issue) out.error = new MissingSessionCwdError(issue).message;

    let context;
    try {
        context = sm.buildSessionContext();
    } catch (e) {
        return { ...out, loaded: false, error: out.error ?? errMessage(e) };
    }
    out.loaded = !issue;
    out.context = summarize(context.messages, opts.maxText);
    out.thinkingLevel = context.thinkingLevel ?? null;
    out.model = context.model ?? null;
    try {
        const llmMessages = pi.convertToLlm(context.messages);
        out.llm = summarize(transformMessages(llmMessages, sessionModel(context, context.messages)), opts.maxText);
    } catch (e) {
        out.llm = null;
        out.llmError = errMessage(e);
    }
    return out;
}

// ------------------------------------------------------------------ parent ----------------------

/** id of the first parsed non-blank line if it is a session header (the way pi checks it). */
function firstHeaderId(bytes) {
    for (const line of bytes.toString("utf8").split("\n")) {
        if (!line.trim()) continue;
        let v;
        try { v = JSON.parse(line.replace(/^\uFEFF/, "")); } catch { continue; }
        if (!v) continue; // pi 1.5 skips falsy values; pi 0.78 fails on them either way
        return v && v.type === "session" && typeof v.id === "string" ? v.id : null;
    }
    return null;
}

/** A pi CLI error as printed on stderr: no colours; an uncaught exception's stack reduced to its message. */
function cliError(stderr) {
    const text = stderr.replace(/\x1b\[[0-9;]*m/g, "").trim();
    if (!text) return null;
    if (/\n\s+at /.test(text)) {
        const m = text.match(/^(?:Uncaught )?(?:\w*Error|Error)(?: \[\w+\])?: (.*)$/m);
        if (m) return m[1];
    }
    return text.replace(/^Error: /, "");
}

/** The output of `pi --offline --mode rpc --session COPY` for get_state + get_messages. */
function rpcResult(stdout, stderr, code, maxText) {
    const byId = {};
    for (const line of stdout.split("\n")) {
        if (!line.trim()) continue;
        try { const v = JSON.parse(line); if (v?.type === "response") byId[v.id] = v; } catch { /* not ours */ }
    }
    const state = byId["1"];
    const msgs = byId["2"];
    if (code !== 0 || !msgs) {
        const error = cliError(stderr) ?? `pi exited (${code}) without a get_messages response`;
        return { loaded: false, error, cwdMissing: /^Stored session working directory does not exist: /.test(error) };
    }
    if (!msgs.success) return { loaded: false, error: msgs.error ?? "get_messages failed" };
    const st = state?.success ? state.data : {};
    return {
        loaded: true,
        error: null,
        cwdMissing: false,
        context: summarize(msgs.data.messages, maxText),
        name: st.sessionName ?? null,
        thinkingLevel: st.thinkingLevel ?? null,
        model: st.model ? { provider: st.model.provider, modelId: st.model.id } : null,
        headerId: st.sessionId ?? null,
    };
}

function runParent(opts) {
    const files = opts.files.map((f) => ({ path: resolve(f.path), cwd: resolve(f.cwd) }));
    for (const { path: file, cwd } of files) {
        if (!existsSync(file)) usage(`no such file: ${file}`);
        if (!statSync(file).isFile()) usage(`not a file: ${file}`);
        if (!existsSync(cwd) || !statSync(cwd).isDirectory()) usage(`--cwd is not a directory: ${cwd}`);
    }
    const loc = locatePi(opts.pi);

    const tmp = mkdtempSync(join(tmpdir(), "pi-load-"));
    const home = join(tmp, "home");
    mkdirSync(join(home, "agent"), { recursive: true });
    // Each file in a folder of its own: pi's sessionDir defaults to the copy's folder.
    const copies = files.map(({ path: file, cwd }, i) => {
        const sessDir = join(tmp, files.length === 1 ? "s" : `s${i}`);
        mkdirSync(sessDir, { recursive: true });
        const copy = join(sessDir, basename(file));
        copyFileSync(file, copy);
        return { copy, cwd, original: readFileSync(file) };
    });

    const env = { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, "agent"), PI_OFFLINE: "1" };
    delete env.PI_CODING_AGENT_SESSION_DIR;
    const lines = new Array(copies.length);

    /** The output line of copies[i], from what pi (or the child that loaded it) gave. */
    const finish = (i, r) => {
        const { copy, original } = copies[i];
        const after = existsSync(copy) ? readFileSync(copy) : Buffer.alloc(0);
        r.fileModified = !after.equals(original);
        r.replacedWithFreshSession = typeof r.headerId === "string" && r.headerId !== firstHeaderId(original);
        const scrub = (v) => (typeof v === "string" ? v.split(copy).join("<SESSION_FILE>").split(tmp).join("<TMP>") : v);
        r.error = scrub(r.error);
        r.llmError = scrub(r.llmError);
        r.piVersion = loc.version;
        const outObj = {};
        for (const k of KEYS) outObj[k] = r[k] !== undefined ? r[k] : k === "cwdMissing" ? false : null;
        lines[i] = `${JSON.stringify(outObj)}\n`;
    };
    const done = () => {
        process.stdout.write(lines.join(""), () => rmSync(tmp, { recursive: true, force: true }));
    };

    if (opts.rpc) {
        const { copy, cwd } = copies[0];
        const args = [join(loc.pkgDir, loc.bin), "--offline", "--mode", "rpc", "--session", copy];
        const input = '{"id":"1","type":"get_state"}\n{"id":"2","type":"get_messages"}\n';
        const child = spawn(process.execPath, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
        child.stdin.on("error", () => { /* pi may exit before reading */ });
        child.stdin.end(input);
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => { stdout += d; });
        child.stderr.on("data", (d) => { stderr += d; if (stderr.length > 100000) stderr = stderr.slice(-50000); });
        let timedOut = false;
        const timer = setTimeout(() => { timedOut = true; child.kill("SIGKILL"); }, opts.timeout * 1000);
        child.on("close", (code, signal) => {
            clearTimeout(timer);
            finish(0, timedOut ? { loaded: false, error: "timeout" } : rpcResult(stdout, stderr, signal ?? code, opts.maxText));
            done();
        });
        return;
    }

    // Function mode: a child loads copies[from..] in order and prints one line per file as it goes.
    // A file that takes longer than --timeout, or a child that dies, ends that child: the file gets
    // its error line, and a new child loads the files after it.
    const startChild = (from) => {
        const args = [SELF, "--child", "--pi", resolve(opts.pi), "--max-text", String(opts.maxText)];
        for (const { copy, cwd } of copies.slice(from)) args.push("--cwd", cwd, copy);
        const child = spawn(process.execPath, args, { cwd: copies[from].cwd, env, stdio: ["ignore", "pipe", "pipe"] });
        let next = from; // the file the child is loading now
        let pending = "";
        let stderr = "";
        let timedOut = false;
        let timer;
        const arm = (seconds) => {
            clearTimeout(timer);
            timer = setTimeout(() => { timedOut = true; child.kill("SIGKILL"); }, seconds * 1000);
        };
        arm(IMPORT_LIMIT_S);
        child.stdout.on("data", (d) => {
            pending += d;
            let nl;
            while ((nl = pending.indexOf("\n")) >= 0) {
                const line = pending.slice(0, nl);
                pending = pending.slice(nl + 1);
                if (line === READY) { arm(opts.timeout); continue; }
                if (!line.trim() || next >= copies.length) continue;
                let r;
                try { r = JSON.parse(line); } catch { r = { loaded: false, error: `child printed a line that is not JSON: ${line.slice(0, 200)}` }; }
                finish(next++, r);
                arm(opts.timeout);
            }
        });
        child.stderr.on("data", (d) => { stderr += d; if (stderr.length > 100000) stderr = stderr.slice(-50000); });
        child.on("close", (code, signal) => {
            clearTimeout(timer);
            if (next < copies.length) {
                const tail = stderr.trim().split("\n").slice(-3).join(" | ");
                finish(next++, timedOut ? { loaded: false, error: "timeout" }
                    : { loaded: false, error: `child exited (${signal ?? code})${tail ? `: ${tail}` : ""}` });
            }
            if (next < copies.length) startChild(next);
            else done();
        });
    };
    startChild(0);
}

const opts = parseCli(process.argv.slice(2));
if (opts.child) {
    // exit only after the (possibly multi-MB) lines have been flushed into the pipe; pi's modules may
    // leave handles open, so the process would not end by itself.
    // One line per file, in order, each written as soon as its file is loaded (the parent times each
    // file on its own); a file whose load throws still gives its line.
    (async () => {
        try {
            const loc = locatePi(opts.pi);
            for (const m of [loc.index, loc.sessionCwd, loc.transform]) await import(pathToFileURL(m).href);
        } catch { /* runChild imports again and reports the failure in each file's line */ }
        await new Promise((written) => process.stdout.write(`${READY}\n`, written));
        for (const { path: file, cwd } of opts.files) {
            let r;
            try {
                process.chdir(cwd);
                r = await runChild({ ...opts, file });
            } catch (e) { r = { loaded: false, error: errMessage(e) }; }
            await new Promise((written) => process.stdout.write(`${JSON.stringify(r)}\n`, written));
        }
        process.exit(0);
    })();
} else {
    runParent(opts);
}
