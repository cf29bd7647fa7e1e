# shellcheck shell=bash
# Sourced by the test scripts that run a Python helper (the OAuth2 issuer,
# the Prometheus text check); not executed.
#
# python_venv DIR MODULE REQUIREMENT: a virtualenv in DIR/venv in which
# `import MODULE` works, made on first use with `pip install REQUIREMENT`
# and reused after; under a lock in DIR, as several test runs may race.
# Prints nothing on success; sets venv to its path. Dies (through the
# caller's die) when venv or pip fails.
python_venv() {
    local work="$1" module="$2" req="$3"
    venv="$work/venv"
    mkdir -p "$work"
    exec 9>"$work/venv.lock"
    flock 9
    if ! "$venv/bin/python" -c "import $module" 2>/dev/null; then
        rm -rf "$venv"
        python3 -m venv "$venv" >&2 || die "python3 -m venv failed (is python3-venv installed? make deps)"
        "$venv/bin/pip" install -q --disable-pip-version-check "$req" >&2 \
            || die "pip could not install $req"
    fi
    flock -u 9
}
