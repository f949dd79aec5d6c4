# SPDX-License-Identifier: MIT
# The switches of libdch's optional parts: each DCH_WITH_<PART> is AUTO, ON
# or OFF (any CMake boolean is read as ON or OFF).
#
#   dch_part(VAR AUTO_BY_DEFAULT DOC)   declares the switch: its default is
#       AUTO when AUTO_BY_DEFAULT is true, OFF otherwise. The 0.1 names
#       DCH_BUILD_TESTS/EXAMPLES/EXPLORER/ANALYSIS, when given on the command
#       line, still set the default of their DCH_WITH_ successors.
#   dch_part_enabled(VAR FOUND WHAT OUT) decides whether the part is built:
#       OFF never; AUTO when FOUND, else one status line naming WHAT is
#       missing; ON when FOUND, else configure fails naming WHAT.

function(dch_part var auto doc)
    set(def OFF)
    if(auto)
        set(def AUTO)
    endif()
    string(REPLACE "DCH_WITH_" "" suffix "${var}")
    if(suffix STREQUAL "BENCH")
        set(suffix ANALYSIS)
    endif()
    if(DEFINED DCH_BUILD_${suffix} AND NOT DEFINED CACHE{${var}})
        if(DCH_BUILD_${suffix})
            set(def AUTO)
        else()
            set(def OFF)
        endif()
    endif()
    set(${var} ${def} CACHE STRING "Build ${doc}: AUTO, ON or OFF")
    set_property(CACHE ${var} PROPERTY STRINGS AUTO ON OFF)
    string(TOUPPER "${${var}}" value)
    if(value STREQUAL "AUTO")
        set(value AUTO)
    elseif(value)
        set(value ON)
    elseif(value MATCHES "^(OFF|NO|N|FALSE|0|IGNORE|NOTFOUND|)$|-NOTFOUND$")
        set(value OFF)
    else()
        message(FATAL_ERROR "${var} is '${${var}}': use AUTO, ON or OFF")
    endif()
    set(${var} ${value} PARENT_SCOPE)
endfunction()

function(dch_part_enabled var found what out)
    if(${var} STREQUAL "OFF")
        set(${out} FALSE PARENT_SCOPE)
    elseif(found)
        set(${out} TRUE PARENT_SCOPE)
    elseif(${var} STREQUAL "ON")
        message(FATAL_ERROR "${var}=ON, but ${what} not found (AUTO builds without it)")
    else()
        message(STATUS "${var}=AUTO: ${what} not found, so it is not built")
        set(${out} FALSE PARENT_SCOPE)
    endif()
endfunction()
