#!/bin/sh
# Runs one agent's quality gate with two plain HTTP calls, for machines that can neither pull the
# image nor run the binary: POST /api/v1/agents/{agent}/runs, then GET …/runs/{run_id} until the
# run is terminal. Exits 0 only when the run finished and results.gate.passed is exactly the JSON
# value true. See docs/recipes/direct-api.md.
#
# Requires: curl 7.55 or later, and a POSIX sh with awk, sed, tr, od, date, mktemp, uname, cat,
# rm and a sleep that accepts decimals (every Linux, macOS and busybox system has them).
# Optional: jq, which reads the JSON when it is on PATH (otherwise the strict JSON reader written
# in awk below does; python3 is never used), and git, for the commit and branch of a local run.
#
#   SERVICE_API_KEY=… sh direct-api.sh --agent <uuid> --base-url https://eval.example.com
#
# Options and variables (an option wins over its variable):
#   --agent <uuid>             SERVICE_AGENT_ID         required; one agent per call
#   --base-url <url>           SERVICE_BASE_URL         required; https:// (http:// for loopback)
#   --timeout-minutes <n>      SERVICE_TIMEOUT_MINUTES  default 30; decimals allowed
#   --timeout <n>              the same as --timeout-minutes
#   --max-poll-interval-seconds <n>                     default 10; 0.5 to 300; the longest wait
#                              SERVICE_MAX_POLL_INTERVAL_SECONDS  between two reads of the run
#   --poll-seconds <n>         SERVICE_POLL_SECONDS     the 1.0 name of the option above
#   --commit-sha, --branch, --pull-request, --repository, --actor <value>
#                              override the CI metadata read from GitHub Actions, GitLab CI,
#                              CircleCI, Bitbucket Pipelines, Jenkins or the local git checkout
#   SERVICE_API_KEY            required; sent only in the X-API-Key header, never printed
#
# It follows the same contract as service-ci, and tests/contract_table_test.ts runs one table of
# scenarios against both: the status lists, polling schedule (1 s + 0.15 × the run's age, at
# most the maximum, ±10 %), backoff, Retry-After (seconds or an HTTP date), redirects (same
# origin, under the agent's runs path, 307/308 for the trigger, at most 5), the 30 s grace for
# a 404 after the trigger, hints keyed by the service's error code, and the exit codes.
# Deliberate differences from service-ci, each pinned by a test in tests/direct_api_test.ts:
#   - one agent per call; no .env file, --json, --junit, --run-id, --no-wait or CI outputs;
#   - CI metadata from the five CI systems above only; elsewhere the provider is "local";
#   - a redirect whose path has a percent-encoded dot segment (%2e, %2e%2e) is refused, even
#     where it would resolve under the runs path: curl resolves only plain dot segments;
#   - its clock has whole seconds (date +%s): the timeout is rounded up to a whole second.
#   - an address on one of the Fetch standard's "bad ports" (6000, 10080, …) is used: curl
#     connects there, while service-ci refuses it (exit 2) because Deno's fetch never does.
#
# Exit codes: 0 the gate passed; 1 the gate failed, and nothing else; 2 usage error (nothing sent);
# 3 the gate could not be checked (refused, run ended without a verdict, no boolean verdict, 10
# faults in a row, refused redirect, or an unexpected error of the script's own); 4 the timeout
# ran out; 130/143 interrupted.
set -eu

# Byte-wise, predictable tr, awk and case patterns whatever the caller's locale.
LC_ALL=C
export LC_ALL

VERSION=1.1.0
PROGRAM=direct-api.sh
MAX_FAULTS=10
UNREACHABLE_SECONDS=30
MAX_REDIRECTS=5

tab=$(printf '\t')

say() {
  printf '%s: %s\n' "$PROGRAM" "$*" >&2
}

usage_error() {
  say "$*"
  say "usage: $PROGRAM --agent <uuid> [--base-url <url>] [--timeout-minutes <n>] (run with --help for more)"
  exit 2
}

# ---- arguments -------------------------------------------------------------------------------

agent=${SERVICE_AGENT_ID:-}
base_url=${SERVICE_BASE_URL:-}
timeout_minutes=${SERVICE_TIMEOUT_MINUTES:-30}
max_poll_seconds=${SERVICE_MAX_POLL_INTERVAL_SECONDS:-${SERVICE_POLL_SECONDS:-10}}
api_key=${SERVICE_API_KEY:-}
flag_commit_sha='' flag_branch='' flag_pull_request='' flag_repository='' flag_actor=''

while [ "$#" -gt 0 ]; do
  case $1 in
    -h | --help)
      sed -n '2,/^set -eu$/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
      exit 0
      ;;
    --version)
      printf 'direct-api.sh (service-ci %s)\n' "$VERSION"
      exit 0
      ;;
    --*=*)
      name=${1%%=*}
      value=${1#*=}
      shift
      set -- "$name" "$value" "$@"
      continue
      ;;
    --agent | --base-url | --timeout-minutes | --timeout | --max-poll-interval-seconds | \
      --poll-seconds | --commit-sha | --branch | --pull-request | --repository | --actor)
      [ "$#" -ge 2 ] || usage_error "$1 needs a value"
      case $1 in
        --agent) agent=$2 ;;
        --base-url) base_url=$2 ;;
        --timeout-minutes | --timeout) timeout_minutes=$2 ;;
        --max-poll-interval-seconds | --poll-seconds) max_poll_seconds=$2 ;;
        --commit-sha) flag_commit_sha=$2 ;;
        --branch) flag_branch=$2 ;;
        --pull-request) flag_pull_request=$2 ;;
        --repository) flag_repository=$2 ;;
        --actor) flag_actor=$2 ;;
      esac
      [ -n "$2" ] || usage_error "$1 must not be empty"
      shift 2
      ;;
    *) usage_error "unknown argument $1" ;;
  esac
done

h='[0-9A-Fa-f]'
uuid_pattern="$h$h$h$h$h$h$h$h-$h$h$h$h-$h$h$h$h-$h$h$h$h-$h$h$h$h$h$h$h$h$h$h$h$h"
# shellcheck disable=SC2254 # $uuid_pattern is a pattern on purpose
case $agent in
  '') usage_error "no agent given: pass --agent <uuid> or set SERVICE_AGENT_ID" ;;
  *,*) usage_error "one agent per call (got \"$agent\"); run the script once per agent" ;;
  $uuid_pattern) ;;
  *) usage_error "--agent must be an agent UUID like 0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10 (got \"$agent\")" ;;
esac

case $api_key in
  '') usage_error "SERVICE_API_KEY is not set: give the API key (created with CI access under Settings → API Keys) in the environment" ;;
  *[!!-~]*) usage_error "SERVICE_API_KEY contains whitespace or control characters (often a trailing newline from the secret store); it must be the key alone" ;;
esac

while :; do
  case $base_url in
    */) base_url=${base_url%/} ;;
    *) break ;;
  esac
done
case $base_url in
  '') usage_error "no service address: pass --base-url https://… or set SERVICE_BASE_URL" ;;
  *'?'* | *'#'*) usage_error "the base URL must not have a query or fragment (got \"$base_url\")" ;;
  *[!!-~]*) usage_error "the base URL must not contain spaces or control characters" ;;
esac
authority=${base_url#*://}
authority=${authority%%/*}
case $authority in
  *@*) usage_error "the base URL must not contain credentials; the key goes in SERVICE_API_KEY" ;;
esac
case $base_url in
  https://?*) ;;
  http://localhost | http://localhost[:/]* | http://127.[0-9]* | http://\[::1\] | http://\[::1\][:/]*) ;;
  http://*) usage_error "the base URL must use https:// for a remote host; http:// is only allowed for localhost, 127.0.0.0/8 and [::1] (got \"$base_url\")" ;;
  *) usage_error "the base URL must be an https:// URL (got \"$base_url\")" ;;
esac
origin=$(printf '%s' "${base_url%%://*}://$authority" | tr '[:upper:]' '[:lower:]')

is_number() {
  case $1 in
    '' | *[!0-9.]* | *.*.* | .) return 1 ;;
  esac
  awk -v n="$1" 'BEGIN { exit !(n + 0 > 0) }'
}
is_number "$timeout_minutes" ||
  usage_error "--timeout-minutes must be a positive number of minutes, decimals allowed (got \"$timeout_minutes\")"
if ! is_number "$max_poll_seconds" ||
  ! awk -v n="$max_poll_seconds" 'BEGIN { exit !(n >= 0.5 && n <= 300) }'; then
  usage_error "--max-poll-interval-seconds must be a number of seconds from 0.5 to 300 (got \"$max_poll_seconds\")"
fi
case $flag_pull_request in
  '' | [1-9] | [1-9]*[0-9]) ;;
  *) usage_error "--pull-request must be a pull request number like 42 (got \"$flag_pull_request\")" ;;
esac
case $flag_pull_request in
  *[!0-9]*) usage_error "--pull-request must be a pull request number like 42 (got \"$flag_pull_request\")" ;;
esac

command -v curl >/dev/null 2>&1 || usage_error "curl is needed: install curl 7.55 or later"
if command -v jq >/dev/null 2>&1; then json_reader='jq'; else json_reader='awk'; fi

# ---- scratch files, signals ------------------------------------------------------------------

umask 077
tmp=$(mktemp -d "${TMPDIR:-/tmp}/direct-api.XXXXXX") || {
  say "cannot make a scratch directory in ${TMPDIR:-/tmp}: the gate was not checked"
  exit 3
}
child=''
# Exit 1 means a failed gate, and only the verdict below sets it: a command that fails under
# set -e (a full disk, a missing tool) would otherwise exit 1 too, and read as a failed gate.
gate_failed=''
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  status=$?
  if [ -n "$child" ]; then kill "$child" 2>/dev/null || :; fi
  rm -rf "$tmp"
  if [ "$status" -eq 1 ] && [ -z "$gate_failed" ]; then
    say "stopped by an unexpected error (above): the gate was not checked"
    exit 3
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The key reaches curl through a file (curl -H @file), so it is never in a process's arguments.
printf 'X-API-Key: %s\n' "$api_key" >"$tmp/key"

# ---- JSON --------------------------------------------------------------------------------------

# The fallback reader: a strict JSON parser that prints, for each dotted path in JSON_PATHS,
# "path<TAB>type<TAB>literal" (type as jq names it, or "missing"), like the jq program below.
# Duplicate keys: the last one wins, as in jq. A document that is not one JSON object gives
# "doc<TAB>other" only.
# Shared by the two awk programs below: decoding JSON string literals into bytes.
cat >"$tmp/lib.awk" <<'AWK'
BEGIN { for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i }
function hexval(h) { return index("0123456789abcdef", tolower(h)) - 1 }
function hex4(x) { return hexval(substr(x, 1, 1)) * 4096 + hexval(substr(x, 2, 1)) * 256 + hexval(substr(x, 3, 1)) * 16 + hexval(substr(x, 4, 1)) }
function byte(b) { return b == 0 ? "\001" : sprintf("%c", b) }
function utf8(cp) {
  if (cp < 128) return byte(cp)
  if (cp < 2048) return byte(192 + int(cp / 64)) byte(128 + cp % 64)
  if (cp < 65536) return byte(224 + int(cp / 4096)) byte(128 + int(cp / 64) % 64) byte(128 + cp % 64)
  return byte(240 + int(cp / 262144)) byte(128 + int(cp / 4096) % 64) byte(128 + int(cp / 64) % 64) byte(128 + cp % 64)
}
# A JSON string literal (quotes included) to its bytes. awk strings cannot hold NUL, so U+0000
# becomes \001 (shown as a control character; a run_id holding it cannot be read back).
function decode(l, out, i, c, cp, lo) {
  out = ""; l = substr(l, 2, length(l) - 2)
  for (i = 1; i <= length(l); i++) {
    c = substr(l, i, 1)
    if (c != "\\") { out = out c; continue }
    c = substr(l, ++i, 1)
    if (c == "b") out = out "\b"
    else if (c == "f") out = out "\f"
    else if (c == "n") out = out "\n"
    else if (c == "r") out = out "\r"
    else if (c == "t") out = out "\t"
    else if (c == "u") {
      cp = hex4(substr(l, i + 1, 4)); i += 4
      if (cp >= 55296 && cp < 56320 && substr(l, i + 1, 2) == "\\u") {
        lo = hex4(substr(l, i + 3, 4))
        if (lo >= 56320 && lo < 57344) { cp = 65536 + (cp - 55296) * 1024 + (lo - 56320); i += 6 }
      }
      if (cp >= 55296 && cp < 57344) cp = 65533
      out = out utf8(cp)
    } else out = out c
  }
  return out
}
AWK

cat >"$tmp/read.awk" <<'AWK'
BEGIN {
  npaths = split(ENVIRON["JSON_PATHS"], paths, " ")
  for (i = 1; i <= npaths; i++) {
    wanted[paths[i]] = 1
    p = paths[i]
    while (match(p, /\.[^.]*$/)) { p = substr(p, 1, RSTART - 1); wanted[p] = 1 }
  }
  SKIP = "\001"
}
{ s = s $0 "\n" }
END {
  n = length(s); pos = 1; bad = 0; depth = 0
  ws()
  if (substr(s, pos, 1) != "{") bad = 1
  if (!bad) value("")
  if (!bad) ws()
  if (!bad && pos <= n) bad = 1
  if (bad) { print "doc\tother"; exit }
  print "doc\tobject"
  for (i = 1; i <= npaths; i++) {
    p = paths[i]
    if (p in type) print p "\t" type[p] "\t" lit[p]
    else print p "\tmissing\t"
  }
}
function ws(c) {
  while (pos <= n) {
    c = substr(s, pos, 1)
    if (c != " " && c != "\t" && c != "\n" && c != "\r") return
    pos++
  }
}
function record(path, t, l, k) {
  if (path == SKIP) return
  if (path in type) for (k in type) if (index(k, path ".") == 1) { delete type[k]; delete lit[k] }
  type[path] = t; lit[path] = l
}
function child(path, key) {
  if (path == SKIP || key !~ /^[A-Za-z0-9_]+$/) return SKIP
  key = path == "" ? key : path "." key
  return (key in wanted) ? key : SKIP
}
function value(path, c, start, key, tok) {
  if (bad) return
  if (++depth > 10000) { bad = 1; return }
  ws(); c = substr(s, pos, 1)
  if (c == "{") {
    record(path, "object", ""); pos++; ws()
    if (substr(s, pos, 1) == "}") pos++
    else while (!bad) {
      ws()
      if (substr(s, pos, 1) != "\"") { bad = 1; break }
      key = decode(string()); if (bad) break
      ws(); if (substr(s, pos, 1) != ":") { bad = 1; break }
      pos++; value(child(path, key)); if (bad) break
      ws(); c = substr(s, pos, 1); pos++
      if (c == "}") break
      if (c != ",") bad = 1
    }
  } else if (c == "[") {
    record(path, "array", ""); pos++; ws()
    if (substr(s, pos, 1) == "]") pos++
    else while (!bad) {
      value(SKIP); if (bad) break
      ws(); c = substr(s, pos, 1); pos++
      if (c == "]") break
      if (c != ",") bad = 1
    }
  } else if (c == "\"") {
    tok = string(); if (!bad) record(path, "string", tok)
  } else if (substr(s, pos, 4) == "true" || substr(s, pos, 5) == "false") {
    tok = substr(s, pos, 4) == "true" ? "true" : "false"
    pos += length(tok); record(path, "boolean", tok)
  } else if (substr(s, pos, 4) == "null") {
    pos += 4; record(path, "null", "")
  } else {
    start = pos
    while (pos <= n && index("+-0123456789.eE", substr(s, pos, 1))) pos++
    tok = substr(s, start, pos - start)
    if (tok ~ /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$/) record(path, "number", tok)
    else bad = 1
  }
  depth--
}
function string(start, c) {
  start = pos; pos++
  while (1) {
    c = substr(s, pos, 1)
    if (c == "") { bad = 1; return "" }
    if (c == "\"") { pos++; return substr(s, start, pos - start) }
    if (c == "\\") {
      c = substr(s, pos + 1, 1)
      if (c == "u") {
        if (substr(s, pos + 2, 4) !~ /^[0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f]$/) { bad = 1; return "" }
        pos += 6
      } else if (index("\"\\/bfnrt", c) && c != "") pos += 2
      else { bad = 1; return "" }
    } else if (ord[c] < 32) { bad = 1; return "" }
    else pos++
  }
}
AWK

# Turns what either reader printed into lines the shell reads: "name<TAB>type<TAB>=value", where
# a string's value is decoded and shown as data (escape sequences and control characters
# removed, one line, the key masked, at most 300 bytes), and run_id also gets "run_id.uri", the
# percent-encoded path segment. With MODE=text it shows a plain-text body the same way.
cat >"$tmp/show.awk" <<'AWK'
BEGIN {
  key = ENVIRON["SERVICE_API_KEY"]
  FS = "\t"
}
ENVIRON["MODE"] == "text" { text = text $0 " "; next }
$1 == "doc" { print "doc\t" $2; next }
{
  name = $1; t = $2; l = $3
  if (t == "string") {
    decoded = decode(l)
    print name "\tstring\t=" show(decoded)
    if (name == "run_id") print "run_id.uri\tstring\t=" uri(decoded)
  } else if (t == "boolean" || t == "number") print name "\t" t "\t=" l
  else print name "\t" t "\t="
}
END { if (ENVIRON["MODE"] == "text") print show(text) }
function uri(x, out, i, c) {
  out = ""
  for (i = 1; i <= length(x); i++) {
    c = substr(x, i, 1)
    if (c ~ /[A-Za-z0-9._~-]/) out = out c
    else out = out sprintf("%%%02X", ord[c])
  }
  return out
}
function show(x, i) {
  gsub(/\033\[[0-?]*[ -\/]*[@-~]/, "", x)
  gsub(/\033\][^\007\033]*(\007|\033\\)/, "", x)
  gsub(/[\t\n\r]/, " ", x)
  gsub(/[\001-\037\177]/, "", x)
  gsub(/\302[\200-\237]/, "", x)
  gsub(/  +/, " ", x)
  sub(/^ /, "", x); sub(/ $/, "", x)
  if (key != "") while ((i = index(x, key)) > 0) x = substr(x, 1, i - 1) "***" substr(x, i + length(key))
  if (length(x) > 300) {
    x = substr(x, 1, 300)
    sub(/[\300-\377][\200-\277]*$/, "", x)
    x = x "..."
  }
  return x
}
AWK

# json_read FILE PATHS: reads FILE, prints the shell-readable lines of show.awk.
json_read() {
  if [ "$json_reader" = jq ]; then
    jq -r -s --arg paths "$2" '
      if length == 1 and (.[0] | type) == "object" then
        .[0] as $doc
        | "doc\tobject",
          ($paths | split(" ")[] | select(. != "") as $p | ($p | split(".")) as $path
            | ($doc
               | try (getpath($path[:-1])
                      | if type == "object" and has($path[-1]) then
                          .[$path[-1]]
                          | [type, (if type == "string" or type == "boolean" or type == "number"
                                    then tojson else "" end)]
                        else ["missing", ""] end)
                 catch ["missing", ""])
            | "\($p)\t\(.[0])\t\(.[1])")
      else "doc\tother" end' <"$1" 2>/dev/null || :
  else
    JSON_PATHS=$2 awk -f "$tmp/lib.awk" -f "$tmp/read.awk" <"$1" 2>/dev/null || :
  fi | SERVICE_API_KEY=$api_key awk -f "$tmp/lib.awk" -f "$tmp/show.awk"
}

# show_text FILE: a plain-text body, shown as data on one line.
show_text() {
  MODE=text SERVICE_API_KEY=$api_key awk -f "$tmp/lib.awk" -f "$tmp/show.awk" <"$1"
}

# read_document FILE: sets doc, run_id_*, status_*, url_*, passed_*, message and error_code from a
# run document or an error body.
read_document() {
  doc=other run_id_type=missing run_id_text='' run_id_uri='' status_type=missing status_text=''
  url_type=missing url_text='' passed_type=missing passed_value='' message=''
  error_message='' error_text='' message_text='' detail_text='' error_code=''
  json_read "$1" 'run_id status url results.gate.passed error.code error.message error message detail' \
    >"$tmp/fields"
  while IFS=$tab read -r name type value; do
    value=${value#=}
    case $name in
      doc) doc=$type ;;
      run_id) run_id_type=$type run_id_text=$value ;;
      run_id.uri) run_id_uri=$value ;;
      status) status_type=$type status_text=$value ;;
      url) url_type=$type url_text=$value ;;
      results.gate.passed) passed_type=$type passed_value=$value ;;
      error.code) [ "$type" != string ] || error_code=$value ;;
      error.message) [ "$type" != string ] || error_message=$value ;;
      error) [ "$type" != string ] || error_text=$value ;;
      message) [ "$type" != string ] || message_text=$value ;;
      detail) [ "$type" != string ] || detail_text=$value ;;
    esac
  done <"$tmp/fields"
  for candidate in "$error_message" "$error_text" "$message_text" "$detail_text"; do
    if [ -n "$candidate" ]; then
      message=$candidate
      break
    fi
  done
}

# json_string VALUE: VALUE as a JSON string literal, or null when VALUE is empty.
json_string() {
  if [ -z "$1" ]; then
    printf 'null'
  else
    VALUE=$1 awk 'BEGIN {
      for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i
      x = ENVIRON["VALUE"]; out = ""
      for (i = 1; i <= length(x); i++) {
        c = substr(x, i, 1)
        if (c == "\"" || c == "\\") out = out "\\" c
        else if (ord[c] < 32 || ord[c] == 127) out = out sprintf("\\u%04x", ord[c])
        else out = out c
      }
      printf "\"%s\"", out
    }'
  fi
}

# ---- CI metadata -------------------------------------------------------------------------------

# slug_of URL: owner/name from a git URL in any of its forms; credentials and host are dropped.
slug_of() {
  printf '%s\n' "$1" | sed -e 's#^[A-Za-z][A-Za-z0-9+.-]*://[^/]*/##' -e 's#^[^@/:]*@[^:/]*:##' \
    -e 's#\.git/*$##' -e 's#/*$##' | awk -F/ 'NF >= 2 && $0 !~ /^(\/|file:)|:/ { print; exit }'
}

# strip_ref NAME: a branch name without refs/heads/ or origin/; other refs are not branches.
strip_ref() {
  case $1 in
    refs/heads/*) printf '%s' "${1#refs/heads/}" ;;
    refs/*) ;;
    origin/*) printf '%s' "${1#origin/}" ;;
    *) printf '%s' "$1" ;;
  esac
}

first() {
  for candidate in "$@"; do
    if [ -n "$candidate" ]; then
      printf '%s' "$candidate"
      return 0
    fi
  done
}

git_value() {
  if command -v git >/dev/null 2>&1; then git "$@" 2>/dev/null || :; fi
}

provider=local sha='' branch='' pull_request='' repository='' actor='' build_url=''
if [ "${CI:-}" = false ]; then
  :
elif [ "${GITHUB_ACTIONS:-}" = true ]; then
  provider=github_actions
  event_sha='' event_number='' event_ref=''
  if [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -r "${GITHUB_EVENT_PATH:-}" ]; then
    json_read "$GITHUB_EVENT_PATH" 'pull_request.head.sha pull_request.number pull_request.head.ref' \
      >"$tmp/event"
    while IFS=$tab read -r name type value; do
      case $name in
        pull_request.head.sha) [ "$type" != string ] || event_sha=${value#=} ;;
        pull_request.number) [ "$type" != number ] || event_number=${value#=} ;;
        pull_request.head.ref) [ "$type" != string ] || event_ref=${value#=} ;;
      esac
    done <"$tmp/event"
  fi
  sha=$(first "$event_sha" "${GITHUB_SHA:-}")
  if [ "${GITHUB_REF_TYPE:-}" != tag ]; then
    case ${GITHUB_REF:-} in
      refs/*) ref_branch=$(strip_ref "$GITHUB_REF") ;;
      *) ref_branch=${GITHUB_REF_NAME:-} ;;
    esac
    branch=$(first "$event_ref" "${GITHUB_HEAD_REF:-}" "$ref_branch")
  fi
  pr_ref=${GITHUB_REF:-}
  case $pr_ref in
    refs/pull/*/merge) pr_ref=${pr_ref#refs/pull/} pr_ref=${pr_ref%/merge} ;;
    *) pr_ref='' ;;
  esac
  pull_request=$(first "$event_number" "$pr_ref")
  repository=${GITHUB_REPOSITORY:-}
  actor=$(first "${GITHUB_TRIGGERING_ACTOR:-}" "${GITHUB_ACTOR:-}")
  if [ -n "${GITHUB_SERVER_URL:-}" ] && [ -n "${GITHUB_REPOSITORY:-}" ] && [ -n "${GITHUB_RUN_ID:-}" ]; then
    build_url=$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID
  fi
elif [ "${GITLAB_CI:-}" = true ]; then
  provider=gitlab
  sha=$(first "${CI_MERGE_REQUEST_SOURCE_BRANCH_SHA:-}" "${CI_COMMIT_SHA:-}")
  if [ -z "${CI_COMMIT_TAG:-}" ]; then
    branch=$(first "${CI_MERGE_REQUEST_SOURCE_BRANCH_NAME:-}" "${CI_COMMIT_BRANCH:-}" "${CI_COMMIT_REF_NAME:-}")
  fi
  pull_request=${CI_MERGE_REQUEST_IID:-}
  repository=${CI_PROJECT_PATH:-}
  actor=${GITLAB_USER_LOGIN:-}
  build_url=${CI_JOB_URL:-}
elif [ "${CIRCLECI:-}" = true ]; then
  provider=circleci
  sha=${CIRCLE_SHA1:-}
  [ -n "${CIRCLE_TAG:-}" ] || branch=${CIRCLE_BRANCH:-}
  circle_pull_request=${CIRCLE_PULL_REQUEST:-}
  pull_request=$(first "${circle_pull_request##*/}" "${CIRCLE_PR_NUMBER:-}")
  if [ -n "${CIRCLE_PROJECT_USERNAME:-}" ] && [ -n "${CIRCLE_PROJECT_REPONAME:-}" ]; then
    repository=$CIRCLE_PROJECT_USERNAME/$CIRCLE_PROJECT_REPONAME
  fi
  actor=${CIRCLE_USERNAME:-}
  build_url=${CIRCLE_BUILD_URL:-}
elif [ -n "${BITBUCKET_BUILD_NUMBER:-}" ]; then
  provider=bitbucket
  sha=${BITBUCKET_COMMIT:-}
  [ -n "${BITBUCKET_TAG:-}" ] || branch=${BITBUCKET_BRANCH:-}
  pull_request=${BITBUCKET_PR_ID:-}
  repository=${BITBUCKET_REPO_FULL_NAME:-}
  actor=${BITBUCKET_STEP_TRIGGERER_UUID:-}
  if [ -n "$repository" ]; then
    build_url="https://bitbucket.org/$repository/addon/pipelines/home#!/results/$BITBUCKET_BUILD_NUMBER"
  fi
elif [ -n "${JENKINS_URL:-}" ]; then
  provider=jenkins
  sha=${GIT_COMMIT:-}
  if [ -z "${TAG_NAME:-}" ]; then
    branch=$(first "${CHANGE_BRANCH:-}" "${BRANCH_NAME:-}" "${GIT_LOCAL_BRANCH:-}" "$(strip_ref "${GIT_BRANCH:-}")")
  fi
  pull_request=${CHANGE_ID:-}
  [ -z "${GIT_URL:-}" ] || repository=$(slug_of "$GIT_URL")
  actor=$(first "${CHANGE_AUTHOR:-}" "${BUILD_USER_ID:-}")
  build_url=${BUILD_URL:-}
fi
if [ "$provider" = local ]; then
  sha=$(git_value rev-parse HEAD)
  branch=$(git_value symbolic-ref --short HEAD)
  remote=$(git_value remote get-url origin)
  [ -z "$remote" ] || repository=$(slug_of "$remote")
fi
case $pull_request in
  [1-9] | [1-9]*[0-9]) case $pull_request in *[!0-9]*) pull_request='' ;; esac ;;
  *) pull_request='' ;;
esac
case $build_url in
  http://* | https://*) build_url=$(printf '%s' "$build_url" | sed 's#^\(https*://\)[^/@]*@#\1#') ;;
  *) build_url='' ;;
esac
sha=$(first "$flag_commit_sha" "$sha")
branch=$(first "$flag_branch" "$branch")
pull_request=$(first "$flag_pull_request" "$pull_request")
repository=$(first "$flag_repository" "$repository")
actor=$(first "$flag_actor" "$actor")

{
  printf '{"ci_metadata":{"commit_sha":%s,"branch":%s,' "$(json_string "$sha")" "$(json_string "$branch")"
  printf '"pull_request_number":%s,' "${pull_request:-null}"
  printf '"repository":%s,"actor":%s,' "$(json_string "$repository")" "$(json_string "$actor")"
  printf '"provider":"%s","build_url":%s}}' "$provider" "$(json_string "$build_url")"
} >"$tmp/request"

# ---- time, sleeping, HTTP ----------------------------------------------------------------------

now() {
  date +%s
}

calc() {
  awk "BEGIN { print ($1) }"
}

started=$(now)
deadline=$(calc "$started + int($timeout_minutes * 60 + 0.999)")

timed_out() {
  say "TIMED OUT: no verdict for agent $agent within $timeout_minutes minutes${1:+ ($1)}"
  exit 4
}

# pause SECONDS: sleeps, but never past the deadline (then exits 4); signals stop it at once.
pause() {
  remaining=$((deadline - $(now)))
  if [ "$remaining" -le 0 ]; then timed_out "${last_state:-}"; fi
  seconds=$(calc "$1 < $remaining ? $1 : $remaining")
  sleep "$seconds" &
  child=$!
  wait "$child" || :
  child=''
  if [ "$(now)" -ge "$deadline" ]; then timed_out "${last_state:-}"; fi
}

unchecked() {
  say "NOT CHECKED: the gate of agent $agent could not be checked: $*"
  exit 3
}

# retry_after: the last answer's Retry-After as seconds from now, bounded to 0.5 … 300 (contract
# §1), when it gave delay-seconds or an HTTP date (IMF-fixdate or RFC 850, read as service-ci
# reads them: a 2-digit year below 50 is 20xx); nothing when it gave neither.
retry_after() {
  awk -v now="$(now)" '
    tolower($1) == "retry-after:" { v = $0; sub(/^[^:]*:[ \t]*/, "", v); sub(/[ \t\r]+$/, "", v) }
    END {
      if (v ~ /^[0-9]+(\.[0-9]+)?$/) s = v + 0
      else {
        gsub(/-/, " ", v)
        if (split(v, f, " ") != 6 || f[1] !~ /^[A-Za-z][A-Za-z][A-Za-z]+,$/ || length(f[1]) > 10 ||
          f[2] !~ /^[0-9][0-9]?$/ || f[4] !~ /^[0-9][0-9][0-9]?[0-9]?$/ || toupper(f[6]) != "GMT" ||
          f[5] !~ /^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]$/) exit
        m = index("janfebmaraprmayjunjulaugsepoctnovdec", tolower(f[3]))
        if (length(f[3]) != 3 || m % 3 != 1) exit
        m = (m + 2) / 3; y = f[4] + 0
        if (length(f[4]) == 2) y += y < 50 ? 2000 : 1900
        if (m <= 2) { y--; m += 12 }
        days = 365 * y + int(y / 4) - int(y / 100) + int(y / 400) + int((153 * (m - 3) + 2) / 5) + f[2] - 719469
        split(f[5], t, ":")
        s = days * 86400 + t[1] * 3600 + t[2] * 60 + t[3] - now
      }
      print (s < 0.5 ? 0.5 : s > 300 ? 300 : s)
    }' "$tmp/headers"
}

# jittered BASE LOW: BASE seconds times a random share from LOW to 1.
jittered() {
  awk -v base="$1" -v low="$2" -v seed="$$$(now)$1" \
    'BEGIN { srand(seed); print base * (low + rand() * (1 - low)) }'
}

# backoff N [LOW]: the wait before retry N, as src/backoff.ts: the service's Retry-After, or full
# jitter, a random share (from LOW, default 0) of min(30, 0.5 × 2^(N−1)) seconds.
backoff() {
  given=$(retry_after)
  if [ -n "$given" ]; then
    printf '%s' "$given"
  else
    jittered "$(calc "0.5 * 2 ^ ($1 - 1) < 30 ? 0.5 * 2 ^ ($1 - 1) : 30")" "${2:-0}"
  fi
}

# poll_delay: the wait before the next read, as src/schedule.ts: the service's Retry-After, or
# min(max, 1 s + 0.15 × the run's age) spread by ±10 %, at most the max.
poll_delay() {
  given=$(retry_after)
  if [ -n "$given" ]; then
    printf '%s' "$given"
  else
    awk -v age="$(($(now) - triggered_at))" -v max="$max_poll_seconds" -v seed="$$$(now)" 'BEGIN {
      srand(seed); i = 1 + 0.15 * age; if (i > max) i = max
      d = i * (0.9 + 0.2 * rand()); print (d < max ? d : max) }'
  fi
}

# fault WHAT: a transient fault; retried after a backoff unless it is the 10th in a row.
fault() {
  unreachable_since=''
  faults=$((faults + 1))
  last_state="last answer: $1"
  if [ "$faults" -ge "$MAX_FAULTS" ]; then
    unchecked "gave up after $MAX_FAULTS failed attempts in a row; the last: $1"
  fi
  say "transient fault ($1); attempt $faults of $MAX_FAULTS, trying again"
  pause "$(backoff "$faults")"
}

# no_answer: a request that got no answer. Before the service has ever answered, a refused
# connection (curl's exit 7) or a host name that does not resolve (6) is most often a wrong
# address: said plainly once, and tried for UNREACHABLE_SECONDS from the first, as service-ci does.
no_answer() {
  if [ -n "$answered" ] || { [ "$status" -ne 7 ] && [ "$status" -ne 6 ]; }; then
    fault "no answer: ${curl_error:-curl failed}"
    return
  fi
  # curl reports a proxy that refuses, or whose name does not resolve, with the same exit code:
  # the proxy is named as a suspect too (curl reads only the lower-case http_proxy).
  case $base_url in
    https:*) proxy='any proxy in HTTPS_PROXY/ALL_PROXY' ;;
    *) proxy='any proxy in http_proxy/ALL_PROXY' ;;
  esac
  if [ "$status" -eq 7 ]; then
    what="connection refused by $authority: check the address and its port, that the service is up, and $proxy"
  else
    what="could not resolve host ${authority%:*}: check the address, this machine's DNS, and $proxy"
  fi
  if [ -z "$unreachable_since" ]; then
    unreachable_since=$(now)
    say "$what; trying for up to $UNREACHABLE_SECONDS s"
  fi
  faults=$((faults + 1))
  last_state="last answer: $what"
  spent=$(($(now) - unreachable_since))
  if [ "$spent" -ge "$UNREACHABLE_SECONDS" ] || [ "$faults" -ge "$MAX_FAULTS" ]; then
    unchecked "$what; gave up after $faults attempts over $spent s"
  fi
  pause "$(calc "$(backoff "$faults") < $((UNREACHABLE_SECONDS - spent)) ? $(backoff "$faults") : $((UNREACHABLE_SECONDS - spent))")"
}

# http METHOD URL [BODY]: one request; sets code (000 when no answer) and location, and leaves
# the answer in $tmp/body and its headers in $tmp/headers.
http() {
  remaining=$((deadline - $(now)))
  if [ "$remaining" -le 0 ]; then timed_out "${last_state:-}"; fi
  limit=$remaining
  [ "$limit" -le 30 ] || limit=30
  set -- "$1" "$2" "${3:-}" --silent --show-error --max-time "$limit" --connect-timeout 10 \
    --max-filesize 1048576 --header @"$tmp/key" --header 'Accept: application/json' \
    --header "User-Agent: $user_agent" --output "$tmp/body" --dump-header "$tmp/headers" \
    --write-out '%{http_code} %{redirect_url}' --request "$1"
  if [ -n "$3" ]; then
    set -- "$@" --header 'Content-Type: application/json' \
      --header "Idempotency-Key: $idempotency_key" --data-binary @"$3"
  fi
  url=$2
  shift 3
  : >"$tmp/body"
  : >"$tmp/headers"
  status=0
  curl_error=''
  curl "$@" "$url" >"$tmp/written" 2>"$tmp/curl-error" &
  child=$!
  wait "$child" || status=$?
  child=''
  read -r code location <"$tmp/written" || :
  code=${code:-000}
  location=${location:-}
  [ "$code" = 000 ] || answered=1
  if [ "$status" -ne 0 ] && [ "$code" = 000 ]; then
    curl_error=$(show_text "$tmp/curl-error")
    code=000
  fi
}

# describe: the last answer in one line, with the service's message.
describe() {
  read_document "$tmp/body"
  if [ "$doc" != object ]; then message=$(show_text "$tmp/body"); fi
  printf 'HTTP %s%s' "$code" "${message:+: $message}"
}

# refused OPERATION: an answer the contract does not retry, with what to fix where the cause is
# known: by status for the key and a missing agent or run, otherwise by the service's error code,
# as src/run.ts does.
refused() {
  read_document "$tmp/body"
  what=$(describe)
  error_code=$(printf '%s' "$error_code" | tr '[:upper:]' '[:lower:]')
  case $code:$1:$error_code in
    401:*) hint="check that SERVICE_API_KEY holds a current API key of this service" ;;
    403:*)
      case $(printf '%s' "$what" | tr '[:upper:]' '[:lower:]') in
        *"api keys"*) hint='' ;;
        *) hint="the API key needs CI access: use a key created with it under Settings → API Keys" ;;
      esac
      ;;
    404:trigger:*) hint="check the agent UUID and --base-url: the service knows no such agent" ;;
    404:*) hint="the run is no longer readable on the service" ;;
    *:*:*inactive*) hint="the agent is inactive: activate it in the service's dashboard" ;;
    *:*:*gate*) hint="the agent has no quality gate: configure one on the agent" ;;
    *:*:*system* | *:*:*endpoint*) hint="the agent's system has no reachable endpoint: configure it on the system" ;;
    *) hint='' ;;
  esac
  unchecked "$what${hint:+ (fix: $hint)}"
}

# no_redirect WHY: a redirect that is not followed.
no_redirect() {
  unchecked "HTTP $code redirect $1; refused (fix: check --base-url: redirects are only followed within the API on the same origin)"
}

# follow ALLOWED UNDER: whether the last answer is a redirect (one of ALLOWED) to the same origin,
# under the path UNDER, and not the sixth; sets next_url. The key is never sent anywhere else.
follow() {
  case " $1 " in
    *" $code "*) ;;
    *) no_redirect "of a kind the contract does not follow for this request (only $(printf '%s' "$1" | tr ' ' /))" ;;
  esac
  redirects=$((redirects + 1))
  if [ "$redirects" -gt "$MAX_REDIRECTS" ]; then no_redirect "after $MAX_REDIRECTS redirects"; fi
  [ -n "$location" ] || unchecked "HTTP $code: a redirect without a Location header"
  # curl gives the Location resolved against the request's address.
  target=$(printf '%s' "$location" | tr '[:upper:]' '[:lower:]')
  case $target in
    "$origin"/*) ;;
    *) no_redirect "to another origin (the key is only sent to $origin)" ;;
  esac
  next_url=$origin/${location#*://*/}
  path=/${next_url#"$origin"/}
  path=${path%%[?#]*}
  # curl resolves plain dot segments, not percent-encoded ones, which a server may still resolve
  # out of UNDER.
  case $(printf '%s' "$path/" | sed 's/%2[eE]/./g') in
    */./* | */../*) no_redirect "with a dot segment in its path" ;;
  esac
  case $path in
    "$2" | "$2"/*) ;;
    *) no_redirect "outside $2" ;;
  esac
}

os=$(uname -s | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9_\n' '_')
arch=$(uname -m | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9_\n' '_')
[ "$arch" != arm64 ] || arch=aarch64
[ "$arch" != amd64 ] || arch=x86_64
user_agent="service-ci/$VERSION+direct-api ($os; $arch)"

# ---- trigger -----------------------------------------------------------------------------------

new_uuid() {
  if [ -r /proc/sys/kernel/random/uuid ]; then
    cat /proc/sys/kernel/random/uuid
  elif command -v uuidgen >/dev/null 2>&1; then
    uuidgen -r 2>/dev/null || uuidgen
  else
    od -An -N16 -tx1 /dev/urandom | tr -d ' \n' | awk '{
      v = index("0123456789abcdef", substr($0, 17, 1)) - 1
      printf "%s-%s-4%s-%s%s-%s\n", substr($0, 1, 8), substr($0, 9, 4), substr($0, 14, 3),
        substr("89ab", v % 4 + 1, 1), substr($0, 18, 3), substr($0, 21, 12) }'
  fi
}
idempotency_key=$(new_uuid | tr 'A-F' 'a-f')
case $idempotency_key in
  $h$h$h$h$h$h$h$h-$h$h$h$h-4$h$h$h-[89ab]$h$h$h-$h$h$h$h$h$h$h$h$h$h$h$h) ;;
  *) say "could not make a UUID v4 for the Idempotency-Key (got \"$idempotency_key\")"; exit 2 ;;
esac

# state_of: how the contract's §2 reads the last run document: going, ended (without a verdict) or
# finished. These lists are src/verdict.ts's; tests/direct_api_test.ts checks that they are equal.
state_of() {
  normalized=''
  [ "$status_type" != string ] || normalized=$(printf '%s' "$status_text" | tr '[:upper:] -' '[:lower:]__')
  case $normalized in
    queued | pending | created | scheduled | running | in_progress | evaluating) state=going ;;
    error | errored | cancelled | canceled | aborted | timed_out | timeout | expired | rejected)
      state=ended
      ;;
    completed | complete | succeeded | success | finished | done | passed | failed) state=finished ;;
    *) if [ "$passed_type" = boolean ]; then state=finished; else state=going; fi ;;
  esac
}

say "agent $agent on $base_url (provider $provider, JSON read with $json_reader)"
runs_url=$base_url/api/v1/agents/$agent/runs
runs_path=${base_url#*://}
runs_path=${runs_path#"$authority"}/api/v1/agents/$agent/runs
request_url=$runs_url
faults=0
redirects=0
last_state=''
answered=''
unreachable_since=''
while :; do
  http POST "$request_url" "$tmp/request"
  # A retry starts again from the runs address (as service-ci does).
  case $code in
    000 | 2?? | 408 | 425 | 429 | 5??) request_url=$runs_url redirects=0 ;;
  esac
  case $code in
    000) no_answer ;;
    2??)
      read_document "$tmp/body"
      if [ "$doc" != object ]; then
        fault "HTTP $code that is not a JSON object"
        continue
      fi
      case $run_id_type:$run_id_uri in
        string: | string:. | string:..) ;;
        string:*) break ;;
      esac
      unchecked "HTTP $code without a usable run_id (not retried: the service may have started a run)"
      ;;
    3??)
      follow '307 308' "$runs_path"
      request_url=$next_url
      ;;
    408 | 425 | 429 | 5??) fault "$(describe)" ;;
    *) refused trigger ;;
  esac
done
triggered_at=$(now)
run_id=$run_id_text
run_link=''
[ "$url_type" != string ] || run_link=$url_text
say "triggered run $run_id${run_link:+: $run_link}"

# ---- poll --------------------------------------------------------------------------------------

run_url=$runs_url/$run_id_uri
request_url=$run_url
faults=0
redirects=0
shown_status=${status_text:-queued}
last_status=''
last_state="run $run_id still $shown_status"
# A trigger answer that already shows a verdict is confirmed at once, unless the service asked to
# wait (as service-ci does).
state_of
given=$(retry_after)
if [ "$state" = going ] || [ -n "$given" ]; then pause "$(poll_delay)"; fi
while :; do
  http GET "$request_url"
  case $code in
    000 | 2?? | 404 | 408 | 425 | 429 | 5??) request_url=$run_url redirects=0 ;;
  esac
  case $code in
    000)
      no_answer
      continue
      ;;
    2??)
      read_document "$tmp/body"
      if [ "$doc" != object ]; then
        fault "HTTP $code that is not a JSON object"
        continue
      fi
      ;;
    3??)
      follow '301 302 303 307 308' "$runs_path"
      request_url=$next_url
      continue
      ;;
    404)
      if [ $(($(now) - triggered_at)) -lt 30 ]; then
        last_state="run $run_id not readable yet"
        pause "$(backoff 1 0.5)"
        continue
      fi
      refused read
      ;;
    408 | 425 | 429 | 5??)
      fault "$(describe)"
      continue
      ;;
    *) refused read ;;
  esac
  faults=0
  [ "$url_type" != string ] || [ -n "$run_link" ] || {
    run_link=$url_text
    say "run $run_id: $run_link"
  }
  state_of
  shown_status=${status_text:-no status}
  [ "$status_type" = string ] || shown_status="no status"
  if [ "$state" = going ]; then
    if [ "$shown_status" != "$last_status" ]; then say "run $run_id: $shown_status"; fi
    last_status=$shown_status
    last_state="run $run_id still $shown_status"
    pause "$(poll_delay)"
    continue
  fi
  break
done

where="run $run_id, status $shown_status${run_link:+, $run_link}"
if [ "$state" = ended ]; then
  unchecked "the run ended without a verdict ($where)"
fi
case $passed_type:$passed_value in
  boolean:true)
    say "PASSED: the quality gate of agent $agent passed ($where)"
    exit 0
    ;;
  boolean:false)
    say "FAILED: the quality gate of agent $agent failed ($where)"
    gate_failed=1
    exit 1
    ;;
esac
unchecked "results.gate.passed is $passed_type${passed_value:+ $passed_value}, not true or false ($where)"
