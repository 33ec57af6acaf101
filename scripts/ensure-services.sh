#!/usr/bin/env bash
# Makes sure the local PostgreSQL and Redis that the test suite and benchmarks use are installed and
# running on 127.0.0.1 (5432 and 6379). Installs them from Debian's packages when absent. Never
# touches data: it only installs and starts.
set -euo pipefail

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

apt_install() {
  echo "installing $* from Debian packages" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  apt_install postgresql postgresql-client
  fresh_pg=1
fi
if ! pg_up; then
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  for _ in $(seq 1 30); do pg_up && break; sleep 1; done
fi
pg_up || { echo "PostgreSQL did not start on 127.0.0.1:5432" >&2; exit 1; }
if [ "${fresh_pg:-0}" = 1 ]; then
  # A fresh Debian cluster asks for passwords on TCP: give the postgres role the one the tests use.
  $SUDO -u postgres psql -q -c "ALTER USER postgres PASSWORD 'postgres'" >/dev/null
fi

if ! command -v redis-server >/dev/null 2>&1; then
  apt_install redis-server
fi
if ! redis_up; then
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
  for _ in $(seq 1 30); do redis_up && break; sleep 0.2; done
fi
redis_up || { echo "Redis did not start on 127.0.0.1:6379" >&2; exit 1; }
echo "PostgreSQL and Redis are running" >&2
