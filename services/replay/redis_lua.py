"""Lua scripts of the Redis backend: each operation that reads-then-writes runs as one
script, so it is atomic across every process that shares the Redis server.

Keys of a job live under `K = <prefix>:{<job_id>}:` (one hash slot per job):
  K.."meta"     hash   started, consumed, dropped_stale, redelivered, depth, seq,
                       finished (reason), version
  K.."ready"    list   complete group ids, FIFO by completion
  K.."open"     set    group ids still missing members
  K.."g:"..gid  hash   trajectory_id -> encoded trajectory
  K.."gm:"..gid hash   size, n, min (oldest version), delivered, closed, v:<tid> -> version
  K.."pending"  zset   batch_id -> visibility deadline (unix seconds)
  K.."b:"..bid  string JSON list of the batch's group ids
  K.."ages"     hash   oldest version -> waiting samples
  K.."archive"  list   newest-first encoded trajectories (bounded)
  K.."pub"      string latest PolicyPublication JSON
"""

from __future__ import annotations

# Shared helpers, prepended to the scripts that need them.
_HELPERS = """
local function adjust_waiting(K, gid, sign)
  local fields = redis.call('HGETALL', K .. 'gm:' .. gid)
  local n = 0
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 2) == 'v:' then
      redis.call('HINCRBY', K .. 'ages', fields[i + 1], sign)
      n = n + 1
    end
  end
  redis.call('HINCRBY', K .. 'meta', 'depth', sign * n)
  return n
end

local function requeue(K, batch_ids)
  -- put pending batches back at the queue's front; batch_ids are oldest-first
  for i = #batch_ids, 1, -1 do
    local bk = K .. 'b:' .. batch_ids[i]
    local raw = redis.call('GET', bk)
    if raw then
      local gids = cjson.decode(raw)
      for j = #gids, 1, -1 do
        redis.call('LPUSH', K .. 'ready', gids[j])
        adjust_waiting(K, gids[j], 1)
      end
      redis.call('DEL', bk)
      redis.call('HINCRBY', K .. 'meta', 'redelivered', 1)
    end
    redis.call('ZREM', K .. 'pending', batch_ids[i])
  end
  return #batch_ids
end
"""

# ARGV: K, group_id, trajectory_id, group_size, oldest_version, blob, max_len, archive_max
# Returns 1 stored, 0 duplicate, -1 full.
PUT = """
local K, gid, tid = ARGV[1], ARGV[2], ARGV[3]
local size, oldest = tonumber(ARGV[4]), tonumber(ARGV[5])
local gm = K .. 'gm:' .. gid
if redis.call('HEXISTS', gm, 'v:' .. tid) == 1 or redis.call('HEXISTS', gm, 'closed') == 1 then
  return 0
end
local depth = tonumber(redis.call('HGET', K .. 'meta', 'depth') or '0')
if depth >= tonumber(ARGV[7]) then return -1 end
redis.call('HSET', K .. 'g:' .. gid, tid, ARGV[6])
redis.call('HSET', gm, 'v:' .. tid, oldest)
local n = redis.call('HINCRBY', gm, 'n', 1)
if n == 1 then
  redis.call('HSET', gm, 'size', size, 'min', oldest)
  redis.call('SADD', K .. 'open', gid)
elseif oldest < tonumber(redis.call('HGET', gm, 'min')) then
  redis.call('HSET', gm, 'min', oldest)
end
redis.call('HINCRBY', K .. 'meta', 'depth', 1)
redis.call('HINCRBY', K .. 'ages', oldest, 1)
local archive_max = tonumber(ARGV[8])
if archive_max > 0 then
  redis.call('LPUSH', K .. 'archive', ARGV[6])
  redis.call('LTRIM', K .. 'archive', 0, archive_max - 1)
end
if n >= tonumber(redis.call('HGET', gm, 'size')) then
  redis.call('HSET', gm, 'closed', 1)
  redis.call('SREM', K .. 'open', gid)
  redis.call('RPUSH', K .. 'ready', gid)
end
return 1
"""

# ARGV: K, version, max_staleness, batch_size, count -> {admitted, started, finished}
ADMIT = """
local K = ARGV[1]
local started = tonumber(redis.call('HGET', K .. 'meta', 'started') or '0')
if redis.call('HEXISTS', K .. 'meta', 'finished') == 1 then return {0, started, 1} end
local cap = (tonumber(ARGV[2]) + tonumber(ARGV[3]) + 1) * tonumber(ARGV[4])
local admitted = math.max(0, math.min(tonumber(ARGV[5]), cap - started))
if admitted > 0 then
  started = redis.call('HINCRBY', K .. 'meta', 'started', admitted)
end
return {admitted, started, 0}
"""

# ARGV: K, count -> {0, started, finished}
RELEASE = """
local K = ARGV[1]
local started = tonumber(redis.call('HGET', K .. 'meta', 'started') or '0')
started = math.max(0, started - tonumber(ARGV[2]))
redis.call('HSET', K .. 'meta', 'started', started)
return {0, started, redis.call('HEXISTS', K .. 'meta', 'finished')}
"""

# ARGV: K, version, max_staleness, num_groups, now, deadline, batch_id
# Returns {batch_id or '', dropped, redelivered, gid...}
TAKE = _HELPERS + """
local K = ARGV[1]
local min_fresh = tonumber(ARGV[2]) - tonumber(ARGV[3])
local want = tonumber(ARGV[4])
requeue(K, redis.call('ZRANGEBYSCORE', K .. 'pending', '-inf', ARGV[5]))
local fresh, dropped = {}, 0
while #fresh < want do
  local gid = redis.call('LPOP', K .. 'ready')
  if not gid then break end
  local n = adjust_waiting(K, gid, -1)
  if tonumber(redis.call('HGET', K .. 'gm:' .. gid, 'min')) < min_fresh then
    dropped = dropped + n
    redis.call('DEL', K .. 'g:' .. gid, K .. 'gm:' .. gid)
    local started = tonumber(redis.call('HGET', K .. 'meta', 'started') or '0')
    redis.call('HSET', K .. 'meta', 'started', math.max(0, started - n))
  else
    table.insert(fresh, gid)
  end
end
if dropped > 0 then redis.call('HINCRBY', K .. 'meta', 'dropped_stale', dropped) end
if #fresh < want then
  for j = #fresh, 1, -1 do
    redis.call('LPUSH', K .. 'ready', fresh[j])
    adjust_waiting(K, fresh[j], 1)
  end
  return {'', dropped, 0}
end
local redelivered = 0
for _, gid in ipairs(fresh) do
  if redis.call('HSETNX', K .. 'gm:' .. gid, 'delivered', 1) == 0 then redelivered = 1 end
end
local bid = ARGV[7]
redis.call('SET', K .. 'b:' .. bid, cjson.encode(fresh))
redis.call('ZADD', K .. 'pending', ARGV[6], bid)
local out = {bid, dropped, redelivered}
for _, gid in ipairs(fresh) do table.insert(out, gid) end
return out
"""

# ARGV: K, batch_id -> 1 acked, 0 unknown
ACK = """
local K, bid = ARGV[1], ARGV[2]
if redis.call('ZREM', K .. 'pending', bid) == 0 then return 0 end
local raw = redis.call('GET', K .. 'b:' .. bid)
if raw then
  for _, gid in ipairs(cjson.decode(raw)) do
    local n = tonumber(redis.call('HGET', K .. 'gm:' .. gid, 'n') or '0')
    redis.call('HINCRBY', K .. 'meta', 'consumed', n)
    redis.call('DEL', K .. 'g:' .. gid, K .. 'gm:' .. gid)
  end
  redis.call('DEL', K .. 'b:' .. bid)
end
return 1
"""

# ARGV: K -> requeued batches
RECOVER = _HELPERS + """
local K = ARGV[1]
return requeue(K, redis.call('ZRANGE', K .. 'pending', 0, -1))
"""

# ARGV: K, version, json -> 1 stored, 0 older than the current publication
PUBLISH = """
local K = ARGV[1]
local current = tonumber(redis.call('HGET', K .. 'meta', 'version') or '-1')
if tonumber(ARGV[2]) < current then return 0 end
redis.call('HSET', K .. 'meta', 'version', ARGV[2])
redis.call('SET', K .. 'pub', ARGV[3])
return 1
"""
