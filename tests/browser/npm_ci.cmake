# SPDX-License-Identifier: MIT
# Prepares DIR to run the browser test: copies the test script and the npm
# manifest and lock from SRC, and runs `npm ci` when the lock differs from
# the one last installed there (so the registry is reached once per lock).
# Usage: cmake -DNPM=npm -DSRC=<tests/browser> -DDIR=<build dir> -P npm_ci.cmake
file(MAKE_DIRECTORY ${DIR})
file(COPY ${SRC}/explorer.test.mjs ${SRC}/package.json DESTINATION ${DIR})
file(SHA256 ${SRC}/package-lock.json want)
set(have "")
if(EXISTS ${DIR}/installed-lock.sha256 AND EXISTS ${DIR}/node_modules/puppeteer-core)
    file(READ ${DIR}/installed-lock.sha256 have)
endif()
if(have STREQUAL want)
    message(STATUS "puppeteer-core already installed from this lock")
    return()
endif()
file(COPY ${SRC}/package-lock.json DESTINATION ${DIR})
execute_process(COMMAND ${NPM} ci --no-audit --no-fund --ignore-scripts
    WORKING_DIRECTORY ${DIR}
    TIMEOUT 280
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "npm ci failed (${rc}) in ${DIR}")
endif()
file(WRITE ${DIR}/installed-lock.sha256 ${want})
