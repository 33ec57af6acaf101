#!/usr/bin/env bash
# Makes sure the speech tools the voice pipeline runs are installed, from Debian's packages when
# absent: Flite (the offline voice), eSpeak NG (languages Flite lacks), PocketSphinx's library and
# its generic US English model (the offline recognizer). With `--tests`, also SoX, which the test
# suite uses to make noise and to check audio. With `--bench`, also what the word-error-rate
# benchmark (bench/voice-wer.ts) reads: SoX, and a person's recorded speech with its transcript
# (Asterisk's English prompts, wideband G.722 and telephone-band WAV) and spandsp's G.722 decoder;
# those are optional: when they cannot be installed the benchmark skips their rows and says why.
# Nothing is downloaded at run time.
set -euo pipefail

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

missing=()
command -v flite >/dev/null 2>&1 || missing+=(flite)
command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
ldconfig -p 2>/dev/null | grep -q 'libpocketsphinx\.so\.3' || missing+=(libpocketsphinx3)
[ -f /usr/share/pocketsphinx/model/en-us/en-us.lm.bin ] || missing+=(pocketsphinx-en-us)
if [ "${1:-}" = "--tests" ] || [ "${1:-}" = "--bench" ]; then
  command -v sox >/dev/null 2>&1 || missing+=(sox)
fi
optional=()
if [ "${1:-}" = "--bench" ]; then
  [ -f /usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz ] || optional+=(asterisk-core-sounds-en)
  [ -f /usr/share/asterisk/sounds/en_US_f_Allison/auth-thankyou.g722 ] || optional+=(asterisk-core-sounds-en-g722)
  [ -f /usr/share/asterisk/sounds/en_US_f_Allison/auth-thankyou.wav ] || optional+=(asterisk-core-sounds-en-wav)
  ldconfig -p 2>/dev/null | grep -q 'libspandsp\.so\.2' || optional+=(libspandsp2)
fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]} from Debian packages" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
if [ "${#optional[@]}" -gt 0 ]; then
  echo "installing ${optional[*]} from Debian packages (optional)" >&2
  [ "${#missing[@]}" -gt 0 ] || $SUDO apt-get update -qq || true
  # One at a time: one that cannot be installed leaves the others (the benchmark skips its rows).
  for pkg in "${optional[@]}"; do
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$pkg" \
      >/dev/null || echo "could not install $pkg: the benchmark skips what needs it" >&2
  done
fi
echo "speech: $(flite --version 2>&1 | grep -o 'flite-[0-9.]*'), espeak-ng $(espeak-ng --version | grep -o '[0-9]\.[0-9.]*' | head -n 1), pocketsphinx en-us" >&2
