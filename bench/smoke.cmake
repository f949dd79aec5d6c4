# SPDX-License-Identifier: MIT
# Smoke test of dch-bench, run by ctest as `cmake -P`: a quick run must exit
# 0 and write a JSON file that parses and holds measurements and checks, and
# bad usage must exit 2. It asserts no timing: CI builds the benchmark but
# does not time it.
#
# Usage: cmake -DBENCH=<dch-bench> -DOUT=<scratch dir> -P smoke.cmake
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")

execute_process(COMMAND "${BENCH}" --quick --lookups 10000
                        --json "${OUT}/bench.json"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dch-bench --quick exited with ${rc}\n${out}\n${err}")
endif()
if(NOT out MATCHES "targets met: [0-9]+ of [0-9]+ measured")
    message(FATAL_ERROR "dch-bench printed no summary of its checks:\n${out}")
endif()
# A smoke run judges no target: its timings say "smoke", never MISSED or met.
if(out MATCHES "MISSED| met\n")
    message(FATAL_ERROR "dch-bench --quick judged a target it cannot judge:\n${out}")
endif()
if(NOT out MATCHES " smoke\n")
    message(FATAL_ERROR "dch-bench --quick marked no target as smoke:\n${out}")
endif()

# CMake's parser forgives a trailing comma; Python's, where there is one,
# checks strictly.
find_program(PYTHON3 python3)
if(PYTHON3)
    execute_process(COMMAND "${PYTHON3}" -m json.tool "${OUT}/bench.json"
        RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "bench.json is not valid JSON: ${err}")
    endif()
endif()
file(READ "${OUT}/bench.json" json)
# Every entry of `list` is non-empty and has `field` of a JSON type matching
# `types`: every measurement has a median, every check says whether it met
# its target.
function(expect_each list field types what)
    string(JSON n ERROR_VARIABLE jerr LENGTH "${json}" ${list})
    if(jerr)
        message(FATAL_ERROR "bench.json: ${list}: ${jerr}")
    endif()
    if(n EQUAL 0)
        message(FATAL_ERROR "bench.json: ${list} is empty")
    endif()
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
        string(JSON type ERROR_VARIABLE jerr TYPE "${json}" ${list} ${i} ${field})
        if(jerr OR NOT type MATCHES "^(${types})$")
            message(FATAL_ERROR "bench.json: ${list} ${i} has no ${what}")
        endif()
    endforeach()
endfunction()
expect_each(measurements median "NUMBER" "numeric median")
expect_each(checks met "BOOLEAN|NULL" "verdict")
foreach(key targets_measured targets_met targets_missed targets_smoke)
    string(JSON v ERROR_VARIABLE jerr GET "${json}" ${key})
    if(jerr)
        message(FATAL_ERROR "bench.json: ${jerr}")
    endif()
    set(${key} ${v})
endforeach()
math(EXPR sum "${targets_met} + ${targets_missed}")
if(NOT sum EQUAL targets_measured OR targets_smoke EQUAL 0)
    message(FATAL_ERROR "bench.json: targets met ${targets_met} + missed "
        "${targets_missed} != measured ${targets_measured}, or no smoke "
        "target (${targets_smoke})")
endif()

# The fresh-clone section's figures are there under their stable keys: at
# N = 100 each change carries the goal (judged only in a full run), and the
# goals at N the quick run does not reach are listed as not measured. So are
# the replica section's: all copies of a hash against its primary alone,
# with the goal, and against the floor; and the load section's, a hit
# against a bare array, with its two goals.
string(JSON n LENGTH "${json}" checks)
math(EXPR last "${n} - 1")
set(found "")
foreach(i RANGE ${last})
    string(JSON key GET "${json}" checks ${i} key)
    string(JSON goal GET "${json}" checks ${i} goal)
    string(JSON median TYPE "${json}" checks ${i} median)
    list(APPEND found "${key}:${goal}:${median}")
endforeach()
foreach(want
        publish_join_us_n100:<=:NUMBER publish_remove_us_n100:<=:NUMBER
        publish_join_over_floor_n100::NUMBER publish_remove_over_floor_n100::NUMBER
        publish_floor_us_n100::NUMBER publish_bare_us_n100::NUMBER
        publish_join_us_p2e14::NUMBER publish_bare_growth_p2e14_p2e16::NUMBER
        publish_join_over_floor_p2e16::NUMBER publish_join_growth_p2e14_p2e16::NUMBER
        publish_join_us_n1000:<=:NULL publish_remove_us_n10000:<=:NULL
        replicas_over_primary_independent_n100:<=:NUMBER
        replicas_over_primary_dependent_n100:<=:NUMBER
        replicas_over_floor_independent_n100::NUMBER
        load_hit_over_floor:<=:NUMBER load_hit_ns:<=:NUMBER
        load_hit_over_inline::NUMBER)
    list(FIND found "${want}" at)
    if(at EQUAL -1)
        message(FATAL_ERROR "bench.json: no check ${want} (key:goal:median type)")
    endif()
endforeach()

# Bad usage exits 2 before measuring anything.
execute_process(COMMAND "${BENCH}" --trials 0
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(NOT rc EQUAL 2)
    message(FATAL_ERROR "dch-bench --trials 0 exited with ${rc}, not 2")
endif()
execute_process(COMMAND "${BENCH}" --json "${OUT}/no-such-dir/bench.json"
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(NOT rc EQUAL 2)
    message(FATAL_ERROR "dch-bench with an unwritable --json exited with ${rc}, not 2")
endif()
