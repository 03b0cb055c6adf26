-- wrk script: every request is one stateless MCP `tools/call` of `execute`
-- against the demo catalog. The program is chosen by the script's argument
-- (`wrk ... -s benches/http/execute.lua URL -- NAME`): `one` (the default,
-- benches/http/run.sh) calls one capability; `three` (deploy/e2e.sh) is an
-- agent-like program with three capability calls; `capacity`
-- (benches/capacity/run.sh) makes four calls in a row to the loopback API
-- `api.get_item`, which answers after a fixed delay; `capacity_local N`
-- makes four calls in a row to the in-process `conformance.sleep(ms=N)`
-- (benches/capacity/run.sh with CAPACITY_LOCAL=1). Prints one line: calls/s,
-- p50, p99 and the failed count — a non-200 status, a body without
-- `"isError":false`, or a socket error (connect, read, write, timeout).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-06-18"

local programs = {
  one = 'def main():\\n    q = shipping.quote(weight_grams=1200)\\n    return {\\"cents\\": q[\\"price_cents\\"], \\"ok\\": q[\\"price_cents\\"] > 0}\\n',
  capacity = 'def main():\\n    total = 0\\n    for i in range(4):\\n        total += api.get_item(id=i)[\\"value\\"]\\n    return {\\"total\\": total}\\n',
  capacity_local = 'def main():\\n    total = 0\\n    for i in range(4):\\n        total += conformance.sleep(ms=DELAY)[\\"slept\\"]\\n    return {\\"total\\": total}\\n',
  three = 'def main():\\n    light = shipping.quote(weight_grams=300)\\n    heavy = shipping.quote(weight_grams=4200)\\n    status = records.status()\\n    total = light[\\"price_cents\\"] + heavy[\\"price_cents\\"]\\n    return {\\"total\\": total, \\"records\\": status[\\"count\\"], \\"ok\\": total > 0}\\n',
}

local function body(name, delay)
  local source = programs[name or "one"]
  if source == nil then
    error("unknown program " .. name .. " (one, three, capacity or capacity_local)")
  end
  source = string.gsub(source, "DELAY", delay or "250")
  return '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{"source":"' .. source .. '"}}}'
end

wrk.body = body("one")

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  -- Read before the thread builds its request.
  wrk.body = body(args[1], args[2])
  bad = 0
end

function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"isError":false', 1, true) then
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local failed = 0
  for _, thread in ipairs(threads) do
    failed = failed + thread:get("bad")
  end
  local e = summary.errors
  failed = failed + e.connect + e.read + e.write + e.timeout
  io.write(string.format("calls/s %.0f, p50 %.3f ms, p99 %.3f ms, failed %d of %d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    failed, summary.requests))
end
