#!/usr/bin/env bash
# Installs the Debian 12 packages Probe Studio needs. Idempotent: quiet and quick when
# everything is present. Usage: tools/install-deps.sh [--check]
set -euo pipefail

packages=(
    build-essential cmake ccache pkg-config
    qt6-base-dev libqcustomplot-dev libqcustomplot2.1-qt6
    nlohmann-json3-dev libgtest-dev
    libtorch-dev python3-torch python3-dev python3-numpy libopenblas0-pthread
    xvfb xauth imagemagick xdotool
    zlib1g-dev libxxhash-dev libzip-dev libcli11-dev libxlsxwriter-dev libbenchmark-dev
    clang-14 libclang-rt-14-dev clang-format-14
)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
    exit 0
fi
if [[ "${1:-}" == "--check" ]]; then
    echo "missing Debian packages: ${missing[*]}" >&2
    exit 1
fi

echo "Installing Debian packages: ${missing[*]}" >&2
sudo=()
if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "Installed ${#missing[@]} package(s)." >&2
