-- wrk script for benches/capacity/run.sh: every request is one stateless
-- MCP `tools/call` of `execute` of a program that makes four calls in a
-- row to the loopback API (`api.get_item`, answering after a fixed
-- delay). Prints one line: executes/s, p50, p99 and the failed count — a
-- non-200 status, a body without `"isError":false`, or a socket error.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-06-18"

local source = 'def main():\\n    total = 0\\n    for i in range(4):\\n        total += api.get_item(id=i)[\\"value\\"]\\n    return {\\"total\\": total}\\n'
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{"source":"' .. source .. '"}}}'

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
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
  io.write(string.format("executes/s %.0f, p50 %.0f ms, p99 %.0f ms, failed %d of %d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    failed, summary.requests))
end
