-- bench/load/mixed.lua - wrk's requests for the load test (run.sh): one
-- connection's requests rotate through a debuginfod download, a JSON
-- symbolization of a small batch and an unwind table, so every route
-- meets the others at the connection limit.  IDs and the batch come from
-- the environment run.sh sets.
local id = os.getenv("LOAD_BUILD_ID")
local body = os.getenv("LOAD_SYMBOLIZE_BODY")
local kinds = {
    wrk.format("GET", "/buildid/" .. id .. "/debuginfo"),
    wrk.format("POST", "/api/v1/symbolize", { ["Content-Type"] = "application/json" }, body),
    wrk.format("GET", "/api/v1/unwind/" .. id),
}
local n = 0

function request()
    n = n + 1
    return kinds[n % #kinds + 1]
end
