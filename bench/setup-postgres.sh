#!/usr/bin/env bash
# Installs PostgreSQL's programs where it can, for the SQL provider's
# PostgreSQL tests (tests/tests/sql_postgres.rs), which start a throwaway server
# from them (initdb, pg_ctl) on 127.0.0.1. bench/peers/setup.sh runs it.
# As root with apt-get (Debian, Ubuntu): installs the `postgresql` package.
# Elsewhere: says what to do, and the tests fail with the same advice until
# PostgreSQL is there (or DATABASE_URL names a server, or
# SKILLKIT_SKIP_POSTGRES=1 marks those tests ignored).
set -euo pipefail

found() {
    ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 ||
        { command -v pg_ctl >/dev/null && command -v initdb >/dev/null; }
}

ready() {
    where=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    echo "PostgreSQL ready: ${where:-$(dirname "$(command -v pg_ctl)")}"
}

if found; then
    ready
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing PostgreSQL (apt-get install postgresql)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    if found; then
        ready
        exit 0
    fi
fi
cat >&2 <<'TEXT'
PostgreSQL is not installed, and the PostgreSQL tests need its programs (initdb, pg_ctl):
  Debian/Ubuntu: sudo apt-get install postgresql
  Fedora:        sudo dnf install postgresql-server
  macOS:         brew install postgresql
or set DATABASE_URL=postgres://user:password@host/database to test against a server of
yours, or SKILLKIT_SKIP_POSTGRES=1 to mark those tests ignored.
TEXT
