-- The environment scripts run in, as Redis 7 gives it, built once per VM before any script runs.
-- Runs with the full standard library loaded; receives the engine's C# functions in `raw`; returns the globals table scripts see (a read-only proxy)
-- and the real one (where the engine sets KEYS and ARGV).
--
-- The engine's C# functions never raise Lua errors (a longjmp across managed frames is undefined
-- behaviour in .NET): they return failures as values, and the wrappers here raise them.
local raw, version, version_num, for_functions = ...

local dbg = debug
local error, type, tostring, rawget, rawset, rawequal, setmetatable, getmetatable, next, select =
      error, type, tostring, rawget, rawset, rawequal, setmetatable, getmetatable, next, select
local string_format, math_type, math_floor = string.format, math.type, math.floor
local base_load, base_tostring, collectgarbage = load, tostring, collectgarbage
local READONLY = 'Attempt to modify a readonly table'

-- ---- Lua 5.1's names that 5.4 dropped (Redis embeds 5.1) --------------------------------------

local compat_math = {
  atan2 = function(y, x) return math.atan(y, x) end,
  pow = function(x, y) return x ^ y end,
  log10 = function(x) return math.log(x, 10) end,
  mod = math.fmod,
  cosh = function(x) return (math.exp(x) + math.exp(-x)) / 2 end,
  sinh = function(x) return (math.exp(x) - math.exp(-x)) / 2 end,
  tanh = function(x)
    if x > 20 then return 1.0 elseif x < -20 then return -1.0 end
    local a, b = math.exp(x), math.exp(-x)
    return (a - b) / (a + b)
  end,
  ldexp = function(m, e) return m * 2.0 ^ e end,
  frexp = function(x)
    if x == 0 or x ~= x or x == math.huge or x == -math.huge then return x, 0 end
    local e = math_floor(math.log(math.abs(x), 2)) + 1
    local m = x / 2.0 ^ e
    -- the logarithm can be off by one at exact powers of two
    if math.abs(m) >= 1 then m = m / 2; e = e + 1 elseif math.abs(m) < 0.5 then m = m * 2; e = e - 1 end
    return m, e
  end,
}
for k, v in next, compat_math do rawset(math, k, v) end

local table_unpack = table.unpack
rawset(table, 'getn', function(t) return #t end)
rawset(table, 'setn', function() error("'setn' is obsolete", 2) end)
rawset(table, 'maxn', function(t)
  local max = 0
  for k in next, t do
    if type(k) == 'number' and k > max then max = k end
  end
  return max
end)
rawset(table, 'foreach', function(t, f)
  for k, v in next, t do
    local r = f(k, v)
    if r ~= nil then return r end
  end
end)
rawset(table, 'foreachi', function(t, f)
  for i = 1, #t do
    local r = f(i, t[i])
    if r ~= nil then return r end
  end
end)
rawset(string, 'gfind', string.gmatch)

-- 5.1 printed every number with %.14g: 3.0 was "3". Scripts that build keys or values with
-- tostring keep the text Redis gives them (concatenation still says "3.0": see README).
local function compat_tostring(v)
  if math_type(v) == 'float' then
    return string_format('%.14g', v)
  end
  return base_tostring(v)
end

-- load and loadstring take text only: precompiled chunks can corrupt the VM.
local function text_load(chunk, name, _, env)
  if env ~= nil then return base_load(chunk, name, 't', env) end
  return base_load(chunk, name, 't')
end

-- ---- read-only tables --------------------------------------------------------------------

-- Each read-only proxy, and the real table behind it.
local protected = setmetatable({}, { __mode = 'k' })
local function refuse() error(READONLY, 2) end

-- A table scripts can read and iterate but not change: an empty proxy in front of the real one.
local function readonly(real)
  local proxy = setmetatable({}, {
    __index = real,
    __newindex = refuse,
    __pairs = function() return next, real, nil end,
    __len = function() return #real end,
    __metatable = false,
  })
  protected[proxy] = real
  return proxy
end

local function checked_rawset(t, k, v)
  if protected[t] then error(READONLY, 0) end
  return rawset(t, k, v)
end

-- rawget and next see through a proxy to its table, as they would on Redis's read-only tables.
local function checked_rawget(t, k)
  return rawget(protected[t] or t, k)
end

local function checked_next(t, k)
  return next(protected[t] or t, k)
end

-- Redis's pcall hands a script the text of an error raised as {err=...} (redis.call's).
local base_pcall = pcall
local function pcall_result(ok, ...)
  if ok then return ok, ... end
  local e = ...
  if type(e) == 'table' and type(rawget(e, 'err')) == 'string' then e = rawget(e, 'err') end
  return false, e
end
local function redis_pcall(f, ...)
  return pcall_result(base_pcall(f, ...))
end

local function checked_setmetatable(t, mt)
  if protected[t] then error(READONLY, 0) end
  return setmetatable(t, mt)
end

-- ---- the redis library ------------------------------------------------------------------------

local raw_call, raw_busy = raw.call, raw.busy

-- The library's C# functions return (value) or (error table, true); these wrappers raise the
-- error with the script's line in it, also when the script tail-calls them (`return
-- redis.call(...)`). A tail call to a Lua function replaces the script's frame, losing the line;
-- a C function's does not. So each wrapper is a coroutine.wrap function (C) whose coroutine makes
-- the calls: it yields each value, and on a failure ends with the error, which the wrapper
-- re-raises from C with the script's frame intact. The next call runs in a fresh coroutine, put
-- in the wrapper's upvalue before the failed one ends.
local co_create, co_yield = coroutine.create, coroutine.yield
local function raising(raw_function)
  local wrapper
  local function body(...)
    local value, failed = raw_function(...)
    while not failed do
      value, failed = raw_function(co_yield(value))
    end
    dbg.setupvalue(wrapper, 1, co_create(body))
    error(value, 0)
  end
  wrapper = coroutine.wrap(body)
  return wrapper
end

local redis = {
  call = raising(raw_call),
  pcall = function(...)
    return (raw_call(...))
  end,
  -- Bad arguments give an error reply, not an error, as in Redis.
  error_reply = function(message)
    if type(message) ~= 'string' then return { err = 'ERR wrong number or type of arguments' } end
    if message:sub(1, 1) == '-' then message = message:sub(2) end
    return { err = message }
  end,
  status_reply = function(message)
    if type(message) ~= 'string' then return { err = 'ERR wrong number or type of arguments' } end
    return { ok = message }
  end,
  sha1hex = raising(raw.sha1hex),
  log = raising(raw.log),
  setresp = raising(raw.setresp),
  set_repl = raising(raw.set_repl),
  acl_check_cmd = raising(raw.acl_check_cmd),
  replicate_commands = function() return true end,
  breakpoint = function() return false end,
  debug = function() end,
  acl_check_cmd = function(...)
    local allowed, failure = raw.acl_check_cmd(...)
    if failure then error({ err = failure }) end
    return allowed
  end,
  LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
  REPL_NONE = 0, REPL_AOF = 1, REPL_SLAVE = 2, REPL_REPLICA = 2, REPL_ALL = 3,
  REDIS_VERSION = version,
  REDIS_VERSION_NUM = version_num,
}

-- ---- runaway scripts --------------------------------------------------------------------------

-- Every 100,000 instructions the engine checks the clock and whether SCRIPT KILL asked for an end.
-- A killed script is stopped from Lua (an error raised here is an ordinary Lua error) and the hook
-- then fires on every line, so a pcall in the script cannot swallow the kill.
local busy_hook
busy_hook = function()
  local killed = raw_busy()
  if killed then
    dbg.sethook(busy_hook, 'l')
    error({ err = killed })
  end
end
local function arm_hook() dbg.sethook(busy_hook, '', 100000) end

-- ---- the error handler ------------------------------------------------------------------------

-- Turns any error into Redis's {err=, source=, line=} with the script's own line: the first
-- frame that is neither C nor the server's own Lua.
local function error_handler(err)
  local level = 2
  local info = dbg.getinfo(level, 'Sl')
  -- Chunks named "=..." are the server's own (this file, the cjson/cmsgpack/bit/struct wrappers).
  while info and (info.what == 'C' or info.source:sub(1, 1) == '=') do
    level = level + 1
    info = dbg.getinfo(level, 'Sl')
  end
  if type(err) ~= 'table' then
    err = { err = 'ERR ' .. tostring(err) }
  end
  if info and rawget(err, 'source') == nil then
    rawset(err, 'source', info.source)
    rawset(err, 'line', info.currentline)
  end
  return err
end

-- ---- the globals scripts see ------------------------------------------------------------------

local globals = {
  _VERSION = _VERSION,
  assert = assert, collectgarbage = collectgarbage, error = error, getmetatable = getmetatable,
  ipairs = ipairs, next = checked_next, pairs = pairs, pcall = redis_pcall, rawequal = rawequal, rawget = checked_rawget,
  rawset = checked_rawset, select = select, setmetatable = checked_setmetatable, tonumber = tonumber,
  tostring = compat_tostring, type = type, xpcall = xpcall, unpack = table_unpack,
  load = text_load, loadstring = text_load,
  gcinfo = function() return math_floor(collectgarbage('count')) end,
  __redis__err__handler = error_handler,
  coroutine = readonly(coroutine),
  math = readonly(math),
  string = readonly(string),
  table = readonly(table),
  redis = readonly(redis),
}
-- The libraries Redis compiles into its Lua (see Scripting/Libraries), opened before this runs.
for _, name in ipairs({ 'bit', 'cjson', 'cmsgpack', 'struct' }) do
  local library = rawget(_G, name)
  if library ~= nil then globals[name] = readonly(library) end
end

-- Strings index the read-only string library, and their metatable is read-only too.
local string_mt = getmetatable('')
string_mt.__index = globals.string
string_mt.__metatable = readonly({ __index = globals.string })

local function missing_global(_, name)
  error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
end
setmetatable(globals, { __index = missing_global })
local proxy_mt = {
  __index = globals,
  __newindex = refuse,
  __pairs = function() return next, globals, nil end,
  __len = function() return #globals end,
  __metatable = false,
}
local proxy = setmetatable({}, proxy_mt)
protected[proxy] = globals
rawset(globals, '_G', proxy)

-- ---- FUNCTION LOAD --------------------------------------------------------------------------

-- A library's code runs once at load with nothing but redis.register_function, redis.log and the
-- version in reach (Redis's load API): the proxy's globals are switched for the load and back,
-- so the functions it registers see the full environment when they are called.
local begin_load, end_load
if for_functions then
  local registered
  local function_flags = { ['no-writes'] = true, ['allow-oom'] = true, ['allow-stale'] = true,
                           ['no-cluster'] = true, ['allow-cross-slot-keys'] = true }
  local function fail(message) error({ err = 'ERR ' .. message }) end
  local function register_function(...)
    local count = select('#', ...)
    local name, callback, flags, description
    if count == 1 then
      local spec = ...
      if type(spec) ~= 'table' then
        fail('calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).')
      end
      for key, value in next, spec do
        if key == 'function_name' then name = value
        elseif key == 'callback' then callback = value
        elseif key == 'flags' then flags = value
        elseif key == 'description' then description = value
        else fail('unknown argument given to redis.register_function') end
      end
      if name == nil then fail('redis.register_function must get a function name argument') end
      if callback == nil then fail('redis.register_function must get a callback argument') end
      if type(callback) ~= 'function' then fail('callback argument given to redis.register_function must be a function') end
      if flags ~= nil and type(flags) ~= 'table' then
        fail('flags argument to redis.register_function must be a table representing function flags')
      end
    elseif count == 2 then
      name, callback = ...
      if type(callback) ~= 'function' then fail('second argument to redis.register_function must be a function') end
    else
      fail('wrong number of arguments to redis.register_function')
    end
    if type(name) == 'number' then name = compat_tostring(name) end
    if type(name) ~= 'string' then fail('redis.register_function must get a function name argument') end
    -- (Redis 7.0 words this error about library names, for function names too.)
    if not name:match('^[%w_]+$') then
      fail('Library names can only contain letters, numbers, or underscores(_) and must be at least one character long')
    end
    local flag_names = {}
    if flags ~= nil then
      for _, flag in ipairs(flags) do
        if not function_flags[flag] then fail('unknown flag given') end
        flag_names[#flag_names + 1] = flag
      end
    end
    for _, entry in ipairs(registered) do
      if entry.name == name then fail('Function already exists in the library') end
    end
    registered[#registered + 1] = {
      name = name, callback = callback, flags = flag_names,
      description = type(description) == 'string' and description or nil,
    }
  end
  local load_redis = setmetatable({
    register_function = register_function, log = redis.log,
    LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
    REDIS_VERSION = version, REDIS_VERSION_NUM = version_num,
  }, { __index = missing_global })
  local load_api = setmetatable({ redis = readonly(load_redis) }, { __index = missing_global })
  begin_load = function()
    registered = {}
    proxy_mt.__index = load_api
  end
  end_load = function()
    proxy_mt.__index = globals
    local result = registered
    registered = nil
    return result
  end
end

arm_hook()
return proxy, globals, error_handler, arm_hook, begin_load, end_load
