// What pi itself takes to resume a session, for the benchmark rows of
// `context` and `tree` (tools/bench-rows.sh): SessionManager.open, then
// buildSessionContext, convertToLlm and pi-ai's transformMessages, as
// `pi --session FILE` does before its first request. Nothing is printed but
// the counts, so the time is pi's, not a report's (tests/conformance/pi_load.mjs
// prints every message and is for comparing, not timing).
//
//   DEST/node/bin/node tools/bench/pi_context.mjs DEST/pi-1.5.2 FILE
//
// pi migrates an old file in place: give it a copy you can lose.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [dir, file] = process.argv.slice(2);
if (!dir || !file) {
    process.stderr.write("usage: node pi_context.mjs PI_INSTALL_DIR FILE\n");
    process.exit(2);
}
const pkgDir = join(resolve(dir), "node_modules/@earendil-works/pi-coding-agent");
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
const bin = typeof pkg.bin === "string" ? pkg.bin : pkg.bin?.pi;
// 1.x runs its bundle; 0.x its package main (as tests/conformance/pi_load.mjs finds them).
const index = bin?.startsWith("dist/bundle/") ? join(pkgDir, "dist/bundle/index.js") : join(pkgDir, pkg.main ?? "dist/index.js");
const aiDir = [join(pkgDir, "node_modules/@earendil-works/pi-ai"), join(pkgDir, "../pi-ai")].find((d) => existsSync(d));
const transform = ["dist/api/transform-messages.js", "dist/providers/transform-messages.js"]
    .map((p) => join(aiDir, p)).find((p) => existsSync(p));

const pi = await import(pathToFileURL(index).href);
const { transformMessages } = await import(pathToFileURL(transform).href);
const sm = pi.SessionManager.open(file);
const context = sm.buildSessionContext();
const model = { id: "unknown", name: "unknown", provider: "unknown", api: "unknown", input: ["text", "image"], reasoning: true };
const sent = transformMessages(pi.convertToLlm(context.messages), model);
process.stdout.write(`pi ${pkg.version}: ${sm.getEntries().length} entries, ${sent.length} messages sent\n`);
