#!/usr/bin/env python3
"""Records real Kilo CLI sessions against the scripted stand-in, as opencode_driver.py records
OpenCode's: Kilo CLI is a fork of OpenCode, run, stored and exported the same way, with its own names.

  kilo_cli_driver.py [--only NAME]... [--out DIR] [--cli PATH]

For each scenario tests/agents/kilo-cli/<name>.json (opencode_driver.py says what a scenario holds)
it makes /tmp/pi-hydrate-agents/kilo-cli/<name>/, writes home/.config/kilo/kilo.json (OpenCode's
config plus "enabled_providers": ["standin"], the stand-in provider alone: without it Kilo's built-in
providers look up their
vendors' hosts), runs `kilo run PROMPT --format json --auto` per run (`--session ID` after the
first), and keeps home/.local/share/kilo/kilo.db (and its -wal for keep_wal), `kilo export ID` as
export.json and the stand-in's conversation.json in DIR/kilo-cli-<version>/<name>/.
The CLI is `@kilocode/cli-linux-x64` 7.7.9, the newest linux-x64 build on npm (the 7.8.1 wrapper
asks for a platform package the registry does not have), installed with npm into
/tmp/pi-hydrate-agents/cli/kilo-cli-7.7.9 when --cli is not given and it is missing there.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opencode_driver import Product, main  # noqa: E402

# Offline: OpenCode's switches under Kilo's names, and no telemetry.
KILO = Product("kilo-cli", "7.7.9", "@kilocode/cli-linux-x64",
               os.path.join("node_modules", "@kilocode", "cli-linux-x64", "bin", "kilo"), "kilo",
               os.path.join("kilo", "kilo.json"), {"enabled_providers": ["standin"]}, "kilo",
               {"KILO_DISABLE_MODELS_FETCH": "1", "KILO_DISABLE_AUTOUPDATE": "1",
                "KILO_DISABLE_DEFAULT_PLUGINS": "1", "KILO_DISABLE_LSP_DOWNLOAD": "1",
                "KILO_DISABLE_SHARE": "1", "KILO_TELEMETRY_LEVEL": "off"},
               run_args=["--auto"])

if __name__ == "__main__":
    sys.exit(main(KILO, __doc__))
