#!/usr/bin/env bash
# Makes sure the speech tools the voice pipeline runs are installed, from Debian's packages when
# absent: Flite (the offline voice), eSpeak NG (languages Flite lacks), PocketSphinx's library and
# its generic US English model (the offline recognizer). With `--tests`, also SoX, which the test
# suite uses to make noise and to check audio. Nothing is downloaded at run time.
set -euo pipefail

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

missing=()
command -v flite >/dev/null 2>&1 || missing+=(flite)
command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
ldconfig -p 2>/dev/null | grep -q 'libpocketsphinx\.so\.3' || missing+=(libpocketsphinx3)
[ -f /usr/share/pocketsphinx/model/en-us/en-us.lm.bin ] || missing+=(pocketsphinx-en-us)
if [ "${1:-}" = "--tests" ]; then
  command -v sox >/dev/null 2>&1 || missing+=(sox)
fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]} from Debian packages" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
echo "speech: $(flite --version 2>&1 | grep -o 'flite-[0-9.]*'), espeak-ng $(espeak-ng --version | grep -o '[0-9]\.[0-9.]*' | head -n 1), pocketsphinx en-us" >&2
