#!/bin/sh
# The container image's checks, run on every push (ci.yml) and before an image is pushed
# (release.yml): the smoke checks of scripts/smoke.ts through `docker run --network host`,
# against the fake service on this machine's loopback, with the JUnit report written into a
# mounted directory; the image's default command (`docker run <image>` with no command, as a
# container step copied without its command runs it) cannot pass: it exits 2 with service-ci's
# one-line usage error; the image's user is not root; the image fits its size budget.
#
#   sh scripts/smoke_image.sh <image> [<version --version must print>]
#
# Needs deno and docker on PATH; run from the repository's root. Prints one line per check and
# exits 1 when any failed.
set -u

# The size budget in MB (1 MB = 1,000,000 bytes) of the image as `docker image inspect` reports
# it (uncompressed). docs/develop.md states it; tests/ship/smoke_test.ts checks that the two agree.
budget_mb=250

image=${1:?usage: sh scripts/smoke_image.sh <image> [<version>]}
version=${2:-}
status=0

check() {
  if [ "$1" = ok ]; then
    printf 'ok    %s\n' "$2"
  else
    printf 'FAIL  %s\n' "$2"
    status=1
  fi
}

reports=$(mktemp -d)
trap 'rm -rf "$reports"' EXIT
# The image's user is not the one that made the directory, and must write into it.
chmod 777 "$reports"

set -- deno task --quiet smoke --reports "$reports" --reports-as /reports
if [ -n "$version" ]; then set -- "$@" --expect-version "$version"; fi
"$@" -- docker run --rm --network host --env SERVICE_API_KEY --volume "$reports:/reports" \
  "$image" service-ci || status=1

# No command, no settings: the image's CMD. Exit 2 and the one line naming --agent, nothing else.
default_err=$reports/default-command.stderr
default_out=$(docker run --rm "$image" 2>"$default_err")
default_code=$?
default_err=$(cat "$default_err")
case $default_code:$default_out:$default_err in
  *"
"*) default_ok=fail ;;
  "2::service-ci: "*--agent*) default_ok=ok ;;
  *) default_ok=fail ;;
esac
name="the image's default command (no command given) exits 2 with the one-line usage error"
if [ "$default_ok" = ok ]; then
  check ok "$name"
else
  # Each output's first line is enough to tell what ran (--help prints pages).
  default_out=$(printf '%s\n' "$default_out" | head -n 1)
  default_err=$(printf '%s\n' "$default_err" | head -n 1)
  check fail "$name (exit $default_code; stdout \"$default_out\"; stderr \"$default_err\")"
fi

user=$(docker image inspect --format '{{.Config.User}}' "$image") || user=unknown
uid=$(docker run --rm "$image" id -u) || uid=unknown
case $user:$uid in
  :* | 0:* | root:* | *:0 | *:unknown | unknown:*)
    check fail "the image runs as a user that is not root (USER \"$user\", uid $uid)"
    ;;
  *) check ok "the image runs as a user that is not root (USER $user, uid $uid)" ;;
esac

size=$(docker image inspect --format '{{.Size}}' "$image") || size=
case $size in
  '' | *[!0-9]*) check fail "the image's size is known (docker image inspect said \"$size\")" ;;
  *)
    mb=$((size / 1000000))
    if [ "$size" -le $((budget_mb * 1000000)) ]; then
      check ok "the image is within its size budget: $mb MB of $budget_mb MB"
    else
      check fail "the image is within its size budget: $mb MB of $budget_mb MB"
    fi
    ;;
esac
exit "$status"
