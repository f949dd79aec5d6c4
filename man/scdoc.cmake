# SPDX-License-Identifier: MIT
# Render one man page:
#   cmake -DSCDOC=scdoc -DSOURCE=page.1.scd -DPAGE=page.1 -P scdoc.cmake
# scdoc reads the source on stdin and writes roff on stdout. The page is
# written to PAGE.tmp and renamed only when all went well, so an error never
# leaves a partial page that the build would take as up to date.
foreach(var SCDOC SOURCE PAGE)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "scdoc.cmake: -D${var}=... is required")
    endif()
endforeach()
execute_process(COMMAND ${SCDOC}
    INPUT_FILE ${SOURCE}
    OUTPUT_FILE ${PAGE}.tmp
    ERROR_VARIABLE err
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    file(REMOVE ${PAGE}.tmp)
    message(FATAL_ERROR "scdoc failed on ${SOURCE} (${rc}):\n${err}")
endif()
# No hyphenation: the pages are full of identifiers and options
# (DCH_MAP_CONFIG_VERSION, --random-key) that a reader copies. scdoc writes
# .nh before .TH, but the man macros' .TH turns hyphenation back on, so the
# .nh is repeated after it.
file(READ ${PAGE}.tmp roff)
string(REGEX REPLACE "(\n[.]TH [^\n]*\n)" "\\1.nh\n" roff "${roff}")
if(NOT roff MATCHES "\n[.]TH [^\n]*\n[.]nh\n")
    file(REMOVE ${PAGE}.tmp)
    message(FATAL_ERROR "scdoc.cmake: scdoc wrote no .TH line for ${SOURCE}")
endif()
file(WRITE ${PAGE}.tmp "${roff}")
file(RENAME ${PAGE}.tmp ${PAGE})
