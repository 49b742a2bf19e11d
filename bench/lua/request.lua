-- One fixed request for wrk, from the environment; done() prints the results as one JSON line.
-- BENCH_METHOD (GET or POST), BENCH_PATH, BENCH_BODY_FILE (POST body), BENCH_A2A_VERSION.
wrk.method = os.getenv("BENCH_METHOD") or "GET"
wrk.path = os.getenv("BENCH_PATH") or "/"
local body_file = os.getenv("BENCH_BODY_FILE")
if body_file and body_file ~= "" then
  local f = assert(io.open(body_file, "rb"))
  wrk.body = f:read("*a")
  f:close()
  wrk.headers["Content-Type"] = "application/json"
end
local version = os.getenv("BENCH_A2A_VERSION")
if version and version ~= "" and version ~= "0.3" then
  wrk.headers["A2A-Version"] = version
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    '\nBENCH_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,' ..
      '"errors":%d,"non_2xx":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    errors.connect + errors.read + errors.write + errors.timeout, errors.status))
end
