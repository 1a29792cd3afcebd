#!/bin/sh
# Installs the service-ci binary for this machine from a release, after checking the archive
# against the release's SHA256SUMS. Linux and macOS only (Windows: download the .zip).
#
#   curl -fsSL https://github.com/service-ci/service-ci/releases/latest/download/install.sh | sh
#   sh install.sh --version 1.2.3 --dir /usr/local/bin
#
# Options and variables (an option wins over its variable):
#   --version <x.y.z|latest>  SERVICE_CI_VERSION      default: latest
#   --dir <directory>         SERVICE_CI_INSTALL_DIR  default: $HOME/.local/bin
#   SERVICE_CI_DOWNLOAD_URL   where releases live; files are read from
#                             <url>/download/v<version>/<file> or <url>/latest/download/<file>
#                             default: https://github.com/service-ci/service-ci/releases
set -eu

version=${SERVICE_CI_VERSION:-latest}
dir=${SERVICE_CI_INSTALL_DIR:-}
base_url=${SERVICE_CI_DOWNLOAD_URL:-https://github.com/service-ci/service-ci/releases}

say() {
  printf 'install.sh: %s\n' "$*" >&2
}

die() {
  say "$*"
  exit 1
}

usage_error() {
  say "$*"
  say "usage: install.sh [--version <x.y.z|latest>] [--dir <directory>]"
  exit 2
}

while [ "$#" -gt 0 ]; do
  case $1 in
    --version | --dir)
      [ "$#" -ge 2 ] || usage_error "$1 needs a value"
      if [ "$1" = --version ]; then version=$2; else dir=$2; fi
      shift 2
      ;;
    --version=*) version=${1#*=}; shift ;;
    --dir=*) dir=${1#*=}; shift ;;
    -h | --help)
      cat <<'EOF'
Installs service-ci for this machine (Linux or macOS, x86_64 or aarch64) after checking
the download against the release's SHA256SUMS.

usage: install.sh [--version <x.y.z|latest>] [--dir <directory>]

  --version  the release to install (SERVICE_CI_VERSION; default: latest)
  --dir      where to put service-ci (SERVICE_CI_INSTALL_DIR; default: $HOME/.local/bin)

SERVICE_CI_DOWNLOAD_URL sets where releases are read from
(default: https://github.com/service-ci/service-ci/releases).
EOF
      exit 0
      ;;
    *) usage_error "unknown option $1 (expected --version <x.y.z|latest> or --dir <directory>)" ;;
  esac
done

version=${version#v}
case $version in
  latest) ;;
  '' | *[!0-9A-Za-z.+-]* | [!0-9]*)
    usage_error "--version must be a release version such as 1.2.3, or latest (got \"$version\")"
    ;;
esac

if [ -z "$dir" ]; then
  [ -n "${HOME:-}" ] || usage_error "HOME is not set: give the install directory with --dir"
  dir=$HOME/.local/bin
fi

base_url=${base_url%/}
case $base_url in
  https://*) ;;
  http://localhost | http://localhost[:/]* | http://127.0.0.1 | http://127.0.0.1[:/]*) ;;
  http://\[::1\] | http://\[::1\][:/]*) ;;
  *) usage_error "SERVICE_CI_DOWNLOAD_URL must be an https:// address, or http:// to localhost (got \"$base_url\")" ;;
esac

os=$(uname -s)
case $os in
  Linux)
    # The binaries are linked against glibc; a musl system (Alpine) cannot run them.
    for loader in /lib/ld-musl-*; do
      if [ -e "$loader" ]; then
        die "this system uses musl libc ($loader); service-ci needs glibc: use the container image instead"
      fi
    done
    os_part=unknown-linux-gnu
    ;;
  Darwin) os_part=apple-darwin ;;
  *) die "unsupported operating system $os: this installer supports Linux and macOS; on Windows download the .zip from $base_url" ;;
esac

machine=$(uname -m)
case $machine in
  x86_64 | amd64) arch=x86_64 ;;
  aarch64 | arm64) arch=aarch64 ;;
  *) die "unsupported processor $machine: service-ci is built for x86_64 and aarch64" ;;
esac
target=$arch-$os_part

if command -v curl >/dev/null 2>&1; then
  fetch() { curl --fail --silent --show-error --location --retry 3 --output "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  fetch() { wget --quiet --tries=3 --output-document="$2" "$1"; }
else
  die "curl or wget is needed to download service-ci"
fi

if command -v sha256sum >/dev/null 2>&1; then
  sha256_of() { sha256sum "$1" | cut -d ' ' -f 1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256_of() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
else
  die "sha256sum or shasum is needed to check the download"
fi

if [ "$version" = latest ]; then
  release_url=$base_url/latest/download
else
  release_url=$base_url/download/v$version
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fetch "$release_url/SHA256SUMS" "$tmp/SHA256SUMS" ||
  die "could not download $release_url/SHA256SUMS (is $version a published release?)"

# The archive's name carries the version; for "latest" it is read from SHA256SUMS.
if [ "$version" = latest ]; then
  archive=$(awk -v target="$target" '
    { name = $2; sub(/^\*/, "", name) }
    name ~ ("^service-ci-[0-9][0-9A-Za-z.+-]*-" target "\\.tar\\.gz$") { print name; exit }
  ' "$tmp/SHA256SUMS")
  [ -n "$archive" ] || die "SHA256SUMS at $release_url lists no archive for $target; not installing"
else
  archive=service-ci-$version-$target.tar.gz
fi

expected=$(awk -v file="$archive" '
  { name = $2; sub(/^\*/, "", name) }
  name == file { print tolower($1); exit }
' "$tmp/SHA256SUMS")
case $expected in
  '') die "SHA256SUMS has no line for $archive; not installing" ;;
  *[!0-9a-f]*) die "SHA256SUMS line for $archive is not a SHA-256 ($expected); not installing" ;;
esac
[ "${#expected}" -eq 64 ] || die "SHA256SUMS line for $archive is not a SHA-256 ($expected); not installing"

fetch "$release_url/$archive" "$tmp/$archive" || die "could not download $release_url/$archive"

actual=$(sha256_of "$tmp/$archive")
[ "$actual" = "$expected" ] ||
  die "checksum mismatch for $archive: SHA256SUMS says $expected, the download is $actual; not installing"

mkdir "$tmp/unpacked"
tar -xzf "$tmp/$archive" -C "$tmp/unpacked"
[ -f "$tmp/unpacked/service-ci" ] || die "$archive holds no service-ci binary; not installing"

mkdir -p "$dir"
# Copy beside the target, then rename: a running service-ci is never half-overwritten.
cp "$tmp/unpacked/service-ci" "$dir/.service-ci.$$"
chmod 755 "$dir/.service-ci.$$"
mv -f "$dir/.service-ci.$$" "$dir/service-ci"

installed=$("$dir/service-ci" --version) || die "$dir/service-ci was installed but does not run"
printf 'installed %s: %s\n' "$dir/service-ci" "$installed"
case ":${PATH:-}:" in
  *":$dir:"*) ;;
  *) say "$dir is not on PATH; add it, or run $dir/service-ci" ;;
esac
