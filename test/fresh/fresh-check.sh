#!/usr/bin/env bash
# `make fresh-check`: the README's commands, first time, on a machine where
# nothing the project needs is installed yet.
#
# Builds a minimal Debian 12 (bookworm) root with debootstrap under
# build-fresh/ (git-ignored), puts a `git clone` of the current commit in it
# and, chrooted there as root (the README's commands install packages with
# apt-get), runs `make run` and then `make test` exactly as a new user would.
# A build whose flags were worked out before `make deps` installed the -dev
# packages fails here, while a machine that already has them (CI's) never
# shows it. Every line of the inner run is printed with a time stamp so the
# phases (package install, build, broker fetch and start, run) can be read
# off; each phase's total is printed at the end.
#
# Needs root (debootstrap, mount, chroot); installs debootstrap with apt-get
# when missing. Nothing about the package mirror is written in the repository:
# the mirror is read from this machine's apt sources, which are copied into
# the root too, and so are this machine's Maven configuration and locally
# added CA certificates, for the test broker's download: what any machine
# set up like this one has before the project is cloned.
#
# Environment:
#   FRESH_REF       commit to clone (default HEAD of this checkout)
#   FRESH_MIRROR    Debian mirror URL for debootstrap (default: from apt sources)
#   FRESH_STEPS     commands run in the root, in order (default "make run;make test")
#   FRESH_CACHE=1   keep debootstrap's downloaded packages (build-fresh/base.tgz)
#                   and reuse them next time; the default starts from nothing
#   FRESH_KEEP=1    leave the root in place afterwards (unmounted) to look at
#   PULSARC_BROKER_INSTANCE  the broker instance used inside the root (default
#                   5): the root shares this machine's network, so its broker
#                   takes this instance's ports
#
# The chroot shares the host's network namespace and kernel; everything else
# (packages, Maven's repository, the broker's work dir) is the root's own.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$repo/build-fresh"
root="$work/root"
suite=bookworm
ref="${FRESH_REF:-HEAD}"
steps="${FRESH_STEPS:-make run;make test}"
instance="${PULSARC_BROKER_INSTANCE:-5}"
log_file="$work/fresh-check.log"

say() { printf '[fresh] %(%T)T %s\n' -1 "$*" >&2; }
die() { printf '[fresh] ERROR: %s\n' "$*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "needs root (debootstrap, mount, chroot)"

# --- mounts ---------------------------------------------------------------
# Only what the root needs, each mounted on its own (no recursive bind of the
# host's /dev or /sys) and private, so nothing done inside reaches the host.
# The root is first bound onto itself so that it is a mount point: seen from
# inside, /proc/self/mounts then has an entry for "/", which Java's file-store
# look-up needs (the broker's bookie fails with "Mount point not found"
# otherwise).
MOUNTS=(. proc sys dev dev/pts dev/shm)

mount_all() {
    mount --bind "$root" "$root"
    mount --make-private "$root"
    mount -t proc proc "$root/proc"
    mount -t sysfs sysfs "$root/sys"
    mount --bind /dev "$root/dev"
    mount --make-private "$root/dev"
    mount -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts"
    mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
}

mounted_under_root() {
    awk -v r="$root" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/mounts
}

# Processes whose root directory is the chroot: the broker the inner run
# started, if a failure left it behind. Nothing else has that root.
stop_root_processes() {
    local p pids=()
    for p in /proc/[0-9]*; do
        [[ "$(readlink "$p/root" 2>/dev/null)" == "$root" ]] && pids+=("${p#/proc/}")
    done
    ((${#pids[@]})) || return 0
    say "stopping ${#pids[@]} process(es) left in the root"
    kill -TERM "${pids[@]}" 2>/dev/null || true
    sleep 5
    kill -KILL "${pids[@]}" 2>/dev/null || true
    sleep 1
}

unmount_all() {
    local i m
    [[ -d "$root" ]] || return 0
    stop_root_processes
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
        m="$root/${MOUNTS[i]}"
        m="${m%/.}"
        if mountpoint -q "$m"; then umount "$m" || umount -l "$m"; fi
    done
}

remove_root() {
    [[ -d "$root" ]] || return 0
    [[ -z "$(mounted_under_root)" ]] || die "still mounted under $root, not removing it: $(mounted_under_root | tr '\n' ' ')"
    rm -rf --one-file-system "$root"
}

cleanup() {
    local st=$?
    unmount_all
    if [[ "${FRESH_KEEP:-0}" != 1 ]]; then remove_root; fi
    exit "$st"
}

# --- apt sources ------------------------------------------------------------
# This machine's apt source files: sources.list and sources.list.d's *.list
# and *.sources (apt reads no other names).
host_source_files() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [[ -f "$f" ]] && printf '%s\n' "$f"
    done
}

# The first mirror that serves $suite itself (not -updates or -security),
# from one-line entries ("deb [opts] URI suite comp...") or deb822 stanzas.
mirror_from_apt() {
    local f
    while IFS= read -r f; do
        if [[ "$f" == *.sources ]]; then
            awk -v s="$suite" '
                /^[ \t]*#/ { next }
                /^[ \t]*$/ { if (deb && uri && ok) { print uri; exit } deb = uri = ok = 0; next }
                tolower($1) == "types:"  { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
                tolower($1) == "uris:"   { uri = $2 }
                tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == s) ok = 1 }
                END { if (deb && uri && ok) print uri }' "$f"
        else
            sed -E 's/\[[^]]*\]//' "$f" | awk -v s="$suite" '$1 == "deb" && $3 == s { print $2; exit }'
        fi
    done < <(host_source_files) | head -n 1
}

copy_apt_sources() {
    local f key
    rm -f "$root/etc/apt/sources.list"
    rm -f "$root"/etc/apt/sources.list.d/*
    while IFS= read -r f; do
        cp "$f" "$root$f"
        # Keys that an entry names (Signed-By / signed-by=) and the fresh root lacks.
        for key in $(grep -ohiE 'signed-by[:=][[:space:]]*[^][:space:]]+' "$f" | sed -E 's/^[^:=]*[:=][[:space:]]*//'); do
            if [[ -f "$key" && ! -e "$root$key" ]]; then
                mkdir -p "$root$(dirname "$key")"
                cp "$key" "$root$key"
            fi
        done
    done < <(host_source_files)
    # apt settings (such as how this machine's mirror must be checked) that
    # the fresh root does not have a file of its own for.
    [[ -f /etc/apt/apt.conf ]] && cp /etc/apt/apt.conf "$root/etc/apt/apt.conf"
    for f in /etc/apt/apt.conf.d/*; do
        [[ -f "$f" && ! -e "$root$f" ]] && cp "$f" "$root$f"
    done
    return 0
}

# --- Maven configuration ----------------------------------------------------
# The broker scripts resolve the broker from Maven Central with `mvn`; where
# this machine reaches it only through a mirror or proxy named in its Maven
# settings, the root needs the same. User settings win; the global settings
# (as Debian's maven package lays them out) are copied as the root's user
# settings so that the package, installed later, keeps its own file.
copy_maven_settings() {
    local src=""
    if [[ -f "$HOME/.m2/settings.xml" ]]; then
        src="$HOME/.m2/settings.xml"
    elif [[ -f /etc/maven/settings.xml ]]; then
        src=/etc/maven/settings.xml
    fi
    [[ -n "$src" ]] || return 0
    mkdir -p "$root/root/.m2"
    cp "$src" "$root/root/.m2/settings.xml"
    say "Maven settings copied from $src"
}

# --- local CA certificates ---------------------------------------------------
# Certificates this machine's administrator added (the place Debian keeps
# them for update-ca-certificates): where the network is reached through a
# TLS-inspecting proxy, Maven's download of the broker trusts the proxy only
# with them. ca-certificates and the JDK, installed later by make deps, pick
# them up from there like on any Debian machine set up this way.
copy_local_ca_certs() {
    local dir=/usr/local/share/ca-certificates
    [[ -d "$dir" ]] || return 0
    [[ -n "$(find "$dir" -name '*.crt' -print -quit)" ]] || return 0
    mkdir -p "$root$dir"
    cp -a "$dir/." "$root$dir/"
    say "local CA certificates copied from $dir"
}

# --- phases -----------------------------------------------------------------
# Each phase's seconds, printed at the end.
PHASES=()
phase_start=0
phase() { phase_start=$(date +%s); say "$1"; }
phase_done() { PHASES+=("$1 $(($(date +%s) - phase_start))s"); }

make_base() {
    local mirror="${FRESH_MIRROR:-$(mirror_from_apt)}"
    [[ -n "$mirror" ]] || die "no Debian mirror serving $suite in this machine's apt sources; set FRESH_MIRROR"
    local opts=(--variant=minbase --include=make)
    local cache="$work/base.tgz"
    if [[ "${FRESH_CACHE:-0}" == 1 ]]; then
        if [[ ! -s "$cache" ]]; then
            say "caching debootstrap's packages in $cache"
            debootstrap "${opts[@]}" --make-tarball="$cache.tmp" "$suite" "$work/tarball-tmp" "$mirror" >>"$log_file" 2>&1 \
                || { tail -n 20 "$log_file" >&2; die "debootstrap --make-tarball failed"; }
            rm -rf --one-file-system "$work/tarball-tmp"
            mv "$cache.tmp" "$cache"
        fi
        opts+=(--unpack-tarball="$cache")
    fi
    debootstrap "${opts[@]}" "$suite" "$root" "$mirror" >>"$log_file" 2>&1 \
        || { tail -n 20 "$log_file" >&2; die "debootstrap failed (log: $log_file)"; }
}

prepare_root() {
    copy_apt_sources
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    cp /etc/hosts "$root/etc/hosts"
    copy_maven_settings
    copy_local_ca_certs
    git clone -q --no-local "$repo" "$root/root/pulsarc"
    git -C "$root/root/pulsarc" checkout -q --detach "$(git -C "$repo" rev-parse "$ref")"
    say "cloned $(git -C "$root/root/pulsarc" log -1 --format='%h %s' | cut -c1-72)"
}

# Runs one of $steps in the root as a login shell of a user who just cloned
# the repository: a clean environment, the working copy as current dir.
# In the background and waited for, so that a signal to this script is
# handled at once (cleanup stops what runs in the root) rather than after
# the step ends.
run_in_root() {
    (
        env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            LANG=C.UTF-8 TERM=dumb PULSARC_BROKER_INSTANCE="$instance" \
            chroot "$root" /bin/bash -lc "cd /root/pulsarc && $1" 2>&1 |
            while IFS= read -r line; do printf '%(%T)T %s\n' -1 "$line"; done | tee -a "$log_file"
        exit "${PIPESTATUS[0]}"
    ) &
    wait $!
}

main() {
    local started st=0 step
    started=$(date +%s)
    mkdir -p "$work"
    : >"$log_file"
    if ! command -v debootstrap >/dev/null; then
        say "installing debootstrap"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    fi
    [[ -z "$(mounted_under_root)" ]] || unmount_all
    remove_root
    trap cleanup EXIT
    trap 'exit 130' INT TERM

    phase "debootstrap: minimal $suite (plus make) in $root"
    make_base
    phase_done debootstrap

    prepare_root
    mount_all
    IFS=';' read -r -a step_list <<<"$steps"
    for step in "${step_list[@]}"; do
        step="$(sed -E 's/^ +| +$//g' <<<"$step")"
        [[ -n "$step" ]] || continue
        phase "in the root: $step"
        if ! run_in_root "$step"; then
            st=1
            phase_done "'$step' FAILED after"
            break
        fi
        phase_done "'$step'"
    done

    say "phases: $(IFS=,; printf '%s' "${PHASES[*]}" | sed 's/,/, /g')"
    say "total $(($(date +%s) - started))s (log: $log_file)"
    if ((st)); then
        say "FAILED: the README's commands did not pass on a fresh $suite root"
    else
        say "passed: the README's commands work on a fresh $suite root"
    fi
    return "$st"
}

main "$@"
