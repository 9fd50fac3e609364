#!/bin/sh
# The entry point of deploy/replicas/postgres.Dockerfile: on an empty volume, a cluster whose
# superuser `selfhub` has the password in SELFHUB_PG_PASSWORD (password logins over TCP only,
# SCRAM) and a database `selfhub`; then the server, on TCP alone (the root filesystem is
# read-only: no socket file), with the arguments given (`-c port=N`, say).
set -eu
data=${PGDATA:-/var/lib/postgresql/data}
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
if [ -z "${SELFHUB_PG_PASSWORD:-}" ]; then
  echo "selfhub-postgres: set SELFHUB_PG_PASSWORD (in .env beside docker-compose.yml)" >&2
  exit 2
fi
if [ ! -s "$data/PG_VERSION" ]; then
  umask 077
  pwfile=$(mktemp)
  printf '%s\n' "$SELFHUB_PG_PASSWORD" > "$pwfile"
  "$bin/initdb" -D "$data" -U selfhub --pwfile="$pwfile" --auth-local=peer \
    --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$data/pg_hba.conf"
  echo "CREATE DATABASE selfhub" | "$bin/postgres" --single -D "$data" postgres >/dev/null
fi
exec "$bin/postgres" -D "$data" -c listen_addresses='*' -c unix_socket_directories='' "$@"
