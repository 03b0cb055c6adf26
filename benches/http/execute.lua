-- wrk script: every request is one stateless MCP `tools/call` of `execute`
-- running a small program (one capability call) against the demo catalog.
-- Reports p50/p99 latency and counts responses that are not a successful
-- tool result (a non-200 status or no `"isError":false`).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-06-18"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{"source":"def main():\\n    q = shipping.quote(weight_grams=1200)\\n    return {\\"cents\\": q[\\"price_cents\\"], \\"ok\\": q[\\"price_cents\\"] > 0}\\n"}}}'

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
  io.write(string.format("calls/s %.0f, p50 %.3f ms, p99 %.3f ms, failed %d of %d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    failed, summary.requests))
end
