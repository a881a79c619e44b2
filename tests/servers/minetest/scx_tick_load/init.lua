-- scx_tick's load for a real Minetest server (tests/servers/minetest.sh).
-- Every server step (globalstep) does a fixed amount of CPU work and writes
-- its start time to <world>/steps.log, from which the test reads the
-- server's own late steps. The work is a count of loop iterations,
-- calibrated once at load on the process's CPU clock, so that a preempted
-- step still does the same work.
local work_ms = tonumber(minetest.settings:get("scx_tick_load.work_ms")) or 10
local sink = 0

local function spin(n)
	local x = sink
	for i = 1, n do
		x = (x + i) % 1000003
	end
	sink = x
end

-- iterations per millisecond of CPU time
local per_ms
do
	local n, c0 = 0, os.clock()
	while os.clock() - c0 < 0.2 do
		spin(10000)
		n = n + 10000
	end
	per_ms = math.floor(n / ((os.clock() - c0) * 1000))
end
local iterations = per_ms * work_ms

local log = assert(io.open(minetest.get_worldpath() .. "/steps.log", "w"))
log:write(string.format("# work_ms %d iterations %d\n", work_ms, iterations))
log:flush()

minetest.register_globalstep(function(dtime)
	local t0 = minetest.get_us_time()
	spin(iterations)
	log:write(string.format("%d %d %.3f\n", t0, minetest.get_us_time() - t0, dtime))
	log:flush()
end)
