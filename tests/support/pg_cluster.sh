#!/bin/sh
# A throwaway PostgreSQL cluster for the store tests (docs/store.md, "Tests"):
#   pg_cluster.sh start DIR   initdb in DIR/data, a server listening only on the Unix socket DIR
#   pg_cluster.sh stop DIR    stops it and removes DIR
# Roles: postgres (superuser, trusted on the socket) and plumb_pw (a password login, for the
# wrong-password and PGPASSFILE tests; password in PLUMB_TEST_PG_PASSWORD below). initdb refuses
# to run as root: as root, the cluster is owned by and runs as `nobody`. PLUMB_PG_OPTIONS: more
# server options, after the tests' own (bench/store_bench: "-c fsync=on").
set -eu
cmd=$1
dir=$2
bin=${PLUMB_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
password=plumb-test-S3cret
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
  else
    "$@"
  fi
}
case $cmd in
start)
  "$0" stop "$dir"  # what a killed run left
  # Without PostgreSQL the tests that need it skip, saying so (support/postgres.cc).
  [ -x "$bin/initdb" ] || { echo "no initdb under /usr/lib/postgresql/*/bin: apt install postgresql" >&2; exit 0; }
  mkdir -p "$dir"
  chmod 755 "$dir"
  [ "$(id -u)" != 0 ] || chown nobody:nogroup "$dir"
  as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  printf 'local all plumb_pw scram-sha-256\nlocal all all trust\n' >"$dir/data/pg_hba.conf"
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -s \
    -o "-k $dir -c listen_addresses='' -c fsync=off -c max_connections=200 ${PLUMB_PG_OPTIONS:-}" start ||
    { cat "$dir/server.log" >&2; exit 1; }
  "$bin/psql" -h "$dir" -U postgres -d postgres -q -v ON_ERROR_STOP=1 \
    -c "CREATE ROLE plumb_pw LOGIN SUPERUSER PASSWORD '$password'"
  ;;
stop)
  [ ! -d "$dir/data" ] || as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -s stop || true
  rm -rf "$dir"
  ;;
restart)
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m fast -w -s restart
  ;;
*)
  echo "usage: pg_cluster.sh start|stop|restart DIR" >&2
  exit 2
  ;;
esac
