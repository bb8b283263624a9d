#!/usr/bin/env bash
# Start Redis (127.0.0.1:6379) and PostgreSQL (127.0.0.1:5432) when they are down, with the
# commands documented for the project's machines; then wait until both answer.
set -euo pipefail

redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }
pg_up() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }

if ! redis_up; then
  echo "starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" \
    --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
fi
if ! pg_up; then
  echo "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
fi
for _ in $(seq 1 60); do
  if redis_up && pg_up; then echo "Redis and PostgreSQL are up"; exit 0; fi
  sleep 1
done
redis_up || echo "Redis did not come up on 127.0.0.1:6379 (see /var/log/redis/ci.log)" >&2
pg_up || echo "PostgreSQL did not come up on 127.0.0.1:5432 (pg_lsclusters)" >&2
exit 1
