#!/usr/bin/env bash
# Two `relevance-gate serve` replicas sharing one redis-server behind nginx, all on loopback, in the
# foreground until Ctrl-C (docs/deploy.md). nginx runs from deploy/nginx.conf, rendered as the test
# test/server/replicas-nginx.test.ts renders it, in its own prefix under a temporary folder.
#   scripts/replicas.sh [LISTEN_PORT]          # default 8080; replicas and Redis on free ports
# RG_SERVE overrides the serve command (default: the built CLI, node dist/cli/main.js serve).
set -euo pipefail
cd "$(dirname "$0")/.."
listen="${1:-8080}"
serve="${RG_SERVE:-node dist/cli/main.js serve}"
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$nginx_bin" ] || { echo "nginx not found (apt-get install -y nginx)" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "redis-server not found" >&2; exit 1; }

work="$(mktemp -d -t rg-replicas-XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
wait_http() {
  for _ in $(seq 1 600); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "no answer from $1" >&2
  return 1
}

redis_port="$(free_port)"
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --loglevel warning &
pids+=($!)
echo "{\"cache\": {\"redisUrl\": \"redis://127.0.0.1:$redis_port\", \"redisTimeoutMs\": 50}}" >"$work/serve.json"

replicas=()
for name in a b; do
  port="$(free_port)"
  $serve --host 127.0.0.1 --port "$port" --config "$work/serve.json" --log-level warn &
  pids+=($!)
  replicas+=("127.0.0.1:$port")
done
for r in "${replicas[@]}"; do wait_http "http://$r/health/ready"; done

mkdir -p "$work/nginx/logs" "$work/nginx/tmp"
sed -e "s/__RG_LISTEN__/127.0.0.1:$listen/" -e "s/__RG_REPLICA_A__/${replicas[0]}/" \
  -e "s/__RG_REPLICA_B__/${replicas[1]}/" deploy/nginx.conf >"$work/nginx/nginx.conf"
if [ "$(id -u)" = 0 ]; then
  # As root: run nginx as nobody, owning only its prefix.
  chown -R 65534:65534 "$work/nginx"
  chmod 755 "$work"
  setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$nginx_bin" -p "$work/nginx" -c "$work/nginx/nginx.conf" -e logs/error.log &
else
  "$nginx_bin" -p "$work/nginx" -c "$work/nginx/nginx.conf" -e logs/error.log &
fi
pids+=($!)
wait_http "http://127.0.0.1:$listen/health/ready"
echo "nginx on http://127.0.0.1:$listen -> replicas ${replicas[*]}, Redis 127.0.0.1:$redis_port"
echo "logs: $work/nginx/logs (access.log names the replica of each request); Ctrl-C stops everything"
wait -n "${pids[@]}"
