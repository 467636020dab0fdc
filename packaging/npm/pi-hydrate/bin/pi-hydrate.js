#!/usr/bin/env node
"use strict";
// The `pi-hydrate` command of the npm package: runs the static binary the
// package carries for this platform with the same arguments, standard streams
// and exit status.
const { spawnSync } = require("child_process");
const { platformKey, binaryPath, NoBinaryError } = require("../lib/binary.js");

let file;
try {
  file = binaryPath(platformKey(process.env, process.platform, process.arch));
} catch (e) {
  if (!(e instanceof NoBinaryError)) throw e;
  process.stderr.write(e.message + "\n");
  process.exit(2);
}
const run = spawnSync(file, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  process.stderr.write(`pi-hydrate: could not run ${file}: ${run.error.message}\n`);
  process.exit(2);
}
if (run.signal) {
  process.kill(process.pid, run.signal);
}
process.exit(run.status === null ? 1 : run.status);
