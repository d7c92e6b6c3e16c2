#!/usr/bin/env bash
# Installs the competitors this benchmark needs beyond tilecc's own dependencies: Psi4 from
# Debian's packages (its ccenergy module uses point-group symmetry). Needs root (apt-get).
set -euo pipefail
if ! command -v psi4 >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq psi4
fi
psi4 --version
