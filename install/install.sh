#!/usr/bin/env bash
# Downloads revendor's release REVENDOR_VERSION for this runner's platform
# from REVENDOR_REPOSITORY, verifies it against the release's SHA256SUMS
# (and against REVENDOR_SHA256 when set: a pin in the caller's workflow that
# a replaced asset cannot pass), and installs it as DEST/revendor. Called by
# install/action.yml; `gh` reads the token from GH_TOKEN.
#
#   REVENDOR_VERSION     the release tag, v0.1.0 (required)
#   REVENDOR_REPOSITORY  owner/name of revendor's repository (required)
#   REVENDOR_SHA256      the binary's sha256 (optional)
#   RUNNER_ARCH          X64 or ARM64, as GitHub sets it
#   DEST                 the directory to install into (required)
set -euo pipefail

: "${REVENDOR_VERSION:?set the version input: a release tag such as v0.1.0}"
: "${REVENDOR_REPOSITORY:?set the repository input: owner/name}"
: "${DEST:?}"
case "${RUNNER_ARCH:-}" in
  X64) platform=linux-amd64 ;;
  ARM64) platform=linux-arm64 ;;
  *)
    echo "::error title=revendor::no release binary for the runner architecture '${RUNNER_ARCH:-}' (linux X64 and ARM64 have one)"
    exit 1
    ;;
esac
asset="revendor-$platform"

download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT
gh release download "$REVENDOR_VERSION" --repo "$REVENDOR_REPOSITORY" --dir "$download" \
  --pattern "$asset" --pattern SHA256SUMS
cd "$download"
if ! grep -qE "^[0-9a-f]{64}  $asset\$" SHA256SUMS; then
  echo "::error title=revendor::SHA256SUMS of $REVENDOR_VERSION has no line for $asset"
  exit 1
fi
if ! sha256sum --check --ignore-missing --strict --quiet SHA256SUMS; then
  echo "::error title=revendor::$asset of $REVENDOR_VERSION does not match the release's SHA256SUMS"
  exit 1
fi
if [ -n "${REVENDOR_SHA256:-}" ] && ! echo "$REVENDOR_SHA256  $asset" | sha256sum --check --strict --quiet; then
  echo "::error title=revendor::$asset of $REVENDOR_VERSION is not the sha256 the workflow pins ($REVENDOR_SHA256)"
  exit 1
fi
install -D -m 0755 "$asset" "$DEST/revendor"
have=$("$DEST/revendor" --version)
if [ "$have" != "revendor ${REVENDOR_VERSION#v}" ]; then
  echo "::error title=revendor::the downloaded binary says '$have', not $REVENDOR_VERSION"
  exit 1
fi
echo "$have installed in $DEST"
