"use strict";
// Which pi-hydrate binary this package carries for the machine it runs on.
// The package ships one static binary per platform under vendor/<platform>-<arch>/
// (tools/npm-pack.sh puts linux-x64 there); a platform without one gets an error
// that names it, never a wrong binary.
const fs = require("fs");
const path = require("path");

const VENDOR = path.join(__dirname, "..", "vendor");

// PIHYDRATE_NPM_PLATFORM=<platform>-<arch> stands in for the machine's own
// (tests use it to see the error a machine without a binary gets).
function platformKey(env, platform, arch) {
  const forced = (env || {}).PIHYDRATE_NPM_PLATFORM;
  if (forced) return forced;
  return `${platform}-${arch}`;
}

// The platforms this copy of the package has a binary for.
function supported(vendor) {
  let names = [];
  try {
    names = fs.readdirSync(vendor || VENDOR);
  } catch (e) {
    return [];
  }
  return names.filter((n) => isExecutable(path.join(vendor || VENDOR, n, "pi-hydrate"))).sort();
}

function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch (e) {
    return false;
  }
}

class NoBinaryError extends Error {}

// The binary's path for `key`, or a NoBinaryError whose message names the
// platform and the ones the package has.
function binaryPath(key, vendor) {
  const file = path.join(vendor || VENDOR, key, "pi-hydrate");
  if (isExecutable(file)) return file;
  const have = supported(vendor);
  throw new NoBinaryError(
    `pi-hydrate: this npm package has no binary for ${key} ` +
      `(it has: ${have.length ? have.join(", ") : "none"}). ` +
      "Build pi-hydrate from source (docs/install.md of the pi-hydrate repository) and put it on PATH."
  );
}

module.exports = { platformKey, supported, binaryPath, NoBinaryError, VENDOR };
