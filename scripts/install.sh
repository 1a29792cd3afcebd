#!/bin/sh
# Installs the service-ci binary for this machine from a release, after checking the archive
# against the release's SHA256SUMS and, on request, its build-provenance attestation with the
# GitHub CLI. Linux, macOS, and Windows under Git Bash/MSYS; x86_64 and aarch64 each.
#
#   curl -fsSL https://github.com/service-ci/service-ci/releases/latest/download/install.sh | sh
#   sh install.sh --version 1.2.3 --dir /usr/local/bin
#
# Options and variables (an option wins over its variable):
#   --version <x.y.z|latest>  SERVICE_CI_VERSION      default: latest
#   --dir <directory>         SERVICE_CI_INSTALL_DIR  default: $HOME/.local/bin
#   --target <target>         the build to install    default: this machine's; another one is
#                             installed but not run (e.g. to copy onto an offline agent)
#   --verify-attestation      SERVICE_CI_VERIFY_ATTESTATION=1   default: off; also checks the
#                             archive with `gh attestation verify <archive> --repo <repo>`
#   SERVICE_CI_ATTESTATION_REPO  the repository whose release workflow must have attested the
#                             archive; default: the one in SERVICE_CI_DOWNLOAD_URL when that is
#                             a github.com release address, else service-ci/service-ci
#   SERVICE_CI_DOWNLOAD_URL   where releases live; files are read from
#                             <url>/download/v<version>/<file> or <url>/latest/download/<file>
#                             default: https://github.com/service-ci/service-ci/releases
#   CURL_CA_BUNDLE            a PEM file of the CAs to trust instead of the system's, for a
#                             private CA (a TLS-inspecting proxy, an internal mirror); curl reads
#                             it, and install.sh gives it to wget as --ca-certificate
#   HTTPS_PROXY, NO_PROXY     read by curl and wget themselves (wget: https_proxy, no_proxy)
set -eu

# Every build a release holds, in `deno compile --target` spelling. scripts/build.ts's TARGETS
# is the source; tests/ship/build_test.ts checks that this list is the same.
targets='x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-msvc aarch64-pc-windows-msvc'

version=${SERVICE_CI_VERSION:-latest}
dir=${SERVICE_CI_INSTALL_DIR:-}
target=
case ${SERVICE_CI_VERIFY_ATTESTATION:-0} in
  1 | true) verify_attestation=true ;;
  0 | false | '') verify_attestation=false ;;
  *) verify_attestation=invalid ;;
esac
base_url=${SERVICE_CI_DOWNLOAD_URL:-https://github.com/service-ci/service-ci/releases}

say() {
  printf 'install.sh: %s\n' "$*" >&2
}

die() {
  say "$*"
  exit 1
}

# An address as messages show it: never its user:password@ part.
without_userinfo() {
  case $1 in
    *://*) set -- "${1%%://*}://" "${1#*://}" ;;
    *) set -- '' "$1" ;;
  esac
  printf '%s%s' "$1" "${2##*@}"
}

usage_error() {
  say "$*"
  say "usage: install.sh [--version <x.y.z|latest>] [--dir <directory>] [--target <target>] [--verify-attestation]"
  exit 2
}

# The target list as prose: "a, b or c".
targets_text='' last=''
for each in $targets; do
  [ -z "$last" ] || targets_text=${targets_text:+$targets_text, }$last
  last=$each
done
targets_text="$targets_text or $last"

while [ "$#" -gt 0 ]; do
  case $1 in
    --version | --dir | --target)
      [ "$#" -ge 2 ] || usage_error "$1 needs a value"
      case $1 in
        --version) version=$2 ;;
        --dir) dir=$2 ;;
        *) target=$2 ;;
      esac
      shift 2
      ;;
    --version=*) version=${1#*=}; shift ;;
    --dir=*) dir=${1#*=}; shift ;;
    --target=*) target=${1#*=}; shift ;;
    --verify-attestation) verify_attestation=true; shift ;;
    -h | --help)
      cat <<EOF
Installs service-ci for this machine (Linux, macOS, or Windows under Git Bash or MSYS; x86_64
or aarch64) after checking the download against the release's SHA256SUMS.

usage: install.sh [--version <x.y.z|latest>] [--dir <directory>] [--target <target>]
                  [--verify-attestation]

  --version  the release to install (SERVICE_CI_VERSION; default: latest)
  --dir      where to put service-ci (SERVICE_CI_INSTALL_DIR; default: \$HOME/.local/bin)
  --target   the build to install (default: this machine's), one of
             $targets_text;
             another machine's build is installed but not run
  --verify-attestation
             also check the archive's build-provenance attestation with the GitHub CLI:
             gh attestation verify <archive> --repo <repository>
             (SERVICE_CI_VERIFY_ATTESTATION=1; needs gh, logged in or given GH_TOKEN)

SERVICE_CI_DOWNLOAD_URL sets where releases are read from
(default: https://github.com/service-ci/service-ci/releases).
SERVICE_CI_ATTESTATION_REPO sets the repository that must have attested the archive
(default: the one in SERVICE_CI_DOWNLOAD_URL, else service-ci/service-ci).
CURL_CA_BUNDLE names a PEM file of the CAs to trust, for a private CA (a TLS-inspecting
proxy, a mirror): curl trusts only that file; wget is given it as --ca-certificate.
EOF
      exit 0
      ;;
    *) usage_error "unknown option $1 (expected --version <x.y.z|latest>, --dir <directory>, --target <target> or --verify-attestation)" ;;
  esac
done

[ "$verify_attestation" != invalid ] ||
  usage_error "SERVICE_CI_VERIFY_ATTESTATION must be 1 or 0 (got \"${SERVICE_CI_VERIFY_ATTESTATION:-}\")"

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
  *) usage_error "SERVICE_CI_DOWNLOAD_URL must be an https:// address, or http:// to localhost (got \"$(without_userinfo "$base_url")\")" ;;
esac

# An attestation names the repository whose workflow built the archive.
attestation_repo=${SERVICE_CI_ATTESTATION_REPO:-}
if [ -z "$attestation_repo" ]; then
  case $base_url in
    https://github.com/*/*/releases)
      attestation_repo=${base_url#https://github.com/}
      attestation_repo=${attestation_repo%/releases}
      ;;
    *) attestation_repo=service-ci/service-ci ;;
  esac
fi
case $attestation_repo in
  */*/* | *[!A-Za-z0-9._/-]*) attestation_repo= ;;
  [A-Za-z0-9]*/[A-Za-z0-9._-]*) ;;
  *) attestation_repo= ;;
esac
[ -n "$attestation_repo" ] ||
  usage_error "SERVICE_CI_ATTESTATION_REPO must be an owner/name repository such as service-ci/service-ci (got \"${SERVICE_CI_ATTESTATION_REPO:-}\")"
if [ "$verify_attestation" = true ] && ! command -v gh >/dev/null 2>&1; then
  die "--verify-attestation needs the GitHub CLI (gh) on PATH: install it from https://cli.github.com, or install without --verify-attestation (the SHA256SUMS check still runs)"
fi

# This machine's build, or none when service-ci is not built for it.
host=
os=$(uname -s)
case $os in
  Linux) os_part=unknown-linux-gnu ;;
  Darwin) os_part=apple-darwin ;;
  MINGW* | MSYS* | CYGWIN*) os_part=pc-windows-msvc ;;
  *) os_part= ;;
esac
machine=$(uname -m)
case $machine in
  x86_64 | amd64) arch=x86_64 ;;
  aarch64 | arm64) arch=aarch64 ;;
  *) arch= ;;
esac
case $arch-$os_part in
  -* | *-) ;;
  *) host=$arch-$os_part ;;
esac

if [ -z "$target" ]; then
  [ -n "$os_part" ] ||
    die "unsupported operating system $os: service-ci is built for Linux, macOS and Windows"
  [ -n "$host" ] || die "unsupported processor $machine on $os: service-ci is built for x86_64 and aarch64"
  if [ "$os" = Linux ]; then
    # The binaries are linked against glibc; a musl system (Alpine) cannot run them.
    for loader in /lib/ld-musl-*; do
      if [ -e "$loader" ]; then
        die "this system uses musl libc ($loader); service-ci needs glibc: use the container image instead"
      fi
    done
  fi
  target=$host
fi
case " $targets " in
  *" $target "*) ;;
  *) usage_error "--target must be one of $targets_text (got \"$target\")" ;;
esac
case $target in
  *windows*) extension=zip binary=service-ci.exe ;;
  *) extension=tar.gz binary=service-ci ;;
esac

if command -v curl >/dev/null 2>&1; then
  downloader=curl
  # Prints the last answer's status and a proxy's answer to CONNECT (000 where there was none).
  fetch() {
    curl --fail --silent --show-error --location --retry 3 --output "$2" \
      --write-out '%{http_code} %{http_connect}' "$1"
  }
elif command -v wget >/dev/null 2>&1; then
  downloader=wget
  fetch() {
    if [ -n "${CURL_CA_BUNDLE:-}" ]; then
      wget --quiet --tries=3 --ca-certificate="$CURL_CA_BUNDLE" --output-document="$2" "$1"
    else
      wget --quiet --tries=3 --output-document="$2" "$1"
    fi
  }
else
  die "curl or wget is needed to download service-ci"
fi

# download <url> <file> [<what a 404 may mean>]. A certificate that did not verify (curl 60, or
# 51 before curl 7.62; wget 5), a CA file curl could not read (77) and a proxy that asks for a
# login (407) are said as what they are, with what to do, rather than as a missing release.
download() {
  codes=$(fetch "$1" "$2") && return 0
  failed=$?
  shown=$(without_userinfo "$1")
  case $downloader:$failed in
    curl:60 | curl:51 | wget:5)
      case $downloader in
        curl) how="CURL_CA_BUNDLE=/path/to/ca-bundle.pem sh install.sh, the file in PEM holding your CA (and the public CAs too, unless the proxy intercepts every site; curl trusts only that file), and fetch install.sh itself with curl --cacert /path/to/ca-bundle.pem" ;;
        *) how="CURL_CA_BUNDLE=/path/to/ca.pem sh install.sh, the file in PEM holding your CA (install.sh gives it to wget as --ca-certificate, trusted beside the system's CAs), and fetch install.sh itself with wget --ca-certificate=/path/to/ca.pem" ;;
      esac
      if [ -n "${CURL_CA_BUNDLE:-}" ]; then
        how="$how (CURL_CA_BUNDLE is $CURL_CA_BUNDLE now, which does not vouch for this certificate)"
      fi
      die "could not download $shown: the server's TLS certificate could not be verified (a certificate problem, not a missing release). If a proxy or mirror on this network presents a private CA's certificate, trust that CA: $how. Do not turn certificate checks off."
      ;;
    curl:77)
      die "could not download $shown: curl could not read the CA file CURL_CA_BUNDLE names (\"${CURL_CA_BUNDLE:-}\"): name a readable PEM file"
      ;;
    wget:8) die "could not download $shown: the server answered with an error (wget's exit code 8)${3:+; $3}" ;;
  esac
  case " $codes " in
    *" 407 "*)
      die "could not download $shown: the proxy asks for a login (407 Proxy Authentication Required): give it in the proxy's variable, HTTPS_PROXY=http://user:password@host:port (install.sh never prints it)"
      ;;
    " 404 "*) die "could not download $shown: 404 Not Found${3:+ ($3)}" ;;
  esac
  case $downloader in
    wget) die "could not download $shown (wget's exit code $failed; wget runs quietly here: wget -S '$shown' shows why)" ;;
    *) die "could not download $shown (curl's exit code $failed)" ;;
  esac
}

if command -v sha256sum >/dev/null 2>&1; then
  sha256_of() { sha256sum "$1" | cut -d ' ' -f 1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256_of() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
else
  die "sha256sum or shasum is needed to check the download"
fi

# What a 404 of SHA256SUMS may mean.
if [ "$version" = latest ]; then
  release_url=$base_url/latest/download
  unpublished="is there a published release?"
else
  release_url=$base_url/download/v$version
  unpublished="is $version a published release?"
fi

shown_release_url=$(without_userinfo "$release_url")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

download "$release_url/SHA256SUMS" "$tmp/SHA256SUMS" "$unpublished"

# The archive's name carries the version; for "latest" it is read from SHA256SUMS.
if [ "$version" = latest ]; then
  archive=$(awk -v suffix="-$target.$extension" '
    { name = $2; sub(/^\*/, "", name) }
    {
      version = substr(name, 12, length(name) - 11 - length(suffix))
      if (index(name, "service-ci-") == 1 && substr(name, length(name) - length(suffix) + 1) == suffix &&
        version ~ /^[0-9][0-9A-Za-z.+-]*$/) { print name; exit }
    }
  ' "$tmp/SHA256SUMS")
  [ -n "$archive" ] || die "SHA256SUMS at $shown_release_url lists no archive for $target; not installing"
else
  archive=service-ci-$version-$target.$extension
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

download "$release_url/$archive" "$tmp/$archive"

actual=$(sha256_of "$tmp/$archive")
[ "$actual" = "$expected" ] ||
  die "checksum mismatch for $archive: SHA256SUMS says $expected, the download is $actual; not installing"

if [ "$verify_attestation" = true ]; then
  say "checking the build-provenance attestation of $archive with gh (repository $attestation_repo)"
  gh attestation verify "$tmp/$archive" --repo "$attestation_repo" >&2 ||
    die "attestation check failed for $archive: gh found no valid build-provenance attestation from a workflow of $attestation_repo (see gh's message above); not installing"
fi

mkdir "$tmp/unpacked"
if [ "$extension" = zip ]; then
  if command -v unzip >/dev/null 2>&1; then
    unzip -q "$tmp/$archive" -d "$tmp/unpacked" || die "could not unpack $archive"
  elif command -v powershell.exe >/dev/null 2>&1 && command -v cygpath >/dev/null 2>&1; then
    powershell.exe -NoProfile -NonInteractive -Command \
      "Expand-Archive -LiteralPath '$(cygpath -w "$tmp/$archive")' -DestinationPath '$(cygpath -w "$tmp/unpacked")'" ||
      die "could not unpack $archive"
  else
    die "unzip (or PowerShell) is needed to unpack $archive"
  fi
else
  tar -xzf "$tmp/$archive" -C "$tmp/unpacked"
fi
[ -f "$tmp/unpacked/$binary" ] || die "$archive holds no $binary binary; not installing"

mkdir -p "$dir"
# Copy beside the target, then rename: a running service-ci is never half-overwritten.
cp "$tmp/unpacked/$binary" "$dir/.$binary.$$"
chmod 755 "$dir/.$binary.$$"
mv -f "$dir/.$binary.$$" "$dir/$binary"

if [ "$target" != "$host" ]; then
  printf 'installed %s (built for %s; not run on this machine)\n' "$dir/$binary" "$target"
  exit 0
fi
installed=$("$dir/$binary" --version) || die "$dir/$binary was installed but does not run"
printf 'installed %s: %s\n' "$dir/$binary" "$installed"
case ":${PATH:-}:" in
  *":$dir:"*) ;;
  *) say "$dir is not on PATH; add it, or run $dir/$binary" ;;
esac
