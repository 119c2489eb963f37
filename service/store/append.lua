-- Append one command's events to a game, atomically, validating everything before the first write
-- (Redis does not roll back a script that fails midway).
-- KEYS: stream, meta, commands, partition log, index waiting, index playing, index finished, due, outbox,
--       for a game of a known kind that kind's index waiting, playing, finished,
--       and last, with a claim, the hash of claims it is checked against (a tournament's seats: player -> table)
-- ARGV: expected_version, command_key, command_digest, game_id, status, created_at, due_at, claim (a field of the
--       claims hash this game must hold or take, or ''), n_meta, [field, value]*n_meta, n_events, [entry]*n_events, head,
--       told (what the batch tells its players, or '': kept in the outbox with the batch's last version, field v)
local unpack = unpack or table.unpack
local expected = tonumber(ARGV[1])
local command_key, digest, game_id = ARGV[2], ARGV[3], ARGV[4]
local status, created_at, due_at = ARGV[5], ARGV[6], ARGV[7]
local claim = ARGV[8]
local n_keys, claims = #KEYS, nil
if claim ~= '' then
  claims, n_keys = KEYS[#KEYS], #KEYS - 1
end

local index = {waiting = 5, playing = 6, finished = 7}
if not index[status] then
  return redis.error_reply('ERR append: unknown status ' .. status)
end

if command_key ~= '' then
  local record = redis.call('HGET', KEYS[3], command_key)
  if record then
    -- the record is digest:first:last; the same body has exactly the recorded digest (not a prefix of it)
    if string.sub(record, 1, string.len(digest) + 1) == digest .. ':' then
      return {'duplicate', record}
    end
    return {'command_id_reused', record}
  end
end

if claims then
  local holder = redis.call('HGET', claims, claim)
  if holder and holder ~= game_id then
    return {'claimed', holder}
  end
end

local version = tonumber(redis.call('HGET', KEYS[2], 'version') or '0')
if version ~= expected then
  return {'conflict', tostring(version)}
end

local n_meta = tonumber(ARGV[9])
local at = 10
local meta = {}
for i = 1, n_meta do
  meta[#meta + 1] = ARGV[at]
  meta[#meta + 1] = ARGV[at + 1]
  at = at + 2
end
local n_events = tonumber(ARGV[at])
at = at + 1
for i = 1, n_events do
  redis.call('XADD', KEYS[1], tostring(version + i) .. '-0', 'e', ARGV[at])
  at = at + 1
end
local head = ARGV[at]
local told = ARGV[at + 1]
local last = version + n_events

redis.call('HSET', KEYS[2], 'version', last, 'head', head, 'status', status)
if n_meta > 0 then
  redis.call('HSET', KEYS[2], unpack(meta))
end
if command_key ~= '' then
  redis.call('HSET', KEYS[3], command_key, digest .. ':' .. (version + 1) .. ':' .. last)
end
if told ~= nil and told ~= '' then
  redis.call('XADD', KEYS[9], '*', 'v', last, 'e', told)  -- an id of its own: no entry already there refuses it
  redis.call('XADD', KEYS[4], '*', 'game', game_id, 'from', version + 1, 'to', last, 'told', '1')
else
  redis.call('XADD', KEYS[4], '*', 'game', game_id, 'from', version + 1, 'to', last)
end
for i = 5, 7 do
  redis.call('ZREM', KEYS[i], game_id)
end
redis.call('ZADD', KEYS[index[status]], created_at, game_id)
if n_keys == 12 then
  for i = 10, 12 do
    redis.call('ZREM', KEYS[i], game_id)
  end
  redis.call('ZADD', KEYS[index[status] + 5], created_at, game_id)
end
if claims then
  redis.call('HSET', claims, claim, game_id)
end
if due_at ~= '' then
  redis.call('ZADD', KEYS[8], due_at, game_id)
else
  redis.call('ZREM', KEYS[8], game_id)
end
return {'ok', tostring(last), tostring(version + 1)}
