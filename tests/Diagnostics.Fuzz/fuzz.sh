#!/usr/bin/env bash
# Coverage-guided fuzzing of the parsers that take outside bytes, under AFL++ through SharpFuzz.
#
#   tests/Diagnostics.Fuzz/fuzz.sh [-m MINUTES] [TARGET...]   fuzz each target in turn (default: all, 10 minutes each)
#   tests/Diagnostics.Fuzz/fuzz.sh replay TARGET FILE|DIR...  run saved inputs once, uninstrumented, and print failures
#
# Targets: resp aof rdb restore config package announcement function-dump hll acl http-basic. Needs afl-fuzz (Debian: apt-get install afl++) and the .NET SDK.
# AFL's output goes to $FUZZ_OUT/<target> (default artifacts/fuzz/runs): crashes/ and hangs/ hold the
# inputs to replay; a second run resumes where the first stopped. The SharpFuzz tool and the
# instrumented builds live under artifacts/fuzz (ignored by git). Runs at nice 10, one target at a time.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$repo/artifacts/fuzz
out=${FUZZ_OUT:-$work/runs}
configuration=${FUZZ_CONFIGURATION:-Release}
timeout_ms=${FUZZ_TIMEOUT_MS:-2000}
all_targets=(resp aof rdb restore config package announcement function-dump hll acl http-basic)

build() {
    dotnet build "$here" -c "$configuration" -o "$work/build" -v q --nologo >/dev/null
}

if [ "${1:-}" = replay ]; then
    shift
    build
    exec dotnet "$work/build/Diagnostics.Fuzz.dll" "$@"
fi

minutes=10
if [ "${1:-}" = -m ]; then
    minutes=$2
    shift 2
fi
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")

command -v afl-fuzz >/dev/null || { echo "afl-fuzz not found: apt-get install afl++" >&2; exit 1; }
if [ ! -x "$work/tools/sharpfuzz" ]; then
    dotnet tool install SharpFuzz.CommandLine --version 2.3.0 --tool-path "$work/tools" >/dev/null
fi
build

# Only the parser's own code is instrumented, so AFL's map follows the parser, not the whole server.
instrument() {
    local bin=$1 target=$2
    case $target in
        resp)    "$work/tools/sharpfuzz" "$bin/Diagnostics.Server.dll" Diagnostics.Server.Protocol ;;
        aof)     "$work/tools/sharpfuzz" "$bin/Diagnostics.Server.dll" Diagnostics.Server.Persistence Diagnostics.Server.Protocol ;;
        rdb)     "$work/tools/sharpfuzz" "$bin/Diagnostics.Server.dll" Diagnostics.Server.Persistence Diagnostics.Server.DataTypes.Streams ;;
        # RESTORE's payload: one RDB value, read into the data types' packed forms.
        restore) "$work/tools/sharpfuzz" "$bin/Diagnostics.Server.dll" Diagnostics.Server.Persistence Diagnostics.Server.DataTypes ;;
        hll)     "$work/tools/sharpfuzz" "$bin/Diagnostics.Server.dll" Diagnostics.Server.DataTypes ;;
        config)  "$work/tools/sharpfuzz" "$bin/Diagnostics.Server.dll" Diagnostics.Server.Configuration ;;
        acl)     "$work/tools/sharpfuzz" "$bin/Diagnostics.Server.dll" Diagnostics.Server.Acl ;;
        http-basic) "$work/tools/sharpfuzz" "$bin/Diagnostics.Server.dll" Diagnostics.Server.Api.Access ;;
        package) "$work/tools/sharpfuzz" "$bin/Diagnostics.Doctor.dll"
                 "$work/tools/sharpfuzz" "$bin/Diagnostics.Contracts.dll" ;;
        function-dump) "$work/tools/sharpfuzz" "$bin/Diagnostics.Server.dll" Diagnostics.Server.Scripting.Functions Diagnostics.Server.Persistence ;;
        announcement) "$work/tools/sharpfuzz" "$bin/Diagnostics.Monitor.dll" Diagnostics.Monitor.Attach
                 "$work/tools/sharpfuzz" "$bin/Diagnostics.Contracts.dll" ;;
        *) echo "unknown target $target (one of: ${all_targets[*]})" >&2; exit 2 ;;
    esac >/dev/null
}

# The AOF and config targets write each input to a file: keep those writes in memory.
[ -d /dev/shm ] && export TMPDIR=/dev/shm
export AFL_SKIP_BIN_CHECK=1 AFL_NO_UI=1 AFL_NO_AFFINITY=1 AFL_SKIP_CPUFREQ=1 AFL_AUTORESUME=1
export AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_FAST_CAL=1
# The runtime reserves far more address space than it uses: AFL's -m limit cannot apply, so
# AllocationBudget checks each input's allocation in process instead.

for target in "${targets[@]}"; do
    bin=$work/$target
    rm -rf "$bin"
    cp -r "$work/build" "$bin"
    instrument "$bin" "$target"
    dictionary=()
    [ -f "$here/dict/$target.dict" ] && dictionary=(-x "$here/dict/$target.dict")
    mkdir -p "$out"
    echo "== $target: $minutes minutes, output in $out/$target"
    nice -n 10 afl-fuzz -i "$here/corpus/$target" -o "$out/$target" -t "$timeout_ms" -m none -V $((minutes * 60)) \
        "${dictionary[@]}" -- dotnet "$bin/Diagnostics.Fuzz.dll" "$target" > "$out/$target.log" 2>&1 || true
done

echo
printf '%-8s %14s %10s %8s %8s %8s\n' target execs_done exec/s corpus crashes hangs
for target in "${targets[@]}"; do
    stats=$out/$target/default/fuzzer_stats
    if [ ! -f "$stats" ]; then
        echo "$target: no fuzzer_stats (see $out/$target.log)"
        continue
    fi
    get() { awk -F' *: *' -v k="$1" '$1 == k { print $2 }' "$stats"; }
    printf '%-8s %14s %10s %8s %8s %8s\n' "$target" "$(get execs_done)" "$(get execs_per_sec)" "$(get corpus_count)" "$(get saved_crashes)" "$(get saved_hangs)"
done
echo "crashes and hangs: $out/<target>/default/{crashes,hangs}/; replay one: $0 replay <target> <file>"
