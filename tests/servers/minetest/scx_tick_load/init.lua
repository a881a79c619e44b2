-- scx_tick's load for a real Minetest server (tests/servers/minetest.sh).
-- Every server step (globalstep) does a fixed amount of CPU work and writes
-- its start time to <world>/steps.log, from which the test reads the
-- server's own late steps. The work is a count of loop iterations,
-- calibrated once at load, so that a preempted step still does the same
-- work.
local work_ms = tonumber(minetest.settings:get("scx_tick_load.work_ms")) or 10
local sink = 0

local function spin(n)
	local x = sink
	for i = 1, n do
		x = (x + i) % 1000003
	end
	sink = x
end

-- iterations per millisecond: the fastest of many short wall-clock
-- windows, i.e. one the CPU was not taken from. (The process's CPU clock,
-- os.clock, counts every thread of the server: calibrated on it while
-- the map generator also ran, a "12 ms" step did 2-5 ms of work.)
local per_ms = 0
for _ = 1, 60 do
	local n, t0 = 0, minetest.get_us_time()
	while minetest.get_us_time() - t0 < 2000 do
		spin(500)
		n = n + 500
	end
	per_ms = math.max(per_ms, math.floor(n * 1000 / (minetest.get_us_time() - t0)))
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
