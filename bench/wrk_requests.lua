-- bench/hotpaths.py --client wrk: replays a file of POST requests, one "path<TAB>body" a line,
-- each sent once. Thread t of WRK_THREADS takes lines t, t + WRK_THREADS, ...; WRK_AUTH, when
-- set, is every request's Authorization header. A thread that runs out stops and says so in
-- done(): its rate would be wrong (wrk divides by the whole duration), so the bench fails.
local threads = {}

function setup(thread)
  thread:set("index", #threads)
  table.insert(threads, thread)
end

local lines, position = {}, 0
local headers = {["Content-Type"] = "application/json"}
if os.getenv("WRK_AUTH") then headers["Authorization"] = os.getenv("WRK_AUTH") end

function init(args)
  local count, n = tonumber(os.getenv("WRK_THREADS")), 0
  for line in io.lines(os.getenv("WRK_FILE")) do
    if n % count == index then
      local tab = line:find("\t", 1, true)
      lines[#lines + 1] = {line:sub(1, tab - 1), line:sub(tab + 1)}
    end
    n = n + 1
  end
  exhausted = 0
end

function request()
  position = position + 1
  local line = lines[position]
  if line == nil then
    exhausted = 1
    wrk.thread:stop()
    line = lines[#lines]
  end
  return wrk.format("POST", line[1], headers, line[2])
end

function done(summary, latency, requests)
  for _, thread in ipairs(threads) do
    if thread:get("exhausted") == 1 then io.write("exhausted: the request file ran out\n") end
  end
end
