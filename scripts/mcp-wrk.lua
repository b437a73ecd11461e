-- wrk script for scripts/mcp-http-bench.sh: every request is the same
-- JSON-RPC call, POSTed to an MCP Streamable HTTP endpoint inside an
-- existing session (legacy handshake, as clients of today do).
--
--   MCP_SESSIONS  comma-separated session ids; wrk thread N uses the Nth
--                 (none: no Mcp-Session-Id, e.g. to flood `initialize`)
--   MCP_METHOD    e.g. resources/read
--   MCP_PARAMS    the params object as JSON
--   MCP_TOKEN     optional bearer token
local sessions = {}
for id in string.gmatch(os.getenv("MCP_SESSIONS") or "", "[^,]+") do
  table.insert(sessions, id)
end
local threads = 0

function setup(thread)
  threads = threads + 1
  if #sessions > 0 then
    thread:set("session", sessions[((threads - 1) % #sessions) + 1])
  end
end

local request_text

function init(args)
  local headers = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["Mcp-Session-Id"] = session,
  }
  local token = os.getenv("MCP_TOKEN")
  if token and token ~= "" then
    headers["Authorization"] = "Bearer " .. token
  end
  local body = '{"jsonrpc":"2.0","id":1,"method":"' .. os.getenv("MCP_METHOD")
    .. '","params":' .. os.getenv("MCP_PARAMS") .. '}'
  request_text = wrk.format("POST", nil, headers, body)
end

function request()
  return request_text
end
