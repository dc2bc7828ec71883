# The one place the Debian kernel version used by the VM tier, the module
# build and the KUnit tree is pinned.  tests/setup/kernel falls back to the
# newest 6.12 served (loudly) if this one disappears from bookworm-security.
WAFER_KVER_PIN := 6.12.117+deb12
# The `openai` npm client the unit tier drives `wafer serve` with
# (tests/unit/serve_openai.cjs), installed by setup into $cache/npm.
WAFER_OPENAI_NPM := 4.95.0
