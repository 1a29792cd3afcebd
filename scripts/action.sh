#!/bin/sh
# The step of the GitHub action (action.yml): turns the action's inputs into service-ci
# arguments, gets service-ci (a release binary checked against SHA256SUMS and its
# build-provenance attestation, or this checkout's source with `version: source`) and execs it,
# so its exit code and signals are the step's own. A release binary is kept in the runner's tool
# cache, RUNNER_TOOL_CACHE/service-ci/<version>/<x64|arm64>, as the setup actions keep theirs, so
# the next job on a self-hosted runner does not download it again; it is used only if nobody else
# could have written it, and its SHA-256 is checked against the one recorded at installation every
# time it is used.
#
# Inputs, as the action passes them (never expanded into the script, so no value runs as code):
#   SERVICE_CI_AGENT            one agent UUID, or several separated by commas or newlines
#   SERVICE_API_KEY             the API key (read by service-ci itself; masked here first)
#   SERVICE_CI_BASE_URL         --base-url; empty: service-ci reads SERVICE_BASE_URL
#   SERVICE_CI_TIMEOUT_MINUTES  --timeout-minutes; empty: service-ci's default (30)
#   SERVICE_CI_VERSION          x.y.z, vx.y.z, latest or source; empty: the version in the
#                               action's deno.json, i.e. the release the action's ref is
#   SERVICE_CI_JUNIT            --junit <file>; empty: no JUnit report
#   SERVICE_CI_WARN_ONLY        true adds --warn-only; false (or empty) does not
#   SERVICE_CI_VERIFY_ATTESTATION  auto (or empty): check the archive's attestation with
#                               `gh attestation verify` when gh is on PATH; true: gh is
#                               required; false: only the SHA256SUMS check
#   SERVICE_CI_PR_COMMENT       auto (or empty): the pull-request comment on pull_request and
#                               pull_request_target events (GITHUB_EVENT_NAME); true or false
#   SERVICE_CI_PR_COMMENT_KEY   the pull-request comment's key (--pr-comment-key), or empty
#   SERVICE_CI_COMMIT_STATUS    true: a check run per agent (--commit-status); false (or empty)
#   SERVICE_CI_GITHUB_TOKEN     the job's token, given to gh (as GH_TOKEN) and, with the comment
#                               or the check runs on, to service-ci (as GITHUB_TOKEN); to nothing
#                               else
#   SERVICE_CI_VERBOSE          true adds --verbose; false (or empty) does not
#   SERVICE_CI_CA_CERT          --ca-cert <file>; empty: service-ci reads SERVICE_CA_CERT
#   SERVICE_CI_REQUEST_TIMEOUT_SECONDS  --request-timeout-seconds; empty: service-ci reads
#                               SERVICE_REQUEST_TIMEOUT_SECONDS, else its default (30)
#   SERVICE_CI_NO_WAIT          true adds --no-wait; false (or empty) does not
#   SERVICE_CI_RUN_ID           --run-id <id>, or empty
#   SERVICE_CI_COMMIT_SHA, SERVICE_CI_BRANCH, SERVICE_CI_PULL_REQUEST, SERVICE_CI_REPOSITORY,
#   SERVICE_CI_ACTOR            the metadata overrides (--commit-sha, …), each empty: detected
#   SERVICE_CI_DOWNLOAD_URL     where releases live (read by install.sh; default GitHub)
#
# Every other SERVICE_* variable of the job's env: (SERVICE_MAX_POLL_INTERVAL_SECONDS,
# SERVICE_CI_NATIVE, …) reaches service-ci as it is: the process inherits the step's environment.
#
# Exit codes: service-ci's own; 2 for an input error found here (nothing downloaded, no
# request sent); 3 when service-ci could not be installed (the gate could not be checked).
set -eu

action_path=${GITHUB_ACTION_PATH:-$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)}

# What the action creates (the installation, the tool cache) only its owner may write, whatever
# the job's umask; service-ci gets the job's own back.
job_umask=$(umask)
umask 022

# Shows a value from an input on one line: no control character can end the line and start
# a workflow command.
shown() {
  printf '%s' "$1" | tr '[:cntrl:]' ' '
}

# Stops before service-ci ran: an error annotation, and the outputs service-ci would have
# written (so `passed` is never empty).
fail() {
  code=$1
  shift
  printf '::error title=service-ci action::%s\n' "$(printf '%s' "$*" | sed 's/%/%25/g')"
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf 'passed=false\nexit-code=%s\n' "$code" >>"$GITHUB_OUTPUT"
  fi
  exit "$code"
}

# Secrets are masked by the runner, but a key given another way is not: mask it, line by line
# (a multi-line value is masked per line), before anything else runs. `%` is the only
# character of the value the runner would unescape.
if [ -n "${SERVICE_API_KEY:-}" ]; then
  printf '%s\n' "$SERVICE_API_KEY" | tr '\r' '\n' | while IFS= read -r line; do
    if [ -n "$line" ]; then
      printf '::add-mask::%s\n' "$(printf '%s' "$line" | sed 's/%/%25/g')"
    fi
  done
else
  fail 2 "the api-key input is empty: set it to \${{ secrets.SERVICE_API_KEY }}" \
    "(a workflow started from a fork gets no secrets; a reusable workflow gets its caller's" \
    "only when the calling job passes them, with secrets: inherit or secrets: SERVICE_API_KEY)"
fi

# One agent per line: commas and newlines separate, blanks around each are dropped.
agents=$(printf '%s\n' "${SERVICE_CI_AGENT:-}" | tr -d '\r' | tr ',' '\n' |
  sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e '/^$/d')
[ -n "$agents" ] ||
  fail 2 "the agent input is empty: give an agent UUID, or several separated by commas or newlines"

# An input that must be true or false.
boolean_input() {
  case $2 in
    true | false) ;;
    *) fail 2 "the $1 input must be true or false (got \"$(shown "$2")\")" ;;
  esac
}

warn_only=${SERVICE_CI_WARN_ONLY:-false}
boolean_input warn-only "$warn_only"

verify_attestation=${SERVICE_CI_VERIFY_ATTESTATION:-auto}
case $verify_attestation in
  auto | true | false) ;;
  *)
    fail 2 "the verify-attestation input must be auto, true or false" \
      "(got \"$(shown "$verify_attestation")\")"
    ;;
esac

pr_comment=${SERVICE_CI_PR_COMMENT:-auto}
case $pr_comment in
  auto)
    # On where there is a pull request to comment on and the job's token may write to it.
    case ${GITHUB_EVENT_NAME:-} in
      pull_request | pull_request_target) pr_comment=true ;;
      *) pr_comment=false ;;
    esac
    ;;
  true | false) ;;
  *) fail 2 "the pr-comment input must be auto, true or false (got \"$(shown "$pr_comment")\")" ;;
esac

verbose=${SERVICE_CI_VERBOSE:-false}
boolean_input verbose "$verbose"

no_wait=${SERVICE_CI_NO_WAIT:-false}
boolean_input no-wait "$no_wait"

commit_status=${SERVICE_CI_COMMIT_STATUS:-false}
case $commit_status in
  true | false) ;;
  *) fail 2 "the commit-status input must be true or false (got \"$(shown "$commit_status")\")" ;;
esac

version=${SERVICE_CI_VERSION:-}
if [ -n "$version" ]; then
  version=${version#v}
else
  # deno fmt keeps the top-level key on a line of its own, indented by two spaces.
  version=$(sed -n 's/^  "version": *"\([^"]*\)".*$/\1/p' "$action_path/deno.json" | head -n 1)
  [ -n "$version" ] || fail 2 "no version in $action_path/deno.json: set the version input"
fi
case $version in
  source | latest) ;;
  '' | *[!0-9A-Za-z.+-]* | [!0-9]*)
    fail 2 "the version input must be a release such as 1.2.3, latest or source" \
      "(got \"$(shown "${SERVICE_CI_VERSION:-}")\")"
    ;;
esac

# The command, then service-ci's arguments after it.
if [ "$version" = source ]; then
  command -v deno >/dev/null 2>&1 ||
    fail 2 "version: source needs deno on PATH (the action sets up Deno for it with setup-deno)"
  # The action's own deno.json (and lock file), not the workspace's; no code is fetched. -P grants
  # its default permission set, the one every build uses.
  set -- deno run --quiet --no-prompt --no-remote --no-npm --config "$action_path/deno.json" -P
  set -- "$@" "$action_path/src/main.ts"
else
  os=${RUNNER_OS:-$(uname -s)}
  arch=${RUNNER_ARCH:-$(uname -m)}
  case $os in
    Linux) os_part=unknown-linux-gnu ;;
    macOS | Darwin) os_part=apple-darwin ;;
    Windows | MINGW* | MSYS* | CYGWIN*) os_part=pc-windows-msvc ;;
    *) fail 2 "unsupported runner OS $(shown "$os"): use a Linux, macOS or Windows runner" ;;
  esac
  case $arch in
    X64 | x86_64 | amd64) arch_part=x86_64 ;;
    ARM64 | aarch64 | arm64) arch_part=aarch64 ;;
    *)
      fail 2 "unsupported runner architecture $(shown "$arch"):" \
        "service-ci is built for x86_64 and aarch64"
      ;;
  esac
  binary=service-ci
  if [ "$os_part" = pc-windows-msvc ]; then binary=service-ci.exe; fi
  dir=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/service-ci/$version
  # GitHub-hosted runners have gh, so by default the attestation is checked there.
  if [ "$verify_attestation" = auto ]; then
    if command -v gh >/dev/null 2>&1; then
      verify_attestation=true
    else
      printf '%s\n' "service-ci action: gh is not on PATH, so the build-provenance" \
        "attestation is not checked (SHA256SUMS is); set verify-attestation: true to require it" >&2
      verify_attestation=false
    fi
  fi
  if command -v sha256sum >/dev/null 2>&1; then
    sha256_of() { sha256sum "$1" | cut -d ' ' -f 1; }
  else
    sha256_of() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
  fi
  # The tool cache's layout is the setup actions' (@actions/tool-cache): <tool>/<version>/<arch>,
  # and <arch>.complete beside it once the copy is whole. `latest` is not cached: it moves.
  cache=
  if [ -n "${RUNNER_TOOL_CACHE:-}" ] && [ "$version" != latest ]; then
    cache_root=$RUNNER_TOOL_CACHE
    if command -v cygpath >/dev/null 2>&1; then cache_root=$(cygpath -u "$cache_root"); fi
    case $arch_part in
      x86_64) cache=$cache_root/service-ci/$version/x64 ;;
      *) cache=$cache_root/service-ci/$version/arm64 ;;
    esac
  fi
  # A cache entry is trusted only if nobody else could have written it: the folders on its path
  # inside the cache and its files are the current user's and neither group nor others may write
  # them (-H: a symbolic link is judged by what it points to). Prints what fails that. Not on
  # Windows: Git Bash makes the bits up from the read-only attribute; they do not show the ACLs.
  untrusted() {
    [ "$os_part" != pc-windows-msvc ] || return 0
    set -- "$cache_root/service-ci" "$cache_root/service-ci/$version" "$cache" \
      "$cache/$binary" "$cache/$binary.sha256"
    for marker in "$cache.complete" "$cache/attested"; do
      if [ -e "$marker" ]; then set -- "$@" "$marker"; fi
    done
    find -H "$@" -prune \( ! -user "$(id -u)" -o -perm -020 -o -perm -002 \) -print 2>/dev/null ||
      printf '%s\n' "$cache (unreadable)"
  }
  cached=false
  if [ -n "$cache" ] && [ -f "$cache.complete" ] && [ -f "$cache/$binary" ] &&
    [ -f "$cache/$binary.sha256" ]; then
    writable=$(untrusted | tr '\n' ' ')
    if [ -n "$writable" ]; then
      printf '::warning title=service-ci action::%s %s\n' \
        "the cached $(shown "$cache/$binary") is not used: another user owns or may write" \
        "$(shown "${writable% }"); installing it again"
      rm -rf "$cache" "$cache.complete" 2>/dev/null || :
    elif [ "$verify_attestation" = true ] && [ ! -f "$cache/attested" ]; then
      printf 'service-ci action: %s %s\n' "$cache/$binary" \
        "was cached without the attestation check; installing it again" >&2
    else
      recorded=$(cat "$cache/$binary.sha256")
      actual=$(sha256_of "$cache/$binary") || actual=unreadable
      if [ "$actual" = "$recorded" ]; then
        cached=true
        printf 'service-ci action: using %s (SHA-256 %s, as at its installation)\n' \
          "$cache/$binary" "$actual" >&2
      else
        printf '::warning title=service-ci action::%s %s\n' \
          "the cached $(shown "$cache/$binary") has SHA-256 $actual, not the $(shown "$recorded")" \
          "recorded when it was installed: installing it again"
      fi
    fi
  fi
  if [ "$cached" = true ]; then
    set -- "$cache/$binary"
  else
    printf 'service-ci action: installing service-ci %s for %s into %s\n' \
      "$version" "$arch_part-$os_part" "$dir" >&2
    # install.sh refuses an archive whose SHA-256 differs from the release's SHA256SUMS, and
    # with SERVICE_CI_VERIFY_ATTESTATION=1 one that gh finds no valid attestation for.
    # It never needs the key, so it does not get it; only gh gets the job's token.
    (
      unset SERVICE_API_KEY
      SERVICE_CI_VERIFY_ATTESTATION=0
      if [ "$verify_attestation" = true ]; then
        SERVICE_CI_VERIFY_ATTESTATION=1
        if [ -z "${GH_TOKEN:-}" ] && [ -n "${SERVICE_CI_GITHUB_TOKEN:-}" ]; then
          GH_TOKEN=$SERVICE_CI_GITHUB_TOKEN
          export GH_TOKEN
        fi
      fi
      unset SERVICE_CI_GITHUB_TOKEN
      export SERVICE_CI_VERIFY_ATTESTATION
      exec sh "$action_path/scripts/install.sh" --version "$version" --dir "$dir" \
        --target "$arch_part-$os_part"
    ) ||
      fail 3 "service-ci $version could not be installed (see install.sh's message above);" \
        "nothing was run. version: source runs the action's own checkout instead"
    set -- "$dir/$binary"
    # Into the tool cache: the binary, then its SHA-256, then the marker, each renamed into
    # place, so a job on another runner sharing the cache never takes a half-written copy; the
    # marker only once the next job would trust the entry. A cache that cannot be written costs
    # the next job a download, nothing more.
    if [ -n "$cache" ] && installed=$(sha256_of "$dir/$binary") && {
      rm -f "$cache.complete" "$cache/attested" &&
        mkdir -p "$cache" &&
        chmod 755 "$cache_root/service-ci" "$cache_root/service-ci/$version" "$cache" &&
        cp "$dir/$binary" "$cache/.$binary.$$" &&
        chmod 755 "$cache/.$binary.$$" &&
        mv -f "$cache/.$binary.$$" "$cache/$binary" &&
        printf '%s\n' "$installed" >"$cache/.$binary.sha256.$$" &&
        chmod 644 "$cache/.$binary.sha256.$$" &&
        mv -f "$cache/.$binary.sha256.$$" "$cache/$binary.sha256" &&
        if [ "$verify_attestation" = true ]; then : >"$cache/attested"; fi &&
        [ -z "$(untrusted)" ] &&
        : >"$cache.complete"
    }; then
      printf 'service-ci action: cached in %s (SHA-256 %s)\n' "$cache" "$installed" >&2
    elif [ -n "$cache" ]; then
      printf 'service-ci action: could not cache service-ci in %s; %s\n' "$cache" \
        "the next job downloads it again" >&2
    fi
  fi
fi

# Every value goes as --flag=value: one argument, never read as another flag.
while IFS= read -r agent; do
  set -- "$@" "--agent=$agent"
done <<EOF
$agents
EOF
if [ -n "${SERVICE_CI_BASE_URL:-}" ]; then set -- "$@" "--base-url=$SERVICE_CI_BASE_URL"; fi
if [ -n "${SERVICE_CI_TIMEOUT_MINUTES:-}" ]; then
  set -- "$@" "--timeout-minutes=$SERVICE_CI_TIMEOUT_MINUTES"
fi
if [ -n "${SERVICE_CI_JUNIT:-}" ]; then set -- "$@" "--junit=$SERVICE_CI_JUNIT"; fi
if [ "$warn_only" = true ]; then set -- "$@" --warn-only; fi
if [ -n "${SERVICE_CI_PR_COMMENT_KEY:-}" ]; then
  set -- "$@" "--pr-comment-key=$SERVICE_CI_PR_COMMENT_KEY"
fi
if [ "$verbose" = true ]; then set -- "$@" --verbose; fi
if [ -n "${SERVICE_CI_CA_CERT:-}" ]; then set -- "$@" "--ca-cert=$SERVICE_CI_CA_CERT"; fi
if [ -n "${SERVICE_CI_REQUEST_TIMEOUT_SECONDS:-}" ]; then
  set -- "$@" "--request-timeout-seconds=$SERVICE_CI_REQUEST_TIMEOUT_SECONDS"
fi
if [ "$no_wait" = true ]; then set -- "$@" --no-wait; fi
if [ -n "${SERVICE_CI_RUN_ID:-}" ]; then set -- "$@" "--run-id=$SERVICE_CI_RUN_ID"; fi
if [ -n "${SERVICE_CI_COMMIT_SHA:-}" ]; then set -- "$@" "--commit-sha=$SERVICE_CI_COMMIT_SHA"; fi
if [ -n "${SERVICE_CI_BRANCH:-}" ]; then set -- "$@" "--branch=$SERVICE_CI_BRANCH"; fi
if [ -n "${SERVICE_CI_PULL_REQUEST:-}" ]; then
  set -- "$@" "--pull-request=$SERVICE_CI_PULL_REQUEST"
fi
if [ -n "${SERVICE_CI_REPOSITORY:-}" ]; then
  set -- "$@" "--repository=$SERVICE_CI_REPOSITORY"
fi
if [ -n "${SERVICE_CI_ACTOR:-}" ]; then set -- "$@" "--actor=$SERVICE_CI_ACTOR"; fi

# The inputs decide, whatever SERVICE_PR_COMMENT or SERVICE_COMMIT_STATUS the job sets.
# service-ci masks the token and sends it only to GITHUB_API_URL.
SERVICE_PR_COMMENT=$pr_comment
SERVICE_COMMIT_STATUS=$commit_status
# service-ci's refusals then name the action's inputs (timeout-minutes:), not its flags.
SERVICE_CI_ACTION=true
export SERVICE_PR_COMMENT SERVICE_COMMIT_STATUS SERVICE_CI_ACTION
if { [ "$pr_comment" = true ] || [ "$commit_status" = true ]; } &&
  [ -n "${SERVICE_CI_GITHUB_TOKEN:-}" ]; then
  GITHUB_TOKEN=$SERVICE_CI_GITHUB_TOKEN
  export GITHUB_TOKEN
fi
unset SERVICE_CI_GITHUB_TOKEN
umask "$job_umask"
exec "$@"
