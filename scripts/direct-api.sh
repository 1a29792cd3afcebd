#!/bin/sh
# One agent's quality gate with two plain HTTP calls, for jobs that can run neither the service-ci
# image nor its binary (the service docs' "Direct API calls"): it triggers a run, reads it until it
# is terminal, and exits 0 only when results.gate.passed is exactly the JSON value true. It is
# short so that you can read it before you run it; service-ci is the full gate, and
# docs/recipes/direct-api.md says what this script leaves out. Requires curl 7.55 or later, sh,
# awk, sed, tr, date, mktemp, uname, rm and a sleep that takes decimals; reads JSON with
# python3 if present, else with jq, else with its own reader.
#
# Options and variables (an option wins over its variable):
#   --agent <uuid>            SERVICE_AGENT_ID         required; one agent per call
#   --base-url <url>          SERVICE_BASE_URL         required; https:// (http:// for loopback,
#                                                      reached directly, never through a proxy)
#   --timeout-minutes <n>     SERVICE_TIMEOUT_MINUTES  default 30; decimals allowed
#                             SERVICE_API_KEY          required; sent only as the X-API-Key header
#
# It follows the same contract as service-ci: tests/contract_table_test.ts plays one table of
# scenarios against both. Exit codes: 0 the gate passed; 1 it failed, and nothing else; 2 usage
# error (nothing sent); 3 the gate could not be checked; 4 the timeout ran out; 130/143 interrupted.
# shellcheck disable=SC2016,SC2317 # the awk, jq and python programs are single-quoted on purpose
set -eu

export LC_ALL=C # byte-wise tr, awk and case patterns, whatever the caller's locale
VERSION=1.2.0
tab=$(printf '\t')

say() { printf 'direct-api.sh: %s\n' "$*" >&2; }
# lower TEXT: sets lower to TEXT with A-Z as a-z, as tr '[:upper:]' '[:lower:]' would, without a process.
lower() {
  lower='' rest=$1 pairs=AaBbCcDdEeFfGgHhIiJjKkLlMmNnOoPpQqRrSsTtUuVvWwXxYyZz
  while [ -n "$rest" ]; do
    c=${rest%"${rest#?}"} rest=${rest#?}
    case $c in [[:upper:]]) c=${pairs#*"$c"} c=${c%"${c#?}"} ;; esac
    lower=$lower$c
  done
}
usage() {
  say "$* (usage: direct-api.sh --agent <uuid> --base-url <url> [--timeout-minutes <n>])"
  exit 2
}

agent=${SERVICE_AGENT_ID:-} base_url=${SERVICE_BASE_URL:-} minutes=${SERVICE_TIMEOUT_MINUTES:-30}
while [ "$#" -gt 0 ]; do
  case $1 in
    --agent) agent=${2:-} ;;
    --base-url) base_url=${2:-} ;;
    --timeout-minutes) minutes=${2:-} ;;
    *) usage "unknown argument $1" ;;
  esac
  [ -n "${2:-}" ] || usage "$1 needs a value"
  shift 2
done
h4='[0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f]'
# shellcheck disable=SC2254 # a pattern on purpose
case $agent in
  $h4$h4-$h4-$h4-$h4-$h4$h4$h4) lower "$agent" && agent=$lower ;;
  *) usage "--agent (or SERVICE_AGENT_ID) must be one agent UUID like 0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10 (got \"$agent\")" ;;
esac
case ${SERVICE_API_KEY:-} in
  '') usage "SERVICE_API_KEY is not set: give the API key (created with CI access) in the environment" ;;
  *[!!-~]*) usage "SERVICE_API_KEY contains whitespace or control characters: it must be the key alone" ;;
esac
while [ "${base_url%/}" != "$base_url" ]; do base_url=${base_url%/}; done
host=${base_url#*://}
host=${host%%/*}
case ${base_url%%://*}:$host in
  https:?* | http:localhost | http:localhost:* | http:\[::1\] | http:\[::1\]:*) ;;
  http:127.*) case $host in *[!0-9.:]*) host='' ;; esac ;;
  *) host='' ;;
esac
case $base_url in *[!!-~]* | *'?'* | *'#'* | *@*) host='' ;; esac
[ -n "$host" ] || usage "--base-url (or SERVICE_BASE_URL) must be https:// (http:// only for localhost, 127.0.0.0/8 and [::1]), with no query, fragment or credentials (got \"$base_url\")"
seconds=$(awk -v m="$minutes" 'BEGIN { if (m !~ /^[0-9]*\.?[0-9]+$/ || m * 60 <= 0) exit 1
  print int(m * 60) + (m * 60 > int(m * 60)) }') ||
  usage "--timeout-minutes must be a positive number of minutes (got \"$minutes\")"
command -v curl >/dev/null 2>&1 || usage "curl is needed: install curl 7.55 or later"
reader=own
! command -v jq >/dev/null 2>&1 || reader=jq
! command -v python3 >/dev/null 2>&1 || reader=python3

umask 077
tmp='' failed=''
cleanup() {
  code=$?
  [ -z "$tmp" ] || rm -rf "$tmp"
  # Exit 1 is a failed gate, set by the verdict alone: a command that fails under set -e exits 3.
  if [ "$code" -eq 1 ] && [ -z "$failed" ]; then
    say "stopped by an unexpected error (above): the gate was not checked"
    exit 3
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
tmp=$(mktemp -d "${TMPDIR:-/tmp}/direct-api.XXXXXX")
# curl reads the key from this file (-H @file): it is never in any process's arguments.
printf 'X-API-Key: %s\n' "$SERVICE_API_KEY" >"$tmp/key"

# Three readers, one output: "doc<TAB>object", "doc<TAB>other" (not one JSON object) or
# "doc<TAB>twice" (results, results.gate, results.gate.passed, status, run_id or agent_id given
# twice, however escaped), then "path<TAB>type<TAB>JSON text" (none for an object or array) for
# each of $paths in the document. python3 sees repeated members in object_pairs_hook; jq keeps
# one, so the jq reader counts them in the events of jq --stream. read_awk is the strict reader
# for machines with neither.
paths='run_id agent_id status url results.gate.passed error.message error message detail'
read_py='import json, sys
sys.stdout.reconfigure(encoding="utf-8", errors="replace")
class Obj(dict):
    pass
def pairs(items):
    obj = Obj(items)
    obj.names = [name for name, _ in items]
    return obj
try:
    doc = json.loads(sys.stdin.buffer.read().decode(), object_pairs_hook=pairs)
except Exception:
    doc = None
results = doc.get("results") if type(doc) is Obj else None
gate = results.get("gate") if type(results) is Obj else None
levels = [(doc, ("results", "status", "run_id", "agent_id")), (results, ("gate",)), (gate, ("passed",))]
twice = any(type(obj) is Obj and obj.names.count(name) > 1 for obj, names in levels for name in names)
print("doc\t" + ("other" if type(doc) is not Obj else "twice" if twice else "object"))
for path in sys.argv[1].split() if type(doc) is Obj else ():
    value = doc
    for name in path.split("."):
        value = value.get(name, Obj) if type(value) is Obj else Obj
    kind = {str: "string", bool: "boolean", int: "number", float: "number", type(None): "null"}
    if value is not Obj:
        print(path, kind.get(type(value), "object"), json.dumps(value, ensure_ascii=False) if type(value) in kind else "", sep="\t")'

read_jq='[inputs] as $events
| def members($at; $name): [$events[] | select(.[0][0:($at | length) + 1] == $at + [$name]
    and (.[0] | length) == ($at | length) + 3 - length)] | length;
  [fromstream($events[])] as $docs
| if ($docs | length) != 1 or ($docs[0] | type) != "object" then "doc\tother"
  else $docs[0] as $doc
  | ([members([]; "results", "status", "run_id", "agent_id"), members(["results"]; "gate"),
      members(["results", "gate"]; "passed")] | max) as $most
  | "doc\t" + (if $most > 1 then "twice" else "object" end),
    ($paths | split(" ")[] as $path | ($path | split(".")) as $names
    | ($doc | try getpath($names[:-1]) catch null) as $parent
    | select(($parent | type) == "object" and ($parent | has($names[-1])))
    | $parent[$names[-1]]
    | "\($path)\t\(type)\t" + if type == "object" or type == "array" then "" else tojson end)
  end'

read_awk='BEGIN { n = split(ENVIRON["JSON_PATHS"], want, " ") }
{ s = s $0 "\n" }
END {
  pos = 1
  if (ws() == "{") value("", 0)
  if (ws() != "" || !objects || bad) { print "doc\tother"; exit }
  print "doc\t" (twice ? "twice" : "object")
  for (i = 1; i <= n; i++) if ((p = want[i]) in type) field(p, type[p], type[p] ~ /^[oa]/ ? "" : text[p])
}
function ws() {
  while (index(" \t\n\r", substr(s, pos, 1)) && pos <= length(s)) pos++
  return substr(s, pos, 1)
}
function value(path, depth,    c, end, id, name, at) {
  c = ws()
  if ((c == "{" || c == "[") && depth < 500) {
    end = c == "{" ? "}" : "]"
    type[path] = c == "{" ? "object" : "array"
    id = ++objects
    pos++
    if (ws() == end) { pos++; return }
    while (!bad) {
      at = path "[]"
      if (c == "{") {
        if (ws() != "\"") { bad = 1; return }
        name = decode(string())
        if (ws() != ":") { bad = 1; return }
        pos++
        at = path == "" ? name : path "." name
        if ((id, name) in seen && at ~ /^(results|status|run_id|agent_id|results\.gate|results\.gate\.passed)$/) twice = 1
        seen[id, name] = 1
      }
      value(at, depth + 1)
      if (ws() == end) { pos++; return }
      if (substr(s, pos++, 1) != ",") bad = 1
    }
  } else if (c == "\"") {
    type[path] = "string"
    text[path] = string()
  } else if (match(substr(s, pos, 400), /^(true|false|null|-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?)/)) {
    type[path] = c == "n" ? "null" : c == "t" || c == "f" ? "boolean" : "number"
    text[path] = substr(s, pos, RLENGTH)
    pos += RLENGTH
  } else bad = 1
}
function string(    start, c) {
  start = pos++
  while ((c = substr(s, pos++, 1)) != "\"") {
    if (c == "\\") {
      c = substr(s, pos++, 1)
      if (c == "u" && substr(s, pos, 4) ~ /^[0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f]$/) pos += 4
      else if (c == "" || c == "u" || !index("\"\\/bfnrt", c)) bad = 1
    } else if (c == "" || ord[c] < 32) bad = 1
    if (bad) return "\"\""
  }
  return substr(s, start, pos - start)
}'

# Shared by the awk programs: ord, and decode, a JSON string literal to its bytes (an escaped
# surrogate to U+FFFD: python3 and jq write characters beyond U+FFFF unescaped).
decode_awk='BEGIN { for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i }
function decode(l,    out, i, c, cp) {
  l = substr(l, 2, length(l) - 2)
  for (i = 1; i <= length(l); i++) {
    if ((c = substr(l, i, 1)) != "\\") { out = out c; continue }
    c = substr(l, ++i, 1)
    if (c != "u") { out = out (index("bfnrt", c) ? substr("\b\f\n\r\t", index("bfnrt", c), 1) : c); continue }
    cp = hex(substr(l, i + 1, 4))
    i += 4
    if (cp >= 55296 && cp < 57344) cp = 65533
    if (cp < 128) out = out sprintf("%c", cp ? cp : 1)
    else if (cp < 2048) out = out sprintf("%c%c", 192 + int(cp / 64), 128 + cp % 64)
    else out = out sprintf("%c%c%c", 224 + int(cp / 4096), 128 + int(cp / 64) % 64, 128 + cp % 64)
  }
  return out
}
function hex(x,    i, n) {
  for (i = 1; i <= 4; i++) n = n * 16 + index("0123456789abcdef", tolower(substr(x, i, 1))) - 1
  return n
}'

# field shows a reader's "path<TAB>type<TAB>JSON text" (read_awk's; python3's and jq's through shown_awk) as data: strings
# decoded, no escape sequences or control characters, the key masked, at most 300 bytes; a status folded as contract §2 compares it.
show_awk='BEGIN { key = ENVIRON["SERVICE_API_KEY"] }
function field(at, kind, shown) {
  if (kind == "string") shown = show(decode(shown))
  if (at == "agent_id" || at == "status") shown = tolower(shown)
  if (at == "status") gsub(/[- ]/, "_", shown)
  print at "\t" kind "\t" shown
}
function show(x,    i) {
  gsub(/\033\[[0-?]*[ -\/]*[@-~]|\033\][^\007\033]*(\007|\033\\)/, "", x)
  gsub(/[\t\n\r]/, " ", x)
  gsub(/[\001-\037\177]|\302[\200-\237]/, "", x)
  gsub(/  +/, " ", x)
  sub(/^ /, "", x)
  sub(/ $/, "", x)
  while (key != "" && (i = index(x, key)) > 0) x = substr(x, 1, i - 1) "***" substr(x, i + length(key))
  return length(x) > 300 ? substr(x, 1, 300) "..." : x
}'
shown_awk='split($0, f, "\t") < 3 { print; next } { field(f[1], f[2], f[3]) }'

# read_answer: reads the last answer into doc and the variables below ("type:value", or empty).
read_answer() {
  doc=other id='' agent_id='' status='' passed='' link='' message=''
  case $reader in
    python3) python3 -c "$read_py" "$paths" 2>/dev/null | awk "$shown_awk$show_awk$decode_awk" ;;
    jq) jq -n -r --stream --arg paths "$paths" "$read_jq" 2>/dev/null | awk "$shown_awk$show_awk$decode_awk" ;;
    own) JSON_PATHS=$paths awk "$read_awk$show_awk$decode_awk" 2>/dev/null ;;
  esac <"$tmp/body" >"$tmp/fields" || :
  while IFS=$tab read -r name type value; do
    case $name in
      doc) doc=$type ;;
      run_id) id=$type:$value ;;
      agent_id) agent_id=$type:$value ;;
      status) status=$type:$value ;;
      results.gate.passed) passed=$type:$value ;;
      url) [ "$type" != string ] || link=$value ;;
      *) [ "$type" != string ] || [ -n "$message" ] || message=$value ;;
    esac
  done <"$tmp/fields"
}

time=$(date +%s) triggered=0 faults=0 again=1
deadline=$((time + seconds))
user_agent=$(uname -sm) # the system, a space, the machine (which may hold spaces)
lower "${user_agent%% *}"; user_agent="service-ci/$VERSION+direct-api ($lower; ${user_agent#* })"
{ read -r idempotency_key </proc/sys/kernel/random/uuid; } 2>/dev/null || idempotency_key=$(uuidgen | tr '[:upper:]' '[:lower:]')

unchecked() {
  say "NOT CHECKED: the gate of agent $agent could not be checked: $*"
  exit 3
}

# pause N [NOW]: waits as Retry-After says (seconds, bounded to 0.5 … 300); else after fault N, 50–100 %
# of min(30, 0.5 × 2^(N−1)) s; else (polling) 1 s + 15 % of the run's age ±10 %, at most 10 s (from NOW, date's reading just before, if given).
pause() {
  time=${2:-$(date +%s)}
  [ "$time" -ge "$deadline" ] || sleep "$(awk -v n="$1" -v age=$((time - triggered)) -v left=$((deadline - time)) -v seed="$$$time$1" '
    tolower($1) == "retry-after:" && $2 ~ /^[0-9]+\r?$/ { s = $2 + 0 }
    END {
      srand(seed)
      if (s != "") s = s < 0.5 ? 0.5 : s > 300 ? 300 : s
      else if (n > 0) s = (n > 7 ? 30 : 0.5 * 2 ^ (n - 1)) * (0.5 + rand() / 2)
      else if ((s = (age > 60 ? 10 : 1 + 0.15 * age) * (0.9 + rand() / 5)) > 10) s = 10
      print (s > left ? left : s)
    }' "$tmp/headers")"
  time=$(date +%s)
  if [ "$time" -ge "$deadline" ]; then
    say "TIMED OUT: no verdict for agent $agent within $minutes minutes"
    exit 4
  fi
}

# exchange METHOD URL: one request (at most 30 s, and not past the deadline counted from $time) and
# its answer read; sets again after a fault and its backoff. A refusal or a redirect stops the script.
exchange() {
  left=$((deadline - time))
  method=$1 again=1
  set -- "$2" --request "$1" --silent --show-error --connect-timeout 10 \
    --max-time "$((left < 1 ? 1 : left < 30 ? left : 30))" --max-filesize 1048576 --header @"$tmp/key" \
    --header 'Accept: application/json' --header "User-Agent: $user_agent" \
    --output "$tmp/body" --dump-header "$tmp/headers" --write-out '%{http_code}'
  case $base_url in http:*) set -- "$@" --noproxy '*' ;; esac # loopback: no proxy reads the key
  if [ "$method" = POST ]; then
    set -- "$@" --header 'Content-Type: application/json' --header "Idempotency-Key: $idempotency_key" \
      --data-binary '{"ci_metadata":{"commit_sha":null,"branch":null,"pull_request_number":null,"repository":null,"actor":null,"provider":"local","build_url":null}}'
  fi
  : >"$tmp/body"; : >"$tmp/headers"
  code=$(curl "$@" 2>"$tmp/curl-error") || :
  read_answer
  [ "$code" != 000 ] || message=$(tr -d '\000-\037' <"$tmp/curl-error")
  case $code:$method:$doc in
    000:* | 408:* | 425:* | 429:* | 5??:*) fault "HTTP $code${message:+: $message}" ;;
    2??:*:other) fault "HTTP $code that is not a JSON object" ;;
    2??:*) again='' ;;
    *) refused ;;
  esac
}

# fault WHAT: a transient fault, retried after a backoff unless it is the 10th in a row.
fault() {
  faults=$((faults + 1))
  [ "$faults" -lt 10 ] || unchecked "gave up after 10 failed attempts in a row; the last: $1"
  say "transient fault ($1); attempt $faults of 10, trying again"
  pause "$faults"
}

# refused: an answer that is not retried, with what to fix where the cause is known.
refused() {
  lower "$message"
  case $code:$method:$lower in
    3??:*) hint="check --base-url: this script follows no redirect" ;;
    401:*) hint="check that SERVICE_API_KEY holds a current API key of this service" ;;
    404:POST:*) hint="check the agent UUID and --base-url: the service knows no such agent" ;;
    *inactive*) hint="the agent is inactive: activate it in the service's dashboard" ;;
    *gate*) hint="the agent has no quality gate: configure one on the agent" ;;
    *system* | *endpoint*) hint="the agent's system has no reachable endpoint: configure it" ;;
    *) hint='' ;;
  esac
  unchecked "HTTP $code${message:+: $message}${hint:+ (fix: $hint)}"
}

# state: how contract §2 reads the last answer: going, ended (without a verdict) or finished.
state() {
  shown=${status#string:}
  case $shown in
    queued | pending | created | scheduled | running | in_progress | evaluating) state=going ;;
    error | errored | cancelled | canceled | aborted | timed_out | timeout | expired | rejected) state=ended ;;
    completed | complete | succeeded | success | finished | done | passed | failed) state=finished ;;
    *) case $passed in boolean:*) state=finished ;; *) state=going ;; esac ;;
  esac
}

# ---- trigger, poll, verdict --------------------------------------------------------------------

say "agent $agent on $base_url (JSON read with $reader)"
while [ -n "$again" ]; do exchange POST "$base_url/api/v1/agents/$agent/runs"; done
# A run id goes into the URL as it is: letters, digits and -._~ only (service-ci takes any).
run_id=.
[ "$doc:${id%%:*}" != object:string ] || run_id=${id#string:}
case $run_id in
  '' | . | .. | *[!A-Za-z0-9._~-]*) unchecked "HTTP $code without a run_id of letters, digits and -._~ (not retried: a run may have started)" ;;
esac
triggered=$(date +%s) run_link=$link faults=0 time=$triggered
say "triggered run $run_id${run_link:+: $run_link}"
state
[ "$state" != going ] || pause 0 "$triggered"
while :; do
  exchange GET "$base_url/api/v1/agents/$agent/runs/$run_id"
  [ -z "$again" ] || continue
  faults=0
  [ "$doc" != twice ] || unchecked "the answer gives a member of the verdict's path twice, which JSON readers read differently"
  case $id in
    '' | null:* | "string:$run_id") ;;
    *) unchecked "the answer is about run ${id#*:}, not the run asked for ($run_id)" ;;
  esac
  case $agent_id in
    '' | null:* | "string:$agent") ;;
    *) unchecked "the answer is about agent ${agent_id#*:}, not the agent asked for ($agent)" ;;
  esac
  state
  [ "$state" = going ] || break
  pause 0
done

where="run $run_id, status ${shown:-none}${run_link:+, $run_link}"
[ "$state" != ended ] || unchecked "the run ended without a verdict ($where)"
case $shown:$passed in
  failed:boolean:true) unchecked "the answer contradicts itself: status failed, passed true ($where)" ;;
  *:boolean:true) say "PASSED: the quality gate of agent $agent passed ($where)"; exit 0 ;;
  *:boolean:false) say "FAILED: the quality gate of agent $agent failed ($where)"; failed=1; exit 1 ;;
esac
unchecked "results.gate.passed is ${passed:-missing}, not true or false ($where)"
