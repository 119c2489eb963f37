-- Store one game's read models and their checkpoint at once, refusing if the checkpoint moved (compare-and-set).
-- KEYS: the game's projection hash (fields 'applied' and 'model'), the game's audit list — both in the game's slot
-- ARGV: expected checkpoint, new checkpoint, model, [audit line]*
-- Answers {1, new checkpoint}, or {0, checkpoint found} when it moved, or {-1, checkpoint} when the audit list
-- does not hold one line per applied event (something other than a projector wrote it). Nothing is written unless 1.
local unpack = unpack or table.unpack
local current = tonumber(redis.call('HGET', KEYS[1], 'applied') or '0')
if current ~= tonumber(ARGV[1]) then
  return {0, current}
end
if redis.call('LLEN', KEYS[2]) ~= current then
  return {-1, current}
end
redis.call('HSET', KEYS[1], 'applied', ARGV[2], 'model', ARGV[3])
local n = #ARGV
local i = 4
while i <= n do
  local j = math.min(i + 999, n)
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, j))
  i = j + 1
end
return {1, tonumber(ARGV[2])}
